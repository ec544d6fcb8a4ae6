package diff3

// Sliding changed groups to where git puts them (xdl_change_compact), with
// the indent heuristic.

// The indent heuristic's constants (xdiffi.c).
const (
	maxIndent                       = 200
	maxBlanks                       = 20
	indentMaxSliding                = 100
	startOfFilePenalty              = 1
	endOfFilePenalty                = 21
	totalBlankWeight                = -30
	postBlankWeight                 = 6
	relativeIndentPenalty           = -4
	relativeIndentWithBlankPenalty  = 10
	relativeOutdentPenalty          = 24
	relativeOutdentWithBlankPenalty = 17
	relativeDedentPenalty           = 23
	relativeDedentWithBlankPenalty  = 17
	indentWeight                    = 60
)

// group is struct xdlgroup: lines [start, end) of a file, changed.
type group struct{ start, end int }

func (f *xdfile) groupInit(g *group) {
	g.start, g.end = 0, 0
	for f.rchg(g.end) != 0 {
		g.end++
	}
}

func (f *xdfile) groupNext(g *group) bool {
	if g.end == f.nrec() {
		return false
	}
	g.start = g.end + 1
	for g.end = g.start; f.rchg(g.end) != 0; g.end++ {
	}
	return true
}

func (f *xdfile) groupPrevious(g *group) bool {
	if g.start == 0 {
		return false
	}
	g.end = g.start - 1
	for g.start = g.end; f.rchg(g.start-1) != 0; g.start-- {
	}
	return true
}

func (f *xdfile) groupSlideDown(g *group) bool {
	if g.end < f.nrec() && f.ha[g.start] == f.ha[g.end] {
		f.setRchg(g.start, 0)
		g.start++
		f.setRchg(g.end, 1)
		g.end++
		for f.rchg(g.end) != 0 {
			g.end++
		}
		return true
	}
	return false
}

func (f *xdfile) groupSlideUp(g *group) bool {
	if g.start > 0 && f.ha[g.start-1] == f.ha[g.end-1] {
		g.start--
		f.setRchg(g.start, 1)
		g.end--
		f.setRchg(g.end, 0)
		for f.rchg(g.start-1) != 0 {
			g.start--
		}
		return true
	}
	return false
}

// changeCompact is xdl_change_compact: change groups slide as far down as
// they can, then back up to line up with a change of the other side, or,
// with indent (XDF_INDENT_HEURISTIC: git diff and git blame turn it on,
// git merge-file does not), to the split the indent heuristic scores best.
func changeCompact(xdf, xdfo *xdfile, indent bool) {
	var g, gOther group
	xdf.groupInit(&g)
	xdfo.groupInit(&gOther)
	for {
		if g.end != g.start {
			var earliestEnd, endMatchingOther int
			for {
				groupsize := g.end - g.start
				endMatchingOther = -1
				for xdf.groupSlideUp(&g) {
					if !xdfo.groupPrevious(&gOther) {
						panic("diff3: group sync broken sliding up")
					}
				}
				earliestEnd = g.end
				if gOther.end > gOther.start {
					endMatchingOther = g.end
				}
				for xdf.groupSlideDown(&g) {
					if !xdfo.groupNext(&gOther) {
						panic("diff3: group sync broken sliding down")
					}
					if gOther.end > gOther.start {
						endMatchingOther = g.end
					}
				}
				if groupsize == g.end-g.start {
					break
				}
			}
			switch {
			case g.end == earliestEnd:
			case endMatchingOther != -1:
				for gOther.end == gOther.start {
					if !xdf.groupSlideUp(&g) {
						panic("diff3: match disappeared")
					}
					if !xdfo.groupPrevious(&gOther) {
						panic("diff3: group sync broken sliding to match")
					}
				}
			case indent:
				groupsize := g.end - g.start
				shift := max(earliestEnd, g.end-groupsize-1, g.end-indentMaxSliding)
				bestShift := -1
				var best splitScore
				for ; shift <= g.end; shift++ {
					var score splitScore
					score.add(xdf.measureSplit(shift))
					score.add(xdf.measureSplit(shift - groupsize))
					if bestShift == -1 || score.cmp(best) <= 0 {
						best, bestShift = score, shift
					}
				}
				for g.end > bestShift {
					if !xdf.groupSlideUp(&g) {
						panic("diff3: best shift unreached")
					}
					if !xdfo.groupPrevious(&gOther) {
						panic("diff3: group sync broken sliding to blank line")
					}
				}
			}
		}
		if !xdf.groupNext(&g) {
			break
		}
		if !xdfo.groupNext(&gOther) {
			panic("diff3: group sync broken moving to next group")
		}
	}
}

// getIndent is get_indent: a line's indent (a tab to the next multiple of
// 8), at most maxIndent; -1 for a line of whitespace only. Whitespace is
// git's isspace: space, tab, LF and CR.
func getIndent(rec []byte) int {
	ret := 0
	for _, c := range rec {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return ret
		}
		switch c {
		case ' ':
			ret++
		case '\t':
			ret += 8 - ret%8
		}
		if ret >= maxIndent {
			return maxIndent
		}
	}
	return -1
}

// splitMeasurement is struct split_measurement.
type splitMeasurement struct {
	endOfFile                                          bool
	indent, preBlank, preIndent, postBlank, postIndent int
}

// measureSplit is measure_split: the surroundings of a split before line
// split.
func (f *xdfile) measureSplit(split int) splitMeasurement {
	var m splitMeasurement
	if split >= f.nrec() {
		m.endOfFile, m.indent = true, -1
	} else {
		m.indent = getIndent(f.recs[split])
	}
	m.preIndent = -1
	for i := split - 1; i >= 0; i-- {
		if m.preIndent = getIndent(f.recs[i]); m.preIndent != -1 {
			break
		}
		if m.preBlank++; m.preBlank == maxBlanks {
			m.preIndent = 0
			break
		}
	}
	m.postIndent = -1
	for i := split + 1; i < f.nrec(); i++ {
		if m.postIndent = getIndent(f.recs[i]); m.postIndent != -1 {
			break
		}
		if m.postBlank++; m.postBlank == maxBlanks {
			m.postIndent = 0
			break
		}
	}
	return m
}

// splitScore is struct split_score.
type splitScore struct{ effectiveIndent, penalty int }

// add is score_add_split.
func (s *splitScore) add(m splitMeasurement) {
	if m.preIndent == -1 && m.preBlank == 0 {
		s.penalty += startOfFilePenalty
	}
	if m.endOfFile {
		s.penalty += endOfFilePenalty
	}
	postBlank := 0
	if m.indent == -1 {
		postBlank = 1 + m.postBlank
	}
	totalBlank := m.preBlank + postBlank
	s.penalty += totalBlankWeight * totalBlank
	s.penalty += postBlankWeight * postBlank
	indent := m.indent
	if indent == -1 {
		indent = m.postIndent
	}
	anyBlanks := totalBlank != 0
	s.effectiveIndent += indent
	pick := func(withBlank, without int) int {
		if anyBlanks {
			return withBlank
		}
		return without
	}
	switch {
	case indent == -1, m.preIndent == -1, indent == m.preIndent:
	case indent > m.preIndent:
		s.penalty += pick(relativeIndentWithBlankPenalty, relativeIndentPenalty)
	case m.postIndent != -1 && m.postIndent > indent:
		s.penalty += pick(relativeOutdentWithBlankPenalty, relativeOutdentPenalty)
	default:
		s.penalty += pick(relativeDedentWithBlankPenalty, relativeDedentPenalty)
	}
}

// cmp is score_cmp: below 0 when s is the better split.
func (s splitScore) cmp(o splitScore) int {
	c := 0
	if s.effectiveIndent > o.effectiveIndent {
		c = 1
	} else if s.effectiveIndent < o.effectiveIndent {
		c = -1
	}
	return indentWeight*c + (s.penalty - o.penalty)
}
