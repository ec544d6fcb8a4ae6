//go:build !race

package workspace

// raceEnabled: the race detector is on.
const raceEnabled = false
