package systemd

// OpenFDStoreAt is OpenFDStore reading the environment through getenv, for
// process pid, whose passed files start at descriptor first: the tests
// pass files at free descriptors rather than from 3.
var OpenFDStoreAt = openFDStore
