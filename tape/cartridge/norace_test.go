//go:build !race

package cartridge

// raceDetector is whether the tests run under -race (crashSeeds).
const raceDetector = false
