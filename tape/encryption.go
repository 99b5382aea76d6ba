package tape

import (
	"encoding/binary"

	"github.com/vscsid/vscsid/scsi"
)

// Tape data encryption (SSC-5 4.2.24 and 8.5, SPC-5 6.40/6.41): SECURITY
// PROTOCOL IN and OUT with security protocol 20h, application-managed: the
// host sets the key with the Set Data Encryption page, the drive encrypts
// what it writes (tape.Codec: AES-256-GCM after compression) and decrypts
// what it reads. The key lives in the drive's memory only: a power-on or
// LUN reset, a daemon restart and, with CKOD, an unload clear it.
//
// The layouts are those of the pages as stenc (1.x and 2.x), Bareos's
// scsicrypto plugin and LTFS send and parse them, with the capabilities of
// an LTO drive: one algorithm, index 1, AES-256-GCM (security algorithm
// code 00010014h), a 32-byte plain key, up to 32 bytes of U-KAD and 12 of
// A-KAD per block.
//
// What this emulation leaves out, and says so in its capabilities: RAW
// decryption (RDMC_C 1: never; a RAW decryption mode is refused), EXTERNAL
// encryption mode, supplemental decryption keys, wrapped keys, and the
// reservation-based clear-key conditions (CKORP, CKORL: LIO keeps
// persistent reservations in the kernel and does not tell the daemon about
// preemption or loss). TCMU does not tell which I_T nexus sent a command,
// so the scopes (public, local, all I_T nexus) all act as one, LOCK is
// refused, and no unit attention 2A/11 can be aimed at the "other"
// nexuses.

// Security protocols and the protocol 20h page codes.
const (
	spInfo = 0x00 // security protocol information
	spTDE  = 0x20 // tape data encryption

	spInfoList = 0x0000 // supported security protocols
	spInfoCert = 0x0001 // certificate data

	tdeInSupport  = 0x0000
	tdeOutSupport = 0x0001
	tdeCaps       = 0x0010 // data encryption capabilities
	tdeKeyFormats = 0x0011 // supported key formats
	tdeMgmtCaps   = 0x0012 // data encryption management capabilities
	tdeStatus     = 0x0020 // data encryption status
	tdeNextBlock  = 0x0021 // next block encryption status
	tdeSetDE      = 0x0010 // SPOUT: set data encryption
)

// Encryption and decryption modes of the Set Data Encryption page.
const (
	encDisable = 0
	encExtern  = 1
	encEncrypt = 2

	decDisable = 0
	decRaw     = 1
	decDecrypt = 2
	decMixed   = 3
)

// The one algorithm: index 1, AES-256-GCM with a 16-byte tag.
const (
	algIndex = 1
	algCode  = 0x00010014
)

// KAD descriptor types.
const (
	kadUnauth = 0x00
	kadAuth   = 0x01
)

// cryptState is the drive's data encryption parameters as SECURITY
// PROTOCOL OUT set them.
type cryptState struct {
	scope    uint8 // 0 public, 1 local, 2 all I_T nexus (they act alike)
	encMode  uint8
	decMode  uint8
	alg      uint8 // the algorithm index set (0 with both modes disabled)
	ceem     uint8
	rdmc     uint8
	ckod     bool
	key      *Key   // nil when no key is set
	instance uint32 // key instance counter: every accepted set adds 1
}

// writeKey is the key WRITE encrypts with: nil unless encrypting.
func (c *cryptState) writeKey() *Key {
	if c.encMode == encEncrypt {
		return c.key
	}
	return nil
}

// readKey is the key the medium decrypts with: nil unless decrypting.
func (c *cryptState) readKey() *Key {
	if c.decMode == decDecrypt || c.decMode == decMixed {
		return c.key
	}
	return nil
}

// clearKey drops the key and the modes (the instance counter counts on).
func (d *Drive) clearKey() {
	d.crypt = cryptState{instance: d.crypt.instance}
	if d.med != nil {
		d.med.SetKey(nil)
	}
}

// readCheck is the decryption mode's verdict on a block about to be read:
// an encrypted block with decryption disabled is DATA PROTECT 74/01, a
// plain block while decrypting (not MIXED) 74/02. The position does not
// move: the block is still the next one.
func (d *Drive) readCheck(o Object) (scsi.Sense, bool) {
	encrypted := o.Encoding&EncEncrypted != 0
	switch {
	case encrypted && d.crypt.readKey() == nil:
		return dataProtect(scsi.UnableToDecryptData), false
	case !encrypted && d.crypt.decMode == decDecrypt:
		return dataProtect(scsi.UnencryptedDataWhileDecrypting), false
	}
	return scsi.Sense{}, true
}

// securityProtocolIn is SECURITY PROTOCOL IN (SPC-5 6.40): byte 1 SECURITY
// PROTOCOL, bytes 2-3 the page, byte 4 bit 7 INC_512 (lengths in 512-byte
// units), bytes 6-9 ALLOCATION LENGTH. A page longer than the allocation
// is cut (LTFS asks for the 4-byte header first).
func (d *Drive) securityProtocolIn(cmd *scsi.Command) scsi.Response {
	c := cmd.CDB
	alloc := int(min(c.Uint32(6), 1<<24))
	if c.Byte(4)&0x80 != 0 {
		alloc = int(min(uint64(alloc)*512, 1<<24))
	}
	page := c.Uint16(2)
	b := d.buf[:0]
	switch c.Byte(1) {
	case spInfo:
		switch page {
		case spInfoList:
			b = append(b, 0, 0, 0, 0, 0, 0, 0, 2, spInfo, spTDE)
		case spInfoCert:
			b = append(b, 0, 0, 0, 0) // no certificate
		default:
			return check(scsi.InvalidFieldSense(2, -1))
		}
	case spTDE:
		var ok bool
		if b, ok = d.tdePage(b, page); !ok {
			return check(scsi.InvalidFieldSense(2, -1))
		}
	default:
		return check(scsi.InvalidFieldSense(1, -1))
	}
	d.buf = b
	scsi.WriteParameterData(cmd.Data, b, alloc)
	return scsi.Good
}

// tdePage appends SECURITY PROTOCOL IN page code of protocol 20h to b.
func (d *Drive) tdePage(b []byte, code uint16) ([]byte, bool) {
	start := len(b)
	b = binary.BigEndian.AppendUint16(b, code)
	b = append(b, 0, 0) // PAGE LENGTH, set below
	switch code {
	case tdeInSupport:
		for _, p := range [...]uint16{tdeInSupport, tdeOutSupport, tdeCaps, tdeKeyFormats, tdeMgmtCaps, tdeStatus, tdeNextBlock} {
			b = binary.BigEndian.AppendUint16(b, p)
		}
	case tdeOutSupport:
		b = binary.BigEndian.AppendUint16(b, tdeSetDE)
	case tdeCaps:
		b = d.capabilitiesPage(b)
	case tdeKeyFormats:
		b = append(b, 0x00) // plain-text key
	case tdeMgmtCaps:
		// LOCK_C 0; CKOD_C (not CKORP_C, CKORL_C); AITN_C, LOCAL_C,
		// PUBLIC_C.
		b = append(b, 0x00, 0x04, 0x00, 0x07, 0, 0, 0, 0, 0, 0, 0, 0)
	case tdeStatus:
		b = d.statusPage(b)
	case tdeNextBlock:
		b = d.nextBlockPage(b)
	default:
		return b[:start], false
	}
	binary.BigEndian.PutUint16(b[start+2:], uint16(len(b)-start-4))
	return b, true
}

// capabilitiesPage is the data encryption capabilities page body: byte 4
// CFG_P 01b (the host sets the parameters), one algorithm descriptor.
func (d *Drive) capabilitiesPage(b []byte) []byte {
	b = append(b, 0x01)
	b = extendZero(b, 15) // bytes 5-19
	// Descriptor: index, reserved, length 0014h; byte 4: AVFMV (with a
	// cartridge the drive writes), MAC_C, DELB_C, DECRYPT_C 10b,
	// ENCRYPT_C 10b (in hardware); byte 5: AVFCLP 10b with a writable
	// cartridge, VCELB_C; max U-KAD, max A-KAD, key size; byte 12:
	// DKAD_C 11b (key descriptors allowed), RDMC_C 001b (no raw
	// decryption); the algorithm code.
	avfmv, avfclp := uint8(0), uint8(0)
	if d.state != stateEmpty && d.writable() {
		avfmv, avfclp = 0x80, 0x80
	}
	b = append(b, algIndex, 0, 0x00, 0x14, avfmv|0x20|0x10|0x08|0x02, avfclp|0x04)
	b = binary.BigEndian.AppendUint16(b, MaxUKAD)
	b = binary.BigEndian.AppendUint16(b, MaxAKAD)
	b = binary.BigEndian.AppendUint16(b, KeySize)
	b = append(b, 0xc0|0x01<<1, 0, 0, 0, 0, 0, 0, 0)
	return binary.BigEndian.AppendUint32(b, algCode)
}

// statusPage is the data encryption status page body: scopes, modes,
// algorithm index, key instance counter; byte 12 PARAMETERS CONTROL 001b
// (set by the application), VCELB (the cartridge holds encrypted blocks),
// CEEMS, RDMD; then the KAD of the key in force.
func (d *Drive) statusPage(b []byte) []byte {
	c := &d.crypt
	b = append(b, c.scope<<5|c.scope, c.encMode, c.decMode, c.alg)
	b = binary.BigEndian.AppendUint32(b, c.instance)
	b12 := uint8(0x10) | c.ceem<<1
	if d.state != stateEmpty && d.med.Info().Encrypted {
		b12 |= 0x08
	}
	b = append(b, b12, 0)
	b = extendZero(b, 10) // bytes 14-23
	if c.key != nil {
		b = appendKAD(b, kadUnauth, 1, c.key.UKAD)
		b = appendKAD(b, kadAuth, 1, c.key.AKAD)
	}
	return b
}

// nextBlockPage is the next block encryption status page body for the
// object at the current position: its logical object number, compression
// and encryption status (SSC-5 8.5.2.9: 1 not available (no cartridge,
// end of data), 2 not a block, 3 not encrypted, 5 encrypted and
// decryptable with the key in force, 6 encrypted and not: no key, or
// another one), the algorithm index and the block's KAD.
func (d *Drive) nextBlockPage(b []byte) []byte {
	if d.state == stateEmpty {
		b = extendZero(b, 8)
		return append(b, 0x01, 0, 0, 0)
	}
	b = binary.BigEndian.AppendUint64(b, d.med.Pos().Object)
	o, err := d.med.Peek()
	switch {
	case err != nil || o.Kind == KindEOD:
		return append(b, 0x11, 0, 0, 0)
	case o.Kind != KindBlock:
		return append(b, 0x22, 0, 0, 0)
	}
	comp := uint8(0x30)
	if o.Encoding&EncCompressed != 0 {
		comp = 0x40
	}
	if o.Encoding&EncEncrypted == 0 {
		return append(b, comp|0x03, 0, 0, 0)
	}
	status := uint8(0x06)
	if k := d.crypt.readKey(); k != nil {
		// Try it: one byte decodes the block or fails.
		var one [1]byte
		if _, err := d.med.ReadAt(one[:], 0); err == nil {
			status = 0x05
		}
	}
	b = append(b, comp|status, algIndex, 0x01, 0) // RDMDS: raw decryption disabled
	akad, ukad, _ := d.med.KAD()
	b = appendKAD(b, kadUnauth, 1, ukad)
	return appendKAD(b, kadAuth, 1, akad)
}

// appendKAD appends a key-associated data descriptor (type, the
// AUTHENTICATED field, length, bytes); nothing for an empty one.
func appendKAD(b []byte, typ, auth uint8, v []byte) []byte {
	if len(v) == 0 {
		return b
	}
	b = append(b, typ, auth)
	b = binary.BigEndian.AppendUint16(b, uint16(len(v)))
	return append(b, v...)
}

// securityProtocolOut is SECURITY PROTOCOL OUT (SPC-5 6.41): protocol 20h,
// page 0010h Set Data Encryption, TRANSFER LENGTH bytes 6-9 (INC_512 is
// refused). Errors in the page are ILLEGAL REQUEST 26/00 pointing at the
// field; nothing changes then.
func (d *Drive) securityProtocolOut(cmd *scsi.Command) scsi.Response {
	c := cmd.CDB
	switch {
	case c.Byte(1) != spTDE:
		return check(scsi.InvalidFieldSense(1, -1))
	case c.Uint16(2) != tdeSetDE:
		return check(scsi.InvalidFieldSense(2, -1))
	case c.Byte(4)&0x80 != 0:
		return check(scsi.InvalidFieldSense(4, 7))
	}
	n := int(c.Uint32(6))
	if n > 4096 || n > cmd.Data.Len() {
		return check(scsi.InvalidFieldSense(6, -1))
	}
	var page [4096]byte
	p := page[:n]
	if k, _ := cmd.Data.Read(p); k < n {
		return check(scsi.InvalidFieldSense(6, -1))
	}
	st, s, ok := d.parseSetDE(p)
	if !ok {
		return check(s)
	}
	st.instance = d.crypt.instance + 1
	d.crypt = st
	if d.med != nil {
		d.med.SetKey(d.crypt.readKey())
	}
	return scsi.Good
}

// parseSetDE checks a Set Data Encryption page and returns the state it
// sets, or the sense that refuses it.
func (d *Drive) parseSetDE(p []byte) (cryptState, scsi.Sense, bool) {
	bad := func(off, bit int) (cryptState, scsi.Sense, bool) {
		return cryptState{}, scsi.InvalidParameterSense(off, bit), false
	}
	if len(p) < 20 {
		return bad(2, -1)
	}
	be := binary.BigEndian
	if be.Uint16(p) != tdeSetDE {
		return bad(0, -1)
	}
	if int(be.Uint16(p[2:]))+4 > len(p) || be.Uint16(p[2:]) < 16 {
		return bad(2, -1)
	}
	p = p[:be.Uint16(p[2:])+4]
	st := cryptState{scope: p[4] >> 5, ceem: p[5] >> 6, rdmc: p[5] >> 4 & 3, ckod: p[5]&0x04 != 0, encMode: p[6], decMode: p[7]}
	switch {
	case st.scope > 2:
		return bad(4, 7)
	case p[4]&0x01 != 0: // LOCK: no nexus to lock to
		return bad(4, 0)
	case p[5]&0x08 != 0: // SDK: no supplemental decryption keys
		return bad(5, 3)
	case p[5]&0x03 != 0: // CKORP, CKORL
		return bad(5, 1)
	case st.encMode != encDisable && st.encMode != encEncrypt: // EXTERNAL, reserved
		return bad(6, -1)
	case st.decMode == decRaw || st.decMode > decMixed:
		return bad(7, -1)
	}
	needKey := st.encMode == encEncrypt || st.decMode != decDisable
	if !needKey {
		// Disabling: no algorithm, key or KAD needed; a key sent anyway
		// (stenc 1.x sends 32 zero bytes) is ignored.
		st.ceem, st.rdmc, st.ckod = 0, 0, false
		return st, scsi.Sense{}, true
	}
	switch {
	case p[8] != algIndex:
		return bad(8, -1)
	case p[9] != 0x00: // plain-text key only
		return bad(9, -1)
	case be.Uint16(p[18:]) != KeySize || len(p) < 20+KeySize:
		return bad(18, -1)
	}
	st.alg = algIndex
	key := p[20 : 20+KeySize]
	var akad, ukad []byte
	for off := 20 + KeySize; off < len(p); {
		// KAD descriptor: type, byte 1 (its reserved bits are ignored:
		// stenc 1.0.7, Debian's, leaves them uninitialised), length.
		if off+4 > len(p) {
			return bad(off, -1)
		}
		n := int(be.Uint16(p[off+2:]))
		if off+4+n > len(p) {
			return bad(off+2, -1)
		}
		v := p[off+4 : off+4+n]
		switch p[off] {
		case kadUnauth:
			if n > MaxUKAD || ukad != nil {
				return bad(off+2, -1)
			}
			ukad = v
		case kadAuth:
			if n > MaxAKAD || akad != nil || st.encMode != encEncrypt {
				return bad(off+2, -1)
			}
			akad = v
		default:
			return bad(off, -1)
		}
		off += 4 + n
	}
	k, err := NewKey(key, akad, ukad)
	if err != nil {
		return bad(18, -1)
	}
	st.key = k
	return st, scsi.Sense{}, true
}
