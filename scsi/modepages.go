package scsi

import "encoding/binary"

// Mode page codes of the standard pages built here.
const (
	ModePageControl                 = 0x0a
	ModePageInformationalExceptions = 0x1c
)

// FixedModePage returns a page_0 or sub_page mode page that is not
// changeable: MODE SENSE reports page (the whole page with its header, as
// current, default and saved value) and an all-zero changeable mask, and
// MODE SELECT accepts it only unchanged. page is retained, not copied.
func FixedModePage(page []byte) ModePage {
	var code, sub uint8
	hdr := 2
	if len(page) > 0 {
		code = page[0] & 0x3f
		if page[0]&0x40 != 0 {
			hdr = 4
			if len(page) > 1 {
				sub = page[1]
			}
		}
	}
	return ModePage{
		Code:    code,
		Subpage: sub,
		Append: func(b []byte, pc PageControl) []byte {
			if pc != PCChangeable || len(page) < hdr {
				return append(b, page...)
			}
			b = append(b, page[:hdr]...)
			return extend(b, len(page)-hdr)
		},
	}
}

// ControlModePage returns the Control mode page (0Ah, SPC-5 7.5.8) of s.
// Only D_SENSE is changeable: it reports s.SenseFormat, and a MODE SELECT
// that changes it switches the unit between fixed and descriptor sense data.
// The other fields say what vscsid does: TST 000b (one task set), QUEUE
// ALGORITHM MODIFIER 0 (commands run in order), QERR 00b, GLTSD 1 (no
// implicit saving of log parameters), UA_INTLCK_CTRL 00b, TAS 0, busy
// timeout period 0 (undefined).
func (s *SPC) ControlModePage() ModePage {
	return ModePage{
		Code: ModePageControl,
		Append: func(b []byte, pc PageControl) []byte {
			var d [12]byte
			d[0], d[1] = ModePageControl, 10
			switch pc {
			case PCChangeable:
				d[2] = 0x04 // D_SENSE
			case PCDefault:
				d[2] = 0x02 // GLTSD
			default:
				d[2] = 0x02
				if s.SenseFormat == DescriptorFormat {
					d[2] |= 0x04
				}
			}
			return append(b, d[:]...)
		},
		Select: func(page []byte) error {
			if page[2]&0x04 != 0 {
				s.SenseFormat = DescriptorFormat
			} else {
				s.SenseFormat = FixedFormat
			}
			return nil
		},
	}
}

// InformationalExceptions is the state of the Informational Exceptions
// Control mode page (1Ch, SPC-5 7.5.12). The handler owns it and decides
// what TEST and MRIE make the unit do (e.g. report 5D/FF FAILURE
// PREDICTION THRESHOLD EXCEEDED (FALSE)); the page only stores them.
type InformationalExceptions struct {
	DExcpt        bool   // disable exception control
	Test          bool   // create a test device failure
	LogErr        bool   // log informational exceptions
	MRIE          uint8  // method of reporting: 0, 2..6 (1 is obsolete)
	IntervalTimer uint32 // in 100 ms units
	ReportCount   uint32
}

// ModePage returns the Informational Exceptions Control page bound to ie.
// DEXCPT, TEST, LOGERR, MRIE, INTERVAL TIMER and REPORT COUNT are
// changeable; the values ie holds when ModePage is called are the default
// values. MODE SELECT refuses MRIE 1 or 7..15 (byte 3) and TEST together
// with DEXCPT (byte 2 bit 2), as SPC-5 requires.
func (ie *InformationalExceptions) ModePage() ModePage {
	def := *ie
	return ModePage{
		Code: ModePageInformationalExceptions,
		Append: func(b []byte, pc PageControl) []byte {
			var d [12]byte
			d[0], d[1] = ModePageInformationalExceptions, 10
			v := ie
			switch pc {
			case PCChangeable:
				d[2], d[3] = 0x0d, 0x0f
				binary.BigEndian.PutUint32(d[4:], 0xffffffff)
				binary.BigEndian.PutUint32(d[8:], 0xffffffff)
				return append(b, d[:]...)
			case PCDefault:
				v = &def
			}
			if v.DExcpt {
				d[2] |= 0x08
			}
			if v.Test {
				d[2] |= 0x04
			}
			if v.LogErr {
				d[2] |= 0x01
			}
			d[3] = v.MRIE & 0x0f
			binary.BigEndian.PutUint32(d[4:], v.IntervalTimer)
			binary.BigEndian.PutUint32(d[8:], v.ReportCount)
			return append(b, d[:]...)
		},
		Select: func(page []byte) error {
			mrie := page[3] & 0x0f
			if mrie == 1 || mrie > 6 {
				return InvalidParameter(3, 3)
			}
			if page[2]&0x0c == 0x0c {
				return InvalidParameter(2, 2) // TEST with DEXCPT
			}
			ie.DExcpt = page[2]&0x08 != 0
			ie.Test = page[2]&0x04 != 0
			ie.LogErr = page[2]&0x01 != 0
			ie.MRIE = mrie
			ie.IntervalTimer = binary.BigEndian.Uint32(page[4:])
			ie.ReportCount = binary.BigEndian.Uint32(page[8:])
			return nil
		},
	}
}
