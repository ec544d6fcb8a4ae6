// Package document holds what every document reader returns: a
// document's text as lines, and where its parts (pages, sheets, slides)
// begin, so that a window of lines can say which parts it shows. The
// readers themselves live in its subpackages, one per family of formats;
// each reads a file's bytes per call, bounded by its own limits, and
// keeps nothing.
package document

// Doc is a document read as text.
type Doc struct {
	// Text is the document's text: lines ended by '\n', no '\f'.
	Text string
	// Parts are where the document's pages, sheets or slides begin, in
	// order; empty for a document without parts (a docx, an odt).
	Parts []Part
	// Truncated says a bound stopped the reader before the end of the
	// document: Text holds what came before it.
	Truncated bool
	// Note says briefly why, when Truncated, or what was left out
	// (pages without text, images); empty otherwise.
	Note string
}

// Part is where one page, sheet or slide begins.
type Part struct {
	// Label names the part as a person would: "page 3", "sheet Q3",
	// "slide 2".
	Label string
	// Line is the 1-based line of Text where the part begins.
	Line int
}
