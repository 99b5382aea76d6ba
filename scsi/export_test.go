package scsi

// Internals exposed to the external scsi_test package.

// NumASCNames is the number of entries in the ASC name table.
const NumASCNames = len(ascNames)

// ASCNamesSorted reports whether the ASC name table is strictly ascending,
// which ASC.Name's binary search needs.
func ASCNamesSorted() bool {
	for i := 1; i < len(ascNames); i++ {
		if ascNames[i-1].asc >= ascNames[i].asc {
			return false
		}
	}
	return true
}
