//go:build race

package workspace

// raceEnabled: the race detector is on (the large-blob test sizes its
// blob down: -race makes inflating it several times slower).
const raceEnabled = true
