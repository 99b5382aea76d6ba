//go:build !linux

package target

func isModuleMissing(error) bool { return false }

func isBusy(error) bool { return false }
