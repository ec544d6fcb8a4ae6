package diff3

import "context"

// This file is a port of the parts of git's xdiff (xprepare.c, xdiffi.c)
// that git merge-file runs with its default options: exact line
// comparison, the Myers algorithm with xdiff's cost heuristics, the
// discarding of lines without matches, and the compaction that slides
// change groups. Following it step for step is what makes the merge agree
// with git's byte for byte; the names follow the C code so that the two
// can be read side by side.

const (
	maxEqLimit    = 1024 // XDL_MAX_EQLIMIT
	simscanWindow = 100  // XDL_SIMSCAN_WINDOW
	kpdisRun      = 4    // XDL_KPDIS_RUN
	maxCostMin    = 256  // XDL_MAX_COST_MIN
	heurMinCost   = 256  // XDL_HEUR_MIN_COST
	snakeCnt      = 20   // XDL_SNAKE_CNT
	kHeur         = 4    // XDL_K_HEUR
	lineMax       = int(^uint(0) >> 1)
)

// xdfile is one side of a diff: its lines, their classes (equal lines,
// newline included, share a class), which lines are changed, and the
// reduced sequence of lines the Myers search runs on.
type xdfile struct {
	recs         [][]byte
	ha           []int  // class of each line
	rchgBuf      []byte // changed marks, with a zero sentinel before and after
	rindex       []int  // reduced sequence: index of the line
	hav          []int  // reduced sequence: class of the line
	dstart, dend int
}

func (f *xdfile) nrec() int { return len(f.recs) }

// rchg is the changed mark of line i (i may be -1 or nrec: the sentinels).
func (f *xdfile) rchg(i int) byte       { return f.rchgBuf[i+1] }
func (f *xdfile) setRchg(i int, v byte) { f.rchgBuf[i+1] = v }

// xdenv is a diff from xdf1 to xdf2.
type xdenv struct{ xdf1, xdf2 xdfile }

// splitRecs splits b into lines that keep their "\n"; the last may lack one.
func splitRecs(b []byte) [][]byte {
	n := 0
	for _, c := range b {
		if c == '\n' {
			n++
		}
	}
	recs := make([][]byte, 0, n+1)
	start := 0
	for i, c := range b {
		if c == '\n' {
			recs = append(recs, b[start:i+1:i+1])
			start = i + 1
		}
	}
	if start < len(b) {
		recs = append(recs, b[start:len(b):len(b)])
	}
	return recs
}

// prepare is xdl_prepare_env for the Myers algorithm.
func prepare(a, b [][]byte) *xdenv {
	classes := make(map[string]int, len(a))
	var len1, len2 []int
	classify := func(recs [][]byte, first bool) []int {
		ha := make([]int, len(recs))
		for i, r := range recs {
			c, ok := classes[string(r)]
			if !ok {
				c = len(len1)
				classes[string(r)] = c
				len1 = append(len1, 0)
				len2 = append(len2, 0)
			}
			if first {
				len1[c]++
			} else {
				len2[c]++
			}
			ha[i] = c
		}
		return ha
	}
	xe := &xdenv{}
	xe.xdf1 = xdfile{recs: a, ha: classify(a, true), rchgBuf: make([]byte, len(a)+2)}
	xe.xdf2 = xdfile{recs: b, ha: classify(b, false), rchgBuf: make([]byte, len(b)+2)}
	xe.trimEnds()
	xe.cleanupRecords(len1, len2)
	return xe
}

// trimEnds is xdl_trim_ends: the common head and tail are left out of the
// search.
func (xe *xdenv) trimEnds() {
	f1, f2 := &xe.xdf1, &xe.xdf2
	lim := min(f1.nrec(), f2.nrec())
	i := 0
	for ; i < lim; i++ {
		if f1.ha[i] != f2.ha[i] {
			break
		}
	}
	f1.dstart, f2.dstart = i, i
	lim -= i
	j := 0
	for ; j < lim; j++ {
		if f1.ha[f1.nrec()-1-j] != f2.ha[f2.nrec()-1-j] {
			break
		}
	}
	f1.dend = f1.nrec() - j - 1
	f2.dend = f2.nrec() - j - 1
}

// bogosqrt is xdl_bogosqrt.
func bogosqrt(n int) int {
	i := 1
	for ; n > 0; n >>= 2 {
		i <<= 1
	}
	return i
}

// cleanupRecords is xdl_cleanup_records: lines without a match on the
// other side are changed outright, and so are lines with very many
// matches that sit among unmatched lines; the rest form the reduced
// sequences.
func (xe *xdenv) cleanupRecords(len1, len2 []int) {
	mark := func(f *xdfile, other []int) []byte {
		dis := make([]byte, f.nrec()+1)
		mlim := min(bogosqrt(f.nrec()), maxEqLimit)
		for i := f.dstart; i <= f.dend; i++ {
			nm := other[f.ha[i]]
			switch {
			case nm == 0:
				dis[i] = 0
			case nm >= mlim:
				dis[i] = 2
			default:
				dis[i] = 1
			}
		}
		return dis
	}
	dis1 := mark(&xe.xdf1, len2)
	dis2 := mark(&xe.xdf2, len1)
	keep := func(f *xdfile, dis []byte) {
		for i := f.dstart; i <= f.dend; i++ {
			if dis[i] == 1 || (dis[i] == 2 && !cleanMmatch(dis, i, f.dstart, f.dend)) {
				f.rindex = append(f.rindex, i)
				f.hav = append(f.hav, f.ha[i])
			} else {
				f.setRchg(i, 1)
			}
		}
	}
	keep(&xe.xdf1, dis1)
	keep(&xe.xdf2, dis2)
}

// cleanMmatch is xdl_clean_mmatch: whether the multi-match line i sits in
// a run of unmatched lines (and can be treated as changed).
func cleanMmatch(dis []byte, i, s, e int) bool {
	if i-s > simscanWindow {
		s = i - simscanWindow
	}
	if e-i > simscanWindow {
		e = i + simscanWindow
	}
	rdis0, rpdis0 := 0, 1
	for r := 1; i-r >= s; r++ {
		if dis[i-r] == 0 {
			rdis0++
		} else if dis[i-r] == 2 {
			rpdis0++
		} else {
			break
		}
	}
	if rdis0 == 0 {
		return false
	}
	rdis1, rpdis1 := 0, 1
	for r := 1; i+r <= e; r++ {
		if dis[i+r] == 0 {
			rdis1++
		} else if dis[i+r] == 2 {
			rpdis1++
		} else {
			break
		}
	}
	if rdis1 == 0 {
		return false
	}
	rdis1 += rdis0
	rpdis1 += rpdis0
	return rpdis1*kpdisRun < rpdis1+rdis1
}

// algoEnv is xdalgoenv_t.
type algoEnv struct{ mxcost, snakeCnt, heurMin int }

// split is xdpsplit_t.
type split struct {
	i1, i2       int
	minLo, minHi bool
}

// doDiff is xdl_do_diff: it marks the changed lines of both sides.
func doDiff(ctx context.Context, a, b [][]byte) *xdenv {
	xe := prepare(a, b)
	n1, n2 := len(xe.xdf1.hav), len(xe.xdf2.hav)
	ndiags := n1 + n2 + 3
	kvd := make([]int, 2*ndiags+2)
	// kvdf[k] is kvd[fo+k], kvdb[k] is kvd[bo+k].
	d := &differ{
		ha1: xe.xdf1.hav, ha2: xe.xdf2.hav,
		kvd: kvd, fo: n2 + 1, bo: ndiags + n2 + 1,
		env: algoEnv{mxcost: max(bogosqrt(ndiags), maxCostMin), snakeCnt: snakeCnt, heurMin: heurMinCost},
		f1:  &xe.xdf1, f2: &xe.xdf2, ctx: ctx,
	}
	d.recsCmp(0, n1, 0, n2, false)
	return xe
}

type differ struct {
	ha1, ha2 []int
	kvd      []int
	fo, bo   int
	env      algoEnv
	f1, f2   *xdfile
	// ctx (nil: none) stops the search once done: the marks are then
	// incomplete and the caller returns ctx's error.
	ctx  context.Context
	work int
}

// stopped says whether d.ctx is done, asking it every 1024 calls.
func (d *differ) stopped() bool {
	if d.ctx == nil {
		return false
	}
	if d.work++; d.work%1024 != 0 {
		return false
	}
	return d.ctx.Err() != nil
}

// recsCmp is xdl_recs_cmp.
func (d *differ) recsCmp(off1, lim1, off2, lim2 int, needMin bool) {
	ha1, ha2 := d.ha1, d.ha2
	for off1 < lim1 && off2 < lim2 && ha1[off1] == ha2[off2] {
		off1++
		off2++
	}
	for off1 < lim1 && off2 < lim2 && ha1[lim1-1] == ha2[lim2-1] {
		lim1--
		lim2--
	}
	switch {
	case off1 == lim1:
		for ; off2 < lim2; off2++ {
			d.f2.setRchg(d.f2.rindex[off2], 1)
		}
	case off2 == lim2:
		for ; off1 < lim1; off1++ {
			d.f1.setRchg(d.f1.rindex[off1], 1)
		}
	case d.ctx != nil && d.ctx.Err() != nil:
	default:
		spl := d.split(off1, lim1, off2, lim2, needMin)
		d.recsCmp(off1, spl.i1, off2, spl.i2, spl.minLo)
		d.recsCmp(spl.i1, lim1, spl.i2, lim2, spl.minHi)
	}
}

// split is xdl_split: the midpoint of the shortest edit path, or, past the
// cost heuristics, a good-enough point.
func (d *differ) split(off1, lim1, off2, lim2 int, needMin bool) split {
	s := &splitBox{off1: off1, lim1: lim1, off2: off2, lim2: lim2}
	s.dmin, s.dmax = off1-lim2, lim1-off2
	s.fmid, s.bmid = off1-off2, lim1-lim2
	s.odd = (s.fmid-s.bmid)&1 != 0
	s.fmin, s.fmax = s.fmid, s.fmid
	s.bmin, s.bmax = s.bmid, s.bmid

	d.kvd[d.fo+s.fmid] = off1
	d.kvd[d.bo+s.bmid] = lim1

	for ec := 1; ; ec++ {
		if d.stopped() {
			return split{i1: off1, i2: off2, minLo: true, minHi: true}
		}
		spl, met, fsnake := d.forwardSnakes(s)
		if met {
			return spl
		}
		spl, met, bsnake := d.backwardSnakes(s)
		if met {
			return spl
		}

		if needMin {
			continue
		}

		// If the edit cost is above the heuristic trigger and a good
		// snake was found, sample the diagonals for an "interesting"
		// path.
		if (fsnake || bsnake) && ec > d.env.heurMin {
			if spl, ok := d.interestingForward(s, ec); ok {
				return spl
			}
			if spl, ok := d.interestingBackward(s, ec); ok {
				return spl
			}
		}

		// Enough is enough: past the maximum cost, the furthest
		// reaching path by the (i1 + i2) measure.
		if ec >= d.env.mxcost {
			return d.furthestReaching(s)
		}
	}
}

// splitBox is the state of one xdl_split call: the box searched, the
// diagonal bounds and the forward and backward diagonals reached so far.
type splitBox struct {
	off1, lim1, off2, lim2 int
	dmin, dmax             int
	fmid, bmid             int
	fmin, fmax             int
	bmin, bmax             int
	odd                    bool
}

// forwardSnakes extends every forward diagonal by one edit and its snake.
// met reports a forward path overlapping a backward one (the midpoint,
// in spl); gotSnake one snake longer than snakeCnt.
func (d *differ) forwardSnakes(s *splitBox) (spl split, met, gotSnake bool) {
	kvd, fo, bo := d.kvd, d.fo, d.bo
	if s.fmin > s.dmin {
		s.fmin--
		kvd[fo+s.fmin-1] = -1
	} else {
		s.fmin++
	}
	if s.fmax < s.dmax {
		s.fmax++
		kvd[fo+s.fmax+1] = -1
	} else {
		s.fmax--
	}
	for dd := s.fmax; dd >= s.fmin; dd -= 2 {
		var i1 int
		if kvd[fo+dd-1] >= kvd[fo+dd+1] {
			i1 = kvd[fo+dd-1] + 1
		} else {
			i1 = kvd[fo+dd+1]
		}
		prev1 := i1
		i2 := i1 - dd
		for i1 < s.lim1 && i2 < s.lim2 && d.ha1[i1] == d.ha2[i2] {
			i1++
			i2++
		}
		if i1-prev1 > d.env.snakeCnt {
			gotSnake = true
		}
		kvd[fo+dd] = i1
		if s.odd && s.bmin <= dd && dd <= s.bmax && kvd[bo+dd] <= i1 {
			return split{i1: i1, i2: i2, minLo: true, minHi: true}, true, gotSnake
		}
	}
	return split{}, false, gotSnake
}

// backwardSnakes is forwardSnakes' mirror, from the box's end.
func (d *differ) backwardSnakes(s *splitBox) (spl split, met, gotSnake bool) {
	kvd, fo, bo := d.kvd, d.fo, d.bo
	if s.bmin > s.dmin {
		s.bmin--
		kvd[bo+s.bmin-1] = lineMax
	} else {
		s.bmin++
	}
	if s.bmax < s.dmax {
		s.bmax++
		kvd[bo+s.bmax+1] = lineMax
	} else {
		s.bmax--
	}
	for dd := s.bmax; dd >= s.bmin; dd -= 2 {
		var i1 int
		if kvd[bo+dd-1] < kvd[bo+dd+1] {
			i1 = kvd[bo+dd-1]
		} else {
			i1 = kvd[bo+dd+1] - 1
		}
		prev1 := i1
		i2 := i1 - dd
		for i1 > s.off1 && i2 > s.off2 && d.ha1[i1-1] == d.ha2[i2-1] {
			i1--
			i2--
		}
		if prev1-i1 > d.env.snakeCnt {
			gotSnake = true
		}
		kvd[bo+dd] = i1
		if !s.odd && s.fmin <= dd && dd <= s.fmax && i1 <= kvd[fo+dd] {
			return split{i1: i1, i2: i2, minLo: true, minHi: true}, true, gotSnake
		}
	}
	return split{}, false, gotSnake
}

// interestingForward samples the forward diagonals for the best one that
// went far enough and ends in a snake of snakeCnt lines.
func (d *differ) interestingForward(s *splitBox, ec int) (split, bool) {
	kvd, fo := d.kvd, d.fo
	ha1, ha2, snake := d.ha1, d.ha2, d.env.snakeCnt
	var spl split
	best := 0
	for dd := s.fmax; dd >= s.fmin; dd -= 2 {
		ddist := dd - s.fmid
		if ddist < 0 {
			ddist = -ddist
		}
		i1 := kvd[fo+dd]
		i2 := i1 - dd
		v := (i1 - s.off1) + (i2 - s.off2) - ddist
		if v > kHeur*ec && v > best &&
			s.off1+snake <= i1 && i1 < s.lim1 &&
			s.off2+snake <= i2 && i2 < s.lim2 {
			for k := 1; ha1[i1-k] == ha2[i2-k]; k++ {
				if k == snake {
					best = v
					spl.i1, spl.i2 = i1, i2
					break
				}
			}
		}
	}
	spl.minLo, spl.minHi = true, false
	return spl, best > 0
}

// interestingBackward is interestingForward's mirror on the backward
// diagonals.
func (d *differ) interestingBackward(s *splitBox, ec int) (split, bool) {
	kvd, bo := d.kvd, d.bo
	ha1, ha2, snake := d.ha1, d.ha2, d.env.snakeCnt
	var spl split
	best := 0
	for dd := s.bmax; dd >= s.bmin; dd -= 2 {
		ddist := dd - s.bmid
		if ddist < 0 {
			ddist = -ddist
		}
		i1 := kvd[bo+dd]
		i2 := i1 - dd
		v := (s.lim1 - i1) + (s.lim2 - i2) - ddist
		if v > kHeur*ec && v > best &&
			s.off1 < i1 && i1 <= s.lim1-snake &&
			s.off2 < i2 && i2 <= s.lim2-snake {
			for k := 0; ha1[i1+k] == ha2[i2+k]; k++ {
				if k == snake-1 {
					best = v
					spl.i1, spl.i2 = i1, i2
					break
				}
			}
		}
	}
	spl.minLo, spl.minHi = false, true
	return spl, best > 0
}

// furthestReaching picks, of the forward and backward paths, the one
// reaching furthest by the (i1 + i2) measure.
func (d *differ) furthestReaching(s *splitBox) split {
	kvd, fo, bo := d.kvd, d.fo, d.bo
	fbest, fbest1 := -1, -1
	for dd := s.fmax; dd >= s.fmin; dd -= 2 {
		i1 := min(kvd[fo+dd], s.lim1)
		i2 := i1 - dd
		if s.lim2 < i2 {
			i1, i2 = s.lim2+dd, s.lim2
		}
		if fbest < i1+i2 {
			fbest, fbest1 = i1+i2, i1
		}
	}
	bbest, bbest1 := lineMax, lineMax
	for dd := s.bmax; dd >= s.bmin; dd -= 2 {
		i1 := max(s.off1, kvd[bo+dd])
		i2 := i1 - dd
		if i2 < s.off2 {
			i1, i2 = s.off2+dd, s.off2
		}
		if i1+i2 < bbest {
			bbest, bbest1 = i1+i2, i1
		}
	}
	if (s.lim1+s.lim2)-bbest < fbest-(s.off1+s.off2) {
		return split{i1: fbest1, i2: fbest - fbest1, minLo: true, minHi: false}
	}
	return split{i1: bbest1, i2: bbest - bbest1, minLo: false, minHi: true}
}

// change is xdchange_t: lines [i1, i1+chg1) of the first file became
// lines [i2, i2+chg2) of the second.
type change struct{ i1, i2, chg1, chg2 int }

// buildScript is xdl_build_script.
func (xe *xdenv) buildScript() []change {
	f1, f2 := &xe.xdf1, &xe.xdf2
	var rev []change
	i1, i2 := f1.nrec(), f2.nrec()
	for i1 >= 0 && i2 >= 0 {
		if f1.rchg(i1-1) != 0 || f2.rchg(i2-1) != 0 {
			l1, l2 := i1, i2
			for f1.rchg(i1-1) != 0 {
				i1--
			}
			for f2.rchg(i2-1) != 0 {
				i2--
			}
			rev = append(rev, change{i1: i1, i2: i2, chg1: l1 - i1, chg2: l2 - i2})
		}
		i1--
		i2--
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev
}

// diff is xdl_diff's script as git merge-file computes it: do the diff,
// compact both sides, collect.
func diff(a, b [][]byte) (*xdenv, []change) {
	xe := doDiff(context.Background(), a, b)
	changeCompact(&xe.xdf1, &xe.xdf2, false)
	changeCompact(&xe.xdf2, &xe.xdf1, false)
	return xe, xe.buildScript()
}

// Change is a hunk of a line diff: lines [Old, Old+OldLines) of the old
// side became lines [New, New+NewLines) of the new side (0-based).
type Change struct{ Old, New, OldLines, NewLines int }

// LineDiff is the line diff git diff, git show and git blame compute by
// default (the Myers algorithm with xdiff's heuristics and the indent
// heuristic), as the changes xdl_build_script lists, in order. a and b
// are lines that keep their "\n" (the last may lack one). Its cost is
// about lines × √lines at worst (xdiff's cost cap, not an edit bound:
// the script is git's for any input); ctx, when not nil, is checked as
// it goes and its error returned once ctx is done.
func LineDiff(ctx context.Context, a, b [][]byte) ([]Change, error) {
	xe := doDiff(ctx, a, b)
	if ctx != nil && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	changeCompact(&xe.xdf1, &xe.xdf2, true)
	changeCompact(&xe.xdf2, &xe.xdf1, true)
	script := xe.buildScript()
	out := make([]Change, len(script))
	for i, c := range script {
		out[i] = Change{Old: c.i1, New: c.i2, OldLines: c.chg1, NewLines: c.chg2}
	}
	return out, nil
}
