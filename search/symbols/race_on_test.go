//go:build race

package symbols

// raceOn: under the race detector sync.Pool drops what is put back, so
// the regexp package makes a new matcher per call (allocation counts are
// not the product's), and every step is several times slower: the
// hostile inputs are scaled down to keep the run short.
const raceOn = true
