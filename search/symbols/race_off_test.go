//go:build !race

package symbols

const raceOn = false
