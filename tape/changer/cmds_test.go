package changer

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/tape/cartridge"
)

func TestInquiry(t *testing.T) {
	l := newLab(t, "personality=ibm-ts3100;serial=LIB0001", "A00001")
	std := l.ok(cdb(0x12, 0, 0, 0, 74, 0), 74)
	wantBytes(t, "standard inquiry head", std[:8], hexBytes("08 80 06 12 45 00 00 00"))
	if got := string(std[8:36]); got != "IBM     3573-TL         6.50" {
		t.Errorf("identity %q", got)
	}
	wantBytes(t, "version descriptors", std[58:64], hexBytes("00a0 0460 0480"))
	wantBytes(t, "VPD 00h", l.ok(cdb(0x12, 1, 0x00, 0, 255, 0), 255), hexBytes("08 00 00 03 00 80 83"))
	wantBytes(t, "VPD 80h", l.ok(cdb(0x12, 1, 0x80, 0, 255, 0), 255), append(hexBytes("08 80 00 07"), "LIB0001"...))
	vpd83 := l.ok(cdb(0x12, 1, 0x83, 0, 255, 0), 255)
	wantBytes(t, "VPD 83h NAA", vpd83[:8], hexBytes("08 83 00 1f 01 03 00 08"))
	if !strings.HasSuffix(string(vpd83), "IBM     LIB0001") {
		t.Errorf("VPD 83h T10 designator: % x", vpd83)
	}
	if s := l.fail(cdb(0x12, 0, 0x80, 0, 255, 0)); s != "700005000000000a00000000240000c00002" {
		t.Errorf("INQUIRY page without EVPD: %s", s)
	}
}

func TestTestUnitReadyAndRequestSense(t *testing.T) {
	l := newLab(t, "", "A00001")
	l.c.Reset()
	wantBytes(t, "request sense reports the reset", l.ok(cdb(0x03, 0, 0, 0, 18, 0), 18),
		hexBytes("70 00 06 00 00 00 00 0a 00 00 00 00 29 00 00 00 00 00"))
	l.ok(cdb(0x00, 0, 0, 0, 0, 0), 0)
	wantBytes(t, "request sense, nothing pending", l.ok(cdb(0x03, 1, 0, 0, 8, 0), 8), hexBytes("72 00 00 00 00 00 00 00"))
	if err := l.c.Close(); err != nil {
		t.Fatal(err)
	}
	l.wantSense(cdb(0x00, 0, 0, 0, 0, 0), scsi.NotReady, scsi.LogicalUnitNotReadyCause)
}

func TestModeSense(t *testing.T) {
	l := newLab(t, "slots=3;mailslots=1;drives=tape0+tape1")
	// mtx and ch: MODE SENSE(6) DBD=1 of the element address assignment page.
	wantBytes(t, "1Dh, DBD", l.ok(cdb(0x1a, 0x08, 0x1d, 0, 255, 0), 255),
		hexBytes("17 00 00 00  1d 12 0000 0001 1000 0003 0010 0001 0001 0002 0000"))
	wantBytes(t, "1Eh (10)", l.ok(cdb(0x5a, 0x08, 0x1e, 0, 0, 0, 0, 0, 255, 0), 255),
		hexBytes("00 0a 00 00 00 00 00 00  1e 02 00 00"))
	wantBytes(t, "1Fh", l.ok(cdb(0x1a, 0, 0x1f, 0, 255, 0), 255),
		hexBytes("17 00 00 00  1f 12 0e 00 0e 0e 0e 0e 00 00 00 00 00 0e 0e 0e 00 00 00 00"))
	all := l.ok(cdb(0x1a, 0, 0x3f, 0, 255, 0), 255)
	if len(all) != 4+12+20+4+20 || all[4] != 0x0a || all[16] != 0x1d || all[36] != 0x1e || all[40] != 0x1f {
		t.Errorf("3Fh: % x", all)
	}
	wantBytes(t, "truncated to the allocation length", l.ok(cdb(0x1a, 0x08, 0x1d, 0, 6, 0), 255), hexBytes("17 00 00 00 1d 12"))
	l.wantSense(cdb(0x1a, 0, 0x1c, 0, 255, 0), scsi.IllegalRequest, scsi.InvalidFieldInCDB)
	l.wantSense(cdb(0x1a, 0, 0xdd, 0, 255, 0), scsi.IllegalRequest, scsi.SavingParametersNotSupported)
}

// TestReadElementStatusAll is the whole generic library, every type, no
// tags: pages in address order (transport 0, drive 1, mail 10h, storage
// 1000h), 16-byte descriptors.
func TestReadElementStatusAll(t *testing.T) {
	l := newLab(t, "slots=3;mailslots=1;drives=tape0", "A00001", "A00002")
	got := l.ok(res(0, false, 0, 0xffff, false, 1024), 1024)
	want := hexBytes(`
		0000 0006 00 000080
		01 00 0010 00 000010  0000 00 00 0000 000000 00 0000 00000000
		04 00 0010 00 000010  0001 08 00 0000 800000 00 0000 00000000
		03 00 0010 00 000010  0010 38 00 0000 000000 00 0000 00000000
		02 00 0010 00 000030  1000 09 00 0000 000000 00 0000 00000000
		                      1001 09 00 0000 000000 00 0000 00000000
		                      1002 08 00 0000 000000 00 0000 00000000`)
	wantBytes(t, "element status", got, want)

	// Allocation length: the header still counts the whole report.
	short := l.ok(res(0, false, 0, 0xffff, false, 8), 1024)
	wantBytes(t, "header only", short, want[:8])
	// A filter, a starting address and a number of elements.
	wantBytes(t, "storage from 1001h, one element", l.ok(res(2, false, 0x1001, 1, false, 1024), 1024), hexBytes(`
		1001 0001 00 000018
		02 00 0010 00 000010  1001 09 00 0000 000000 00 0000 00000000`))
	wantBytes(t, "all types from 0002h, two elements: mail then storage", l.ok(res(0, false, 2, 2, false, 1024), 1024), hexBytes(`
		0010 0002 00 000030
		03 00 0010 00 000010  0010 38 00 0000 000000 00 0000 00000000
		02 00 0010 00 000010  1000 09 00 0000 000000 00 0000 00000000`))
	wantBytes(t, "no element asked for", l.ok(res(0, false, 0, 0, false, 1024), 1024), hexBytes("0000 0000 00 000000"))
	l.wantSense(res(4, false, 2, 1, false, 1024), scsi.IllegalRequest, scsi.InvalidElementAddress)
	// A type the library has none of: an empty report, not an error.
	none := newLab(t, "slots=2;mailslots=0")
	wantBytes(t, "no drives", none.ok(res(4, false, 1, 0x10, false, 1024), 1024), hexBytes("0001 0000 00 000000"))
	wantBytes(t, "no mail slots", none.ok(res(3, true, 0x10, 1, false, 1024), 1024), hexBytes("0010 0000 00 000000"))
	l.wantSense(res(5, false, 0, 1, false, 1024), scsi.IllegalRequest, scsi.InvalidFieldInCDB)
}

// TestReadElementStatusTagsAndDVCID: volume tags (barcode, 32 bytes
// space-padded, then reserved and sequence number), SValid with the
// source of a loaded drive, and both DVCID styles.
func TestReadElementStatusTagsAndDVCID(t *testing.T) {
	serialOnly := map[string]string{"generic": "02 00 00 20", "hp-msl-g3": "02 00 00 14", "spectra-tseries": "02 00 00 20"}
	for i := range personalities {
		tt := struct{ pers, dvcid string }{personalities[i].Name, serialOnly[personalities[i].Name]}
		if tt.dvcid == "" {
			tt.dvcid = "02 01 00 22" + hex.EncodeToString([]byte("VSCSI   VTAPE           "))
		}
		t.Run(tt.pers, func(t *testing.T) {
			l := newLab(t, "personality="+tt.pers+";slots=2;mailslots=0;drives=tape0", "A00001")
			p := l.c.Personality()
			l.ok(move(p.Storage, p.Drive), 0)
			serial := l.drives["tape0"].UnitSerial()
			n := p.SerialLen
			id := tt.dvcid + hex.EncodeToString([]byte(serial+strings.Repeat(" ", n-len(serial))))
			dl := 12 + 36 + 4 + p.dvcidLen()
			want := hexBytes(hex.EncodeToString([]byte{byte(p.Drive >> 8), byte(p.Drive), 0, 1, 0, 0, 0, byte(8 + dl)}) +
				"04 80" + hex.EncodeToString([]byte{0, byte(dl)}) + "00 0000" + hex.EncodeToString([]byte{byte(dl)}) +
				hex.EncodeToString([]byte{byte(p.Drive >> 8), byte(p.Drive)}) + "09 00 0000 800000 80" + // NOT BUS
				hex.EncodeToString([]byte{byte(p.Storage >> 8), byte(p.Storage)}) + tag("A00001") + id)
			wantBytes(t, "drive, VOLTAG and DVCID", l.ok(res(4, true, 0, 1, true, 1024), 1024), want)

			st := l.ok(res(2, true, 0, 9, true, 1024), 1024)
			wantBytes(t, "storage page: PVOLTAG, 52-byte descriptors, no identifier", st[:16],
				append([]byte{byte(p.Storage >> 8), byte(p.Storage)}, hexBytes("0002 00 000070  02 80 0034 00 000068")...))
			if got := hex.EncodeToString(st[16+12 : 16+52]); got != strings.Repeat("00", 40) {
				t.Errorf("empty slot's tag and identifier: %s", got)
			}
			if st[16+52+2] != 0x08 || st[16+52+9] != 0 {
				t.Errorf("emptied slot flags % x", st[16+52:16+52+12])
			}
		})
	}
}

func TestMoveMedium(t *testing.T) {
	l := newLab(t, "slots=3;mailslots=1;drives=tape0+tape1", "A00001", "A00002", "A00003")
	d0 := l.drives["tape0"]
	// Storage 1000h → drive 1: the drive loads it and says so itself.
	l.ok(move(0x1000, 0x0001), 0)
	if s := d0.Stats(); !s.Loaded || s.Barcode != "A00001" {
		t.Fatalf("drive after the move: %+v", s)
	}
	if r := d0.HandleCommand(t.Context(), &scsi.Command{CDB: cdb(0, 0, 0, 0, 0, 0), Data: scsi.NewBuffer()}); r.Sense.ASC != scsi.PowerOnResetOrBusDeviceReset && r.Sense.ASC != scsi.NotReadyToReadyChange {
		t.Errorf("drive's first command after the load: %+v", r)
	}
	if at := l.where("A00001"); at != (Loc{DataTransfer, 0}) {
		t.Fatalf("A00001 at %+v", at)
	}
	// The conditions.
	l.wantSense(move(0x1000, 0x1002), scsi.IllegalRequest, scsi.MediumSourceElementEmpty)
	l.wantSense(move(0x1001, 0x0001), scsi.IllegalRequest, scsi.MediumDestinationElementFull)
	l.wantSense(move(0x1001, 0x1002+1), scsi.IllegalRequest, scsi.InvalidElementAddress)
	if s := l.fail(move(0x1001, 0x1003)); s != "700005000000000a00000000210100c00006" {
		t.Errorf("invalid destination: %s, want the field pointer at byte 6", s)
	}
	if s := l.fail(move(0x0000, 0x1002)); s != "700005000000000a00000000210100c00004" {
		t.Errorf("the transport as source: %s", s)
	}
	bad := move(0x1001, 0x1002)
	bad[2], bad[3] = 0x10, 0x00
	if s := l.fail(bad); s != "700005000000000a00000000210100c00002" {
		t.Errorf("a storage element as transport: %s", s)
	}
	inv := move(0x1001, 0x1002)
	inv[10] = 1
	if s := l.fail(inv); s != "700005000000000a00000000240000c8000a" {
		t.Errorf("INVERT: %s", s)
	}
	// Drive → drive: unloaded from one, loaded into the other; the source
	// is still the storage slot it came from.
	l.ok(move(0x0001, 0x0002), 0)
	if d0.Stats().Barcode != "" || l.drives["tape1"].Stats().Barcode != "A00001" {
		t.Fatal("drive to drive did not move the cartridge")
	}
	if s := l.c.Inventory().Drives[1].Source; s == nil || *s != (Loc{Storage, 0}) {
		t.Errorf("source after drive to drive: %+v", s)
	}
	// Drive → mail slot (autounload), and the move is on disk.
	l.ok(move(0x0002, 0x0010), 0)
	if l.drives["tape1"].Stats().Barcode != "" {
		t.Fatal("not unloaded")
	}
	b, err := os.ReadFile(l.c.store.journalPath())
	if err != nil || !strings.Contains(string(b), `{"at":{"type":"mail","index":0},"slot":{"barcode":"A00001"`) {
		t.Errorf("inventory journal after the move: %s, %v", b, err)
	}
	l.open()
	if at := l.where("A00001"); at != (Loc{ImportExport, 0}) {
		t.Errorf("after a restart A00001 is at %+v", at)
	}
}

// exchangeCDB builds EXCHANGE MEDIUM with the default transport.
func exchangeCDB(src, first, second uint16) []byte {
	return cdb(0xa6, 0, 0, 0, byte(src>>8), byte(src), byte(first>>8), byte(first), byte(second>>8), byte(second), 0, 0)
}

// TestExchangeMedium: the swap mtx exchange sends (second destination =
// source), a three-element rotation, with a drive at either end, and the
// conditions.
func TestExchangeMedium(t *testing.T) {
	l := newLab(t, "slots=4;mailslots=1;drives=tape0+tape1", "A00001", "A00002", "A00003")
	d0 := l.drives["tape0"]
	l.ok(exchangeCDB(0x1000, 0x1001, 0x1000), 0) // swap slots 1 and 2
	if l.where("A00001") != (Loc{Storage, 1}) || l.where("A00002") != (Loc{Storage, 0}) {
		t.Fatalf("swap: A00001 at %+v, A00002 at %+v", l.where("A00001"), l.where("A00002"))
	}
	// Into a loaded drive: its cartridge goes back out, the other one in.
	l.ok(move(0x1002, 0x0001), 0)
	l.ok(exchangeCDB(0x1000, 0x0001, 0x1003), 0) // A00002 into drive 1, A00003 to slot 4
	if s := d0.Stats(); s.Barcode != "A00002" || !s.Loaded {
		t.Fatalf("drive after the exchange: %+v", s)
	}
	if l.where("A00003") != (Loc{Storage, 3}) {
		t.Fatalf("A00003 at %+v", l.where("A00003"))
	}
	// Drive 2 is empty: it cannot be the first destination.
	l.wantSense(exchangeCDB(0x0001, 0x0002, 0x1000), scsi.IllegalRequest, scsi.MediumSourceElementEmpty)
	l.wantSense(exchangeCDB(0x1000, 0x1001, 0x1002), scsi.IllegalRequest, scsi.MediumSourceElementEmpty)
	l.wantSense(exchangeCDB(0x1001, 0x1003, 0x0001), scsi.IllegalRequest, scsi.MediumDestinationElementFull)
	if s := l.fail(exchangeCDB(0x1001, 0x1001, 0x1002)); s != "700005000000000a00000000210100c00006" {
		t.Errorf("first destination = source: %s", s)
	}
	if s := l.fail(exchangeCDB(0x1001, 0x1003, 0x1003)); s != "700005000000000a00000000210100c00008" {
		t.Errorf("second destination = first: %s", s)
	}
	inv := exchangeCDB(0x1001, 0x1003, 0x1001)
	inv[10] = 0x02
	if s := l.fail(inv); s != "700005000000000a00000000240000c9000a" {
		t.Errorf("INV1: %s", s)
	}
	// Every cartridge is in exactly one element, on disk too.
	l.open()
	for bc, want := range map[string]Loc{"A00001": {Storage, 1}, "A00002": {DataTransfer, 0}, "A00003": {Storage, 3}} {
		if at := l.where(bc); at != want {
			t.Errorf("after a restart %s at %+v, want %+v", bc, at, want)
		}
	}
}

func TestMoveOutOfLoadedDrive(t *testing.T) {
	t.Run("strict", func(t *testing.T) {
		l := newLab(t, "slots=2;mailslots=0;drives=tape0;autounload=0", "A00001")
		l.ok(move(0x1000, 0x0001), 0)
		if got := l.ok(res(4, false, 1, 1, false, 64), 64); got[16+2] != 0x01 {
			t.Errorf("loaded drive in strict mode: flags %02x, want FULL without ACCESS", got[16+2])
		}
		if s := l.fail(move(0x0001, 0x1001)); s != "700005000000000a00000000530200000000" {
			t.Errorf("strict: %s", s)
		}
		if err := l.drives["tape0"].Unload(); err != nil {
			t.Fatal(err)
		}
		l.ok(move(0x0001, 0x1001), 0)
		if at := l.where("A00001"); at != (Loc{Storage, 1}) {
			t.Errorf("A00001 at %+v", at)
		}
	})
	t.Run("drive prevents removal", func(t *testing.T) {
		l := newLab(t, "slots=2;mailslots=0;drives=tape0", "A00001")
		l.ok(move(0x1000, 0x0001), 0)
		d := l.drives["tape0"]
		for range 3 { // the drive's unit attentions, then PREVENT
			d.HandleCommand(t.Context(), &scsi.Command{CDB: cdb(0x1e, 0, 0, 0, 1, 0), Data: scsi.NewBuffer()})
		}
		if s := l.fail(move(0x0001, 0x1001)); s != "700005000000000a00000000530300000000" {
			t.Errorf("prevented: %s", s)
		}
		if at := l.where("A00001"); at != (Loc{DataTransfer, 0}) {
			t.Errorf("A00001 at %+v", at)
		}
	})
	t.Run("drive not there", func(t *testing.T) {
		l := newLab(t, "slots=2;mailslots=0;drives=tape0", "A00001")
		delete(l.drives, "tape0")
		l.wantSense(move(0x1000, 0x0001), scsi.HardwareError, scsi.MediumLoadOrEjectFailed)
		l.where("A00001")
	})
}

func TestImportExport(t *testing.T) {
	l := newLab(t, "slots=1;mailslots=2", "A00001", "A00002")
	// A00002 found no storage slot: reconciliation put it in mail slot 0.
	if at := l.where("A00002"); at != (Loc{ImportExport, 0}) {
		t.Fatalf("A00002 at %+v", at)
	}
	bc, err := l.c.Export(0)
	if err != nil || bc != "A00002" {
		t.Fatalf("Export = %q, %v", bc, err)
	}
	l.wantSense(cdb(0, 0, 0, 0, 0, 0), scsi.UnitAttention, scsi.ImportOrExportElementAccessed)
	l.ok(cdb(0x07, 0, 0, 0, 0, 0), 0) // INITIALIZE ELEMENT STATUS does not bring it back
	if inv := l.c.Inventory(); len(inv.Barcodes()) != 1 || inv.Outside[0] != "A00002" {
		t.Fatal("exported cartridge came back")
	}
	if _, err := l.c.Export(0); !errors.Is(err, ErrEmptySlot) {
		t.Errorf("Export of an empty slot: %v", err)
	}
	if _, err := l.c.Import("A00001"); !errors.Is(err, ErrInLibrary) {
		t.Errorf("Import of a cartridge in the library: %v", err)
	}
	if _, err := l.c.Import("NOSUCH"); err == nil {
		t.Error("Import of a missing image")
	}
	l.ok(cdb(0x1e, 0, 0, 0, 1, 0), 0) // PREVENT
	if _, err := l.c.Import("A00002"); !errors.Is(err, ErrPrevented) {
		t.Errorf("Import while prevented: %v", err)
	}
	l.ok(cdb(0x1e, 0, 0, 0, 0, 0), 0)
	l.wantSense(cdb(0x1e, 0, 0, 0, 2, 0), scsi.IllegalRequest, scsi.InvalidFieldInCDB)
	if i, err := l.c.Import("A00002"); err != nil || i != 0 {
		t.Fatalf("Import = %d, %v", i, err)
	}
	l.wantSense(cdb(0, 0, 0, 0, 0, 0), scsi.UnitAttention, scsi.ImportOrExportElementAccessed)
	got := l.ok(res(3, true, 0, 1, false, 1024), 1024)
	if got[16+2] != 0x3b {
		t.Errorf("imported mail slot flags %02x, want INENAB EXENAB ACCESS IMPEXP FULL", got[16+2])
	}
	l.open()
	if at := l.where("A00002"); at != (Loc{ImportExport, 0}) {
		t.Errorf("after restart A00002 at %+v", at)
	}
}

func TestInitializeElementStatus(t *testing.T) {
	l := newLab(t, "slots=3;mailslots=0", "A00001")
	if err := os.Remove(l.dir + "/A00001.vtape"); err != nil {
		t.Fatal(err)
	}
	if err := createImage(l.dir, "B00001"); err != nil {
		t.Fatal(err)
	}
	l.ok(cdb(0x37, 0x01, 0x10, 0x00, 0, 0, 0, 1, 0, 0), 0)
	inv := l.c.Inventory()
	if inv.Storage[0].Barcode != "B00001" || len(inv.Barcodes()) != 1 {
		t.Errorf("after INITIALIZE ELEMENT STATUS WITH RANGE: %+v", inv)
	}
	l.wantSense(cdb(0x37, 0x01, 0x20, 0x00, 0, 0, 0, 1, 0, 0), scsi.IllegalRequest, scsi.InvalidElementAddress)
	l.ok(cdb(0x2b, 0, 0, 0, 0x10, 0x02, 0, 0, 0, 0), 0) // POSITION TO ELEMENT
	l.wantSense(cdb(0x2b, 0, 0, 0, 0x10, 0x03, 0, 0, 0, 0), scsi.IllegalRequest, scsi.InvalidElementAddress)
	l.wantSense(cdb(0x2b, 0, 0, 0, 0x10, 0x02, 0, 0, 1, 0), scsi.IllegalRequest, scsi.InvalidFieldInCDB)
}

func TestReportSupportedOpCodes(t *testing.T) {
	l := newLab(t, "")
	got := l.ok(cdb(0xa3, 0x0c, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0), 256)
	var ops []byte
	for i := 4; i+8 <= len(got); i += 8 {
		ops = append(ops, got[i])
	}
	wantBytes(t, "opcodes", ops, hexBytes("00 03 07 12 15 16 17 1a 1b 1d 1e 2b 37 4d 55 5a 5e 5f a0 a3 a5 a6 b8"))
	wantBytes(t, "MOVE MEDIUM usage", l.ok(cdb(0xa3, 0x0c, 0x01, 0xa5, 0, 0, 0, 0, 1, 0, 0, 0), 256),
		hexBytes("00 03 00 0c a5 00 ff ff ff ff ff ff 00 00 01 04"))
	for op, name := range map[scsi.CommandID]string{0x07: "initialize_element_status", 0x2b: "position_to_element",
		0x37: "initialize_element_status_with_range", 0xb8: "read_element_status", 0xa3: "report_supported_opcodes", 0x08: ""} {
		if got := l.c.CommandName(op); got != name {
			t.Errorf("CommandName(%#02x) = %q, want %q", op, got, name)
		}
	}
	l.wantSense(cdb(0x08, 0, 0, 0, 0, 0), scsi.IllegalRequest, scsi.InvalidCommandOperationCode)
	l.wantSense(cdb(0xb8, 0, 0), scsi.IllegalRequest, scsi.InvalidFieldInCDB)
}

func TestDSense(t *testing.T) {
	l := newLab(t, "dsense=1")
	if s := l.fail(move(0x1000, 0x1001)); s != "72053b0e00000000" {
		t.Errorf("descriptor sense: %s", s)
	}
}

// TestOperatorMove: the front panel's move loads and unloads drives like
// MOVE MEDIUM, reports the SCSI condition it hit and raises 28/00.
func TestOperatorMove(t *testing.T) {
	l := newLab(t, "slots=3;mailslots=1;drives=tape0", "A00001", "A00002")
	if err := l.c.Move(Loc{Storage, 0}, Loc{DataTransfer, 0}); err != nil {
		t.Fatalf("Move slot 0 → drive 0: %v", err)
	}
	if bc := l.drives["tape0"].Stats().Barcode; bc != "A00001" {
		t.Fatalf("drive holds %q after the move", bc)
	}
	l.wantSense(cdb(0, 0, 0, 0, 0, 0), scsi.UnitAttention, scsi.NotReadyToReadyChange)
	var se *scsi.Error
	if err := l.c.Move(Loc{Storage, 1}, Loc{DataTransfer, 0}); !errors.As(err, &se) || se.Sense.ASC != scsi.MediumDestinationElementFull {
		t.Errorf("Move into a full drive: %v", err)
	}
	if err := l.c.Move(Loc{Storage, 2}, Loc{Storage, 0}); !errors.As(err, &se) || se.Sense.ASC != scsi.MediumSourceElementEmpty {
		t.Errorf("Move from an empty slot: %v", err)
	}
	for _, bad := range []Loc{{Storage, 3}, {DataTransfer, 1}, {ImportExport, -1}, {Transport, 0}} {
		if err := l.c.Move(bad, Loc{Storage, 0}); !errors.Is(err, ErrNoSuchElement) || !strings.Contains(err.Error(), "3 slots, 1 mail slots, 1 drives") {
			t.Errorf("Move from %+v: %v", bad, err)
		}
	}
	if err := l.c.Move(Loc{DataTransfer, 0}, Loc{ImportExport, 0}); err != nil {
		t.Fatalf("Move drive 0 → mail 0: %v", err)
	}
	if bc := l.drives["tape0"].Stats().Barcode; bc != "" {
		t.Fatalf("drive still holds %q", bc)
	}
	if at := l.where("A00001"); at != (Loc{ImportExport, 0}) {
		t.Errorf("A00001 at %+v", at)
	}
	l.clearUA()
	l.ok(cdb(0x1e, 0, 0, 0, 1, 0), 0) // PREVENT
	if err := l.c.Move(Loc{Storage, 1}, Loc{Storage, 2}); !errors.Is(err, ErrPrevented) {
		t.Errorf("Move while prevented: %v", err)
	}
	if got := l.c.Drives(); len(got) != 1 || got[0] != "tape0" {
		t.Errorf("Drives() = %v", got)
	}
}

// TestPopulate: cartridges= creates the labelled cartridges on the first
// start only, in slot order, keeping an image that exists.
func TestPopulate(t *testing.T) {
	l := newLab(t, "slots=4;mailslots=1;cartridges=3;first=E01001L8;capacity=8M", "E01002L8")
	for i, b := range []string{"E01001L8", "E01002L8", "E01003L8"} {
		if at := l.where(b); at != (Loc{Storage, i}) {
			t.Errorf("%s at %+v, want storage %d", b, at, i)
		}
	}
	if _, err := l.c.Export(0); !errors.Is(err, ErrEmptySlot) {
		t.Fatalf("mail slot: %v", err)
	}
	// The operator takes E01003L8 out and deletes it; a restart does not
	// create it again.
	if err := l.c.Move(Loc{Storage, 2}, Loc{ImportExport, 0}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.c.Export(0); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(cartridge.Path(l.dir, "E01003L8")); err != nil {
		t.Fatal(err)
	}
	l.open()
	if inv := l.c.Inventory(); len(inv.Barcodes()) != 2 {
		got := inv.Barcodes()
		t.Errorf("after restart: %v, want E01001L8 and E01002L8", got)
	}
}

// TestStats: moves are counted by element types and outcome, occupancy
// and imports/exports follow the inventory.
func TestStats(t *testing.T) {
	l := newLab(t, "slots=3;mailslots=1;drives=tape0", "A00001", "A00002")
	l.ok(move(0x1000, 0x0001), 0)                                                         // slot → drive
	l.wantSense(move(0x1002, 0x1001), scsi.IllegalRequest, scsi.MediumSourceElementEmpty) // refused
	if err := l.c.Move(Loc{DataTransfer, 0}, Loc{ImportExport, 0}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.c.Export(0); err != nil {
		t.Fatal(err)
	}
	s := l.c.Stats()
	want := []MoveCount{
		{From: Storage, To: Storage, Outcome: OutcomeRefused, Count: 1},
		{From: Storage, To: DataTransfer, Outcome: OutcomeOK, Count: 1},
		{From: DataTransfer, To: ImportExport, Outcome: OutcomeOK, Count: 1},
	}
	if len(s.Moves) != len(want) {
		t.Fatalf("Moves = %+v", s.Moves)
	}
	for i, m := range s.Moves {
		if m.From != want[i].From || m.To != want[i].To || m.Outcome != want[i].Outcome || m.Count != 1 || m.Seconds <= 0 {
			t.Errorf("Moves[%d] = %+v, want %+v with some seconds", i, m, want[i])
		}
	}
	if s.Elements != [5]int{0, 1, 3, 1, 1} || s.Full != [5]int{0, 0, 1, 0, 0} || s.Imports != 0 || s.Exports != 1 {
		t.Errorf("Stats = %+v", s)
	}
}

// TestLogSenseAndSelfTest: the changer's log pages (supported pages,
// self-test results, TapeAlert) and the self-tests SEND DIAGNOSTIC runs.
func TestLogSenseAndSelfTest(t *testing.T) {
	l := newLab(t, "slots=2;mailslots=1;drives=tape0")
	logSense := func(page, sub byte) []byte { return cdb(0x4d, 0, 0x40|page, sub, 0, 0, 0, 0x10, 0, 0) }
	wantBytes(t, "supported pages", l.ok(logSense(0, 0), 4096), hexBytes("00 00 0003 00 10 2e"))
	wantBytes(t, "supported subpages", l.ok(logSense(0, 0xff), 4096), hexBytes("40 ff 0008 0000 00ff 1000 2e00"))
	ta := l.ok(logSense(0x2e, 0), 4096)
	if len(ta) != 4+64*5 || ta[4] != 0 || ta[5] != 1 || ta[8] != 0 {
		t.Fatalf("TapeAlert: % x", ta[:12])
	}
	l.ok(cdb(0x1d, 0x20, 0, 0, 0, 0), 0) // background short self-test
	st := l.ok(logSense(0x10, 0), 4096)
	wantBytes(t, "self-test results", st[:24], hexBytes("10 00 0190 0001 03 10 20 00 0000 ffffffffffffffff 00 00 00 00"))
	l.wantSense(logSense(0x0c, 0), scsi.IllegalRequest, scsi.InvalidFieldInCDB)
	l.wantSense(logSense(0x2e, 1), scsi.IllegalRequest, scsi.InvalidFieldInCDB)
	l.wantSense(cdb(0x4d, 0x01, 0x40, 0, 0, 0, 0, 0x10, 0, 0), scsi.IllegalRequest, scsi.InvalidFieldInCDB) // SP
}

// TestOpenCloseImportExport: the station opened with OPEN/CLOSE
// IMPORT/EXPORT ELEMENT is the operator's; the transport cannot reach it
// until it is closed, and closing reports 28/01.
func TestOpenCloseImportExport(t *testing.T) {
	l := newLab(t, "slots=2;mailslots=2;drives=tape0", "A00001", "A00002")
	openIE := func(addr uint16, action byte) []byte { return cdb(0x1b, 0, byte(addr>>8), byte(addr), action, 0) }
	mailFlags := func() byte { return l.ok(res(3, false, 0, 1, false, 1024), 1024)[16+2] }
	if f := mailFlags(); f != 0x38 {
		t.Fatalf("closed station's mail slot flags %02x, want INENAB EXENAB ACCESS", f)
	}
	l.ok(openIE(0x10, 0), 0)
	l.ok(openIE(0x11, 0), 0) // already open: GOOD
	if f := mailFlags(); f != 0x30 {
		t.Errorf("open station's mail slot flags %02x, want INENAB EXENAB without ACCESS", f)
	}
	l.wantSense(move(0x1000, 0x0010), scsi.NotReady, scsi.MediumNotPresentTrayOpen)
	l.ok(move(0x1000, 0x0001), 0) // the rest of the library still works
	l.ok(move(0x0001, 0x1000), 0)
	l.clearUA()
	l.wantSense(cdb(0xa6, 0, 0, 0, 0x10, 0x00, 0x00, 0x10, 0x10, 0x00, 0, 0), scsi.NotReady, scsi.MediumNotPresentTrayOpen)
	// The operator's own move needs the transport too.
	if err := l.c.Move(Loc{Storage, 0}, Loc{ImportExport, 1}); err == nil {
		t.Error("operator move into the open station succeeded")
	}
	l.ok(openIE(0x10, 1), 0)
	l.wantSense(cdb(0, 0, 0, 0, 0, 0), scsi.UnitAttention, scsi.ImportOrExportElementAccessed)
	l.ok(openIE(0x10, 1), 0) // closing a closed station: GOOD, no attention
	l.ok(cdb(0, 0, 0, 0, 0, 0), 0)
	l.ok(move(0x1000, 0x0010), 0)
	if at := l.where("A00001"); at != (Loc{ImportExport, 0}) {
		t.Errorf("A00001 at %+v after the move into the closed station", at)
	}
	// Errors: not a mail slot, a reserved action, a prevented station.
	if s := l.fail(openIE(0x1000, 0)); s != "700005000000000a00000000210100c00002" {
		t.Errorf("storage element: %s", s)
	}
	if s := l.fail(openIE(0x10, 2)); s != "700005000000000a00000000240000cc0004" { // bit pointer: ACTION CODE's bit 4
		t.Errorf("action 2: %s", s)
	}
	l.ok(cdb(0x1e, 0, 0, 0, 1, 0), 0)
	l.wantSense(openIE(0x10, 0), scsi.IllegalRequest, scsi.MediumRemovalPrevented)
	l.ok(cdb(0x1e, 0, 0, 0, 0, 0), 0)
	l.ok(openIE(0x10, 0), 0)
	// A restart powers on with the door closed.
	l.open()
	l.clearUA()
	l.ok(move(0x0010, 0x1000), 0)
}

// TestCleaningCartridge: a CLN cartridge is reported as cleaning medium
// (MEDIUM TYPE 2); moved into a drive it cleans it, and the drive then
// holds it unloaded until the transport takes it back. The drives' 30 ms
// cleaning runs on a synctest bubble's clock, so that the checks made
// during it see it in progress however slow the machine is.
func TestCleaningCartridge(t *testing.T) { synctest.Test(t, testCleaningCartridge) }

func testCleaningCartridge(t *testing.T) {
	l := newLab(t, "slots=2;mailslots=0;drives=tape0", "A00001", "CLN001L1")
	st := l.ok(res(2, true, 0, 2, false, 1024), 1024)
	const d0, d1 = 16, 16 + 52 // descriptors of slots 1000h (A00001) and 1001h (CLN001L1)
	if st[d0+9] != 0 || st[d1+9] != typeCleaning {
		t.Fatalf("byte 9 of the data and the cleaning cartridge: %02x %02x", st[d0+9], st[d1+9])
	}
	l.ok(move(0x1001, 0x0001), 0)
	d := l.drives["tape0"]
	if d.Stats().Barcode != "CLN001L1" {
		t.Fatalf("drive during the cleaning: %+v", d.Stats())
	}
	dt := l.ok(res(4, true, 0, 1, false, 1024), 1024)
	if dt[16+2]&flagFull == 0 || dt[16+9] != sValid|typeCleaning {
		t.Errorf("drive element during the cleaning: % x", dt[16:16+12])
	}
	time.Sleep(29 * time.Millisecond)
	synctest.Wait()
	if s := d.Stats(); s.Cleanings != 0 || s.Barcode != "CLN001L1" {
		t.Fatalf("drive after 29 of the cleaning's 30 ms: %+v", s)
	}
	time.Sleep(time.Millisecond)
	synctest.Wait()
	if s := d.Stats(); s.Cleanings != 1 || s.Barcode != "" {
		t.Fatalf("drive after the cleaning: %+v", s)
	}
	// Still in the drive element until the transport moves it.
	if at := l.where("CLN001L1"); at != (Loc{DataTransfer, 0}) {
		t.Fatalf("CLN001L1 at %+v", at)
	}
	l.ok(move(0x0001, 0x1001), 0)
	if at := l.where("CLN001L1"); at != (Loc{Storage, 1}) {
		t.Fatalf("CLN001L1 back at %+v", at)
	}
}

// TestElements: the operator's listing (vscsictl library) has the drives
// first, with the device behind each, then the storage and mail slots,
// each with its address in the personality and what it holds.
func TestElements(t *testing.T) {
	l := newLab(t, "personality=ibm-ts3100;slots=3;mailslots=1;drives=d0+d1", "A00001L8", "A00002L8")
	if err := l.c.Move(Loc{Storage, 1}, Loc{DataTransfer, 1}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range l.c.Elements() {
		got = append(got, fmt.Sprintf("%v/%d@%d:%s:%s", e.Type, e.Index, e.Address, e.Barcode, e.Device))
	}
	d, s, m := l.c.Address(Loc{DataTransfer, 0}), l.c.Address(Loc{Storage, 0}), l.c.Address(Loc{ImportExport, 0})
	want := []string{
		fmt.Sprintf("drive/0@%d::d0", d), fmt.Sprintf("drive/1@%d:A00002L8:d1", d+1),
		fmt.Sprintf("storage/0@%d:A00001L8:", s), fmt.Sprintf("storage/1@%d::", s+1), fmt.Sprintf("storage/2@%d::", s+2),
		fmt.Sprintf("mail/0@%d::", m),
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Elements:\n got %q\nwant %q", got, want)
	}
}

// TestIncompatibleGenerationRefused: a library moving a cartridge into a
// drive that does not read its generation (an LTO-9 cartridge, blank,
// into an LTO-10 drive) gets ILLEGAL REQUEST 30/00, INCOMPATIBLE MEDIUM
// INSTALLED; the cartridge stays in its slot and the drive stays empty.
// An LTO-10 cartridge moves in.
func TestIncompatibleGenerationRefused(t *testing.T) {
	l := newLab(t, "slots=2;drives=d0", "A00001L9", "A00002LA")
	l.swapDrive("d0", "personality=lto10")
	src, dst := l.c.Address(Loc{Storage, 0}), l.c.Address(Loc{DataTransfer, 0})
	if s := l.fail(move(src, dst)); s != "700005000000000a00000000300000000000" {
		t.Fatalf("LTO-9 into LTO-10: sense %s, want 05/30/00", s)
	}
	if at := l.where("A00001L9"); at != (Loc{Storage, 0}) {
		t.Fatalf("A00001L9 now in %v, want storage 0", at)
	}
	if b := l.drives["d0"].Stats().Barcode; b != "" {
		t.Fatalf("drive holds %q after the refused move", b)
	}
	l.ok(move(l.c.Address(Loc{Storage, 1}), dst), 0)
	if b := l.drives["d0"].Stats().Barcode; b != "A00002LA" {
		t.Fatalf("drive holds %q, want A00002LA", b)
	}
}
