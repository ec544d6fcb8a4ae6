//go:build race

package git

// raceRSSFactor scales the RSS bounds of tests that hold real data in
// memory: the race runtime's shadow memory about triples a heap's RSS.
const raceRSSFactor = 3
