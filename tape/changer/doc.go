// Package changer emulates an SMC-3 medium changer ("vlibrary"): a small
// tape library of one medium transport element (the robot), storage
// elements (slots), import/export elements (mail slots) and data transfer
// elements (the vtape drives of the same daemon), for the Linux ch driver,
// mtx and the backup software that drives mtx (Bacula's and Bareos's
// mtx-changer). Its peripheral device type is 08h.
//
// The cartridges are the image files of a media directory shared with
// the drives (package tape/cartridge). Which barcode sits in which element
// is the inventory, kept in <media>/.library-<name>.json with the moves
// since in <media>/.library-<name>.journal, each synced before the move
// is reported GOOD (inventory.go, journal.go); at start and
// on INITIALIZE ELEMENT STATUS it is reconciled with the directory
// (Reconcile): images it does not know go into free slots, entries whose
// image is gone are dropped.
//
// A move into a drive loads the cartridge (the drive then reports 28/00
// itself); a move out of a drive unloads it first (autounload=1) or is
// refused while the drive still has it loaded (autounload=0). Drives are
// found by name at command time (Resolver), so they may be created
// before or after the changer.
//
// Element addresses and the identity are the personality's
// (personality.go); configuration is the cfgstring after "vlibrary/"
// (ConfigDesc).
package changer
