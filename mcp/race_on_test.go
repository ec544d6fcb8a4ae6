//go:build race

package mcp

// raceEnabled: the race detector is on (tests size their data down).
const raceEnabled = true
