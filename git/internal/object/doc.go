// Package object reads git's commits and trees straight from their bytes
// (the common, well-formed forms: anything else is left to go-git's
// decoder, which refuses what is malformed), compares two trees without
// decoding them, and keeps what one request decoded in bounded caches. It
// is the plumbing under git's history (log, show, blame) and the merge
// queue's tree comparisons.
package object
