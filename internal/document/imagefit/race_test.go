//go:build race

package imagefit

// raceEnabled skips the measuring tests under -race, which makes them
// ten times slower and measures the detector's allocations with them.
const raceEnabled = true
