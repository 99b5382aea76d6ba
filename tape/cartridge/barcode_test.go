package cartridge

import (
	"errors"
	"testing"

	"github.com/vscsid/vscsid/tape"
)

// TestBarcodeRuleAgrees: a barcode the vtape cfgstring accepts (what
// vscsid --check-config checks) is one the library opens, and the other
// way round: backup-2024.01 used to pass the first and fail the second.
func TestBarcodeRuleAgrees(t *testing.T) {
	for _, b := range []string{"A", "Z9", "TAPE01L9", "00000001", "DDS001", "ABCDEFGHI", "abc123", "tape01",
		"backup-2024.01", "A.B", "A_B", "A-B", "AB/C", "..", ".A", "A B", "../ETC", "ÄBC", "AB\x00"} {
		_, cfgErr := tape.ParseConfig("memory=1;barcode=" + b)
		libErr := ValidateBarcode(b)
		if (cfgErr == nil) != (libErr == nil) {
			t.Errorf("barcode %q: cfgstring %v, library %v", b, cfgErr, libErr)
		}
		if libErr != nil && !errors.Is(libErr, ErrBadBarcode) {
			t.Errorf("barcode %q: %v does not wrap ErrBadBarcode", b, libErr)
		}
	}
}
