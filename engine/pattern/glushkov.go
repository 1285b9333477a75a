package pattern

import (
	"math/bits"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode/utf8"
)

// maxPositions is the number of pattern positions the bit-parallel matcher can track: one
// per bit of its state word.
const maxPositions = 64

// maxBuildSteps bounds the work of building the automaton; a pattern that needs more (a long
// chain of counted anchors, say) is left to Go's regexp.
const maxBuildSteps = 10000

// Empty-match conditions, as bits of glu.null: bit c is set when the subexpression can match
// the empty string under condition c, where c&condStart means "only at offset 0" (a ^ was
// crossed) and c&condEnd "only at the end of the subject" (a $ was crossed).
const (
	condStart = 1
	condEnd   = 2
)

// matcher is a bit-parallel simulation of the position (Glushkov) automaton of a pattern with
// at most 64 positions, each position an occurrence of a code-point set in the pattern once
// counted repetitions are expanded. Bit p of the state is set when some match attempt has just
// consumed a code point at position p. Reading a code point c moves the state to
// (follow(state) ∪ initial) ∩ accepts(c), which costs a few word operations per code point
// whatever the pattern, so matching is linear in the subject and never backtracks.
//
// Anchors have no position: ^ and $ only restrict where a path may start or end, so the
// automaton keeps, beside the usual first and last sets, the positions that may start a match
// only at offset 0 (firstStart) and those that may end one only at the end (lastEnd).
type matcher struct {
	ascii [utf8.RuneSelf]uint64 // positions whose set holds the ASCII code point

	// Code points from utf8.RuneSelf up: the positions accepting r are masks[i] for the last i
	// with bounds[i] <= r. bounds[0] is utf8.RuneSelf.
	bounds []rune
	masks  []uint64

	// follow(D) = (D<<1)&shift | D&loop | the exception tables applied to D&exc.
	shift  uint64  // positions q such that q-1 is followed by q
	loop   uint64  // positions followed by themselves
	exc    uint64  // positions followed by others than themselves and the next one
	chunks []chunk // exceptions, one table per byte of exc that has a bit set

	first      uint64 // positions that may start a match anywhere
	firstStart uint64 // positions that may start a match at offset 0 only
	last       uint64 // positions that may end a match anywhere
	lastEnd    uint64 // positions that may end a match at the end of the subject only

	lead int // the ASCII byte that every first position requires, or -1

	always     bool // the pattern matches the empty string somewhere in every subject
	emptyWhole bool // the pattern matches the empty subject (^$ and the like)

	dfa *dfa // nil when the automaton has too many states
}

// chunk is the follow function of the exception positions of one byte of the state.
type chunk struct {
	off uint // bit offset of the byte in the state
	tab *[256]uint64
}

// match reports whether the pattern matches anywhere in s; invalid UTF-8 is read one byte at
// a time as U+FFFD, as Go's regexp reads it.
func (m *matcher) match(s string) bool {
	if m.always {
		return true
	}
	if len(s) == 0 {
		return m.emptyWhole
	}
	if t := m.dfa; t != nil && s[0] < utf8.RuneSelf {
		return m.matchDFA(t, s)
	}
	// The first code point is the only one where positions behind a ^ may start.
	acc, i := m.at(s, 0)
	d := (m.first | m.firstStart) & acc
	if d&m.last != 0 {
		return true
	}
	return m.run(s, i, d)
}

// matchDFA is match on the deterministic automaton, for a subject that starts with an ASCII
// code point; at the first other code point it goes on with the simulation in the state the
// automaton reached.
func (m *matcher) matchDFA(t *dfa, s string) bool {
	st := t.start[s[0]]
	next, special := t.next, t.special
	i := 1
	for {
		// The hot loop: one table load per byte, until a state that needs attention.
		for st < special && i < len(s) {
			c := s[i]
			if c >= utf8.RuneSelf {
				return m.run(s, i, t.words[st])
			}
			st = next[int(st)<<7|int(c)]
			i++
		}
		switch {
		case st == dfaMatch:
			return true
		case st < special: // the end of the subject
			return t.words[st]&m.lastEnd != 0
		case m.first == 0: // anchored at the start, and the attempt from offset 0 failed
			return false
		}
		// no attempt is alive: a new one can only start at the next lead byte
		j := strings.IndexByte(s[i:], byte(m.lead))
		if j < 0 {
			return false
		}
		i += j + 1
		st = next[int(st)<<7|m.lead]
	}
}

// run goes on with the simulation at s[i:] in state d.
func (m *matcher) run(s string, i int, d uint64) bool {
	// Locals, so that the loop keeps them in registers.
	ascii := &m.ascii
	shift, loop, exc, first, last := m.shift, m.loop, m.exc, m.first, m.last
	for {
		if d == 0 {
			if first == 0 { // anchored at the start, and the attempt from offset 0 failed
				return false
			}
			if m.lead >= 0 { // a new attempt can only start at the next lead byte
				j := strings.IndexByte(s[i:], byte(m.lead))
				if j < 0 {
					return false
				}
				i += j
			}
		}
		// The hot loop: ASCII code points, no calls, so nothing is spilled. It stops when the
		// state empties, to let the code above skip ahead.
		for i < len(s) {
			c := s[i]
			if c >= utf8.RuneSelf {
				break
			}
			i++
			f := (d<<1)&shift | (d&loop | first)
			if e := d & exc; e != 0 {
				for _, c := range m.chunks {
					f |= c.tab[byte(e>>c.off)]
				}
			}
			d = f & ascii[c]
			if d&last != 0 {
				return true
			}
			if d == 0 {
				break
			}
		}
		if i >= len(s) {
			return d&m.lastEnd != 0
		}
		if s[i] < utf8.RuneSelf {
			continue // the hot loop stopped on an empty state
		}
		acc, n := m.at(s, i)
		i += n
		d = (m.follow(d) | first) & acc
		if d&last != 0 {
			return true
		}
	}
}

// dfa is the automaton of the simulation made deterministic over ASCII: its states are the
// state words the simulation reaches on ASCII code points, numbered, with the next state of
// each ASCII byte in a table, so that a byte costs one load instead of the word operations of
// the simulation. It is built at Compile when few enough words are reachable.
type dfa struct {
	next  []uint8    // next[q<<7|c]: the state after byte c in state q, or dfaMatch
	words []uint64   // the state word of each state
	start [128]uint8 // the state after the first code point, when it is ASCII, or dfaMatch
	// special is the first state the hot loop leaves on: the state of the empty word, numbered
	// last, when matching stops or skips ahead there (a pattern anchored at the start, or one
	// whose every attempt starts with one byte), else dfaMatch.
	special uint8
}

const (
	maxDFAStates = 64  // states of a dfa: 8 KiB of table at most
	dfaMatch     = 255 // the pattern has matched
)

// newDFA returns the dfa of m, or nil when it would have more than maxDFAStates states.
func newDFA(m *matcher) *dfa {
	t := &dfa{special: dfaMatch}
	index := map[uint64]uint8{}
	state := func(d uint64) (uint8, bool) {
		if d&m.last != 0 {
			return dfaMatch, true
		}
		if q, ok := index[d]; ok {
			return q, true
		}
		if len(t.words) == maxDFAStates {
			return 0, false
		}
		q := uint8(len(t.words))
		index[d] = q
		t.words = append(t.words, d)
		return q, true
	}
	var ok bool
	for c := range t.start {
		if t.start[c], ok = state((m.first | m.firstStart) & m.ascii[c]); !ok {
			return nil
		}
	}
	for q := 0; q < len(t.words); q++ { // words grows as new states are reached
		f := m.follow(t.words[q]) | m.first
		for c := 0; c < 128; c++ {
			next, ok := state(f & m.ascii[c])
			if !ok {
				return nil
			}
			t.next = append(t.next, next)
		}
	}
	if z, ok := index[0]; ok && (m.first == 0 || m.lead >= 0) {
		// number the empty word last: swap it with the last state
		last := uint8(len(t.words) - 1)
		swap := func(q uint8) uint8 {
			switch q {
			case z:
				return last
			case last:
				return z
			}
			return q
		}
		for i, q := range t.next {
			t.next[i] = swap(q)
		}
		for c, q := range t.start {
			t.start[c] = swap(q)
		}
		t.words[z], t.words[last] = t.words[last], t.words[z]
		zrow, lrow := t.next[int(z)<<7:int(z+1)<<7], t.next[int(last)<<7:int(last+1)<<7]
		var tmp [128]uint8
		copy(tmp[:], zrow)
		copy(zrow, lrow)
		copy(lrow, tmp[:])
		t.special = last
	}
	return t
}

// at returns the positions that accept the code point at s[i:] and its length in bytes.
func (m *matcher) at(s string, i int) (uint64, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return m.ascii[c], 1
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	lo, hi := 0, len(m.bounds) // invariant: bounds[lo] <= r, and r < bounds[hi] when hi < len
	for hi-lo > 1 {
		mid := int(uint(lo+hi) >> 1)
		if m.bounds[mid] <= r {
			lo = mid
		} else {
			hi = mid
		}
	}
	return m.masks[lo], n
}

// follow returns the positions that may come right after one of those of d.
func (m *matcher) follow(d uint64) uint64 {
	f := (d<<1)&m.shift | d&m.loop
	if e := d & m.exc; e != 0 {
		for _, c := range m.chunks {
			f |= c.tab[byte(e>>c.off)]
		}
	}
	return f
}

// glu is what the Glushkov construction knows of a subexpression: the conditions under which
// it matches the empty string, and its first and last positions split by whether an anchor
// inside the subexpression restricts them to the start or the end of the subject.
type glu struct {
	null       uint8 // bit c set: matches empty under condition c (see condStart, condEnd)
	first      uint64
	firstStart uint64
	last       uint64
	lastEnd    uint64
}

// builder numbers positions from left to right, so that a concatenation of single positions
// becomes the shift part of the follow function.
type builder struct {
	sets   [][]rune // per position: code-point ranges as pairs, as regexp/syntax writes them
	follow [maxPositions]uint64
	steps  int
	failed bool
}

// newMatcher returns the bit-parallel matcher for the Go translation goSrc of an accepted
// pattern, or nil when the pattern has more than 64 positions or a construct the matcher does
// not handle; the caller then matches with Go's regexp.
func newMatcher(goSrc string) *matcher {
	re, err := syntax.Parse(goSrc, syntax.Perl)
	if err != nil {
		return nil
	}
	b := &builder{}
	g := b.build(re)
	if b.failed {
		return nil
	}
	return b.matcher(g)
}

func (b *builder) position(set []rune) glu {
	p := len(b.sets)
	if p == maxPositions {
		b.failed = true
		return glu{}
	}
	b.sets = append(b.sets, set)
	bit := uint64(1) << p
	return glu{first: bit, last: bit}
}

var anyRune = []rune{0, utf8.MaxRune}

// build returns the Glushkov summary of re and adds its positions and follow pairs.
func (b *builder) build(re *syntax.Regexp) glu {
	b.steps++
	if b.failed || b.steps > maxBuildSteps {
		b.failed = true
		return glu{}
	}
	switch re.Op {
	case syntax.OpNoMatch:
		return glu{}
	case syntax.OpEmptyMatch:
		return glu{null: 1 << 0}
	case syntax.OpBeginText:
		return glu{null: 1 << condStart}
	case syntax.OpEndText:
		return glu{null: 1 << condEnd}
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			b.failed = true
			return glu{}
		}
		g := glu{null: 1 << 0}
		for _, r := range re.Rune {
			g = b.concat(g, b.position([]rune{r, r}))
		}
		return g
	case syntax.OpCharClass:
		return b.position(re.Rune)
	case syntax.OpAnyChar:
		return b.position(anyRune)
	case syntax.OpAnyCharNotNL:
		return b.position([]rune{0, '\n' - 1, '\n' + 1, utf8.MaxRune})
	case syntax.OpCapture:
		return b.build(re.Sub[0])
	case syntax.OpConcat:
		g := glu{null: 1 << 0}
		for _, sub := range re.Sub {
			g = b.concat(g, b.build(sub))
		}
		return g
	case syntax.OpAlternate:
		var g glu
		for _, sub := range re.Sub {
			h := b.build(sub)
			g = glu{g.null | h.null, g.first | h.first, g.firstStart | h.firstStart, g.last | h.last, g.lastEnd | h.lastEnd}
		}
		return g
	case syntax.OpStar:
		return b.quest(b.plus(b.build(re.Sub[0])))
	case syntax.OpPlus:
		return b.plus(b.build(re.Sub[0]))
	case syntax.OpQuest:
		return b.quest(b.build(re.Sub[0]))
	case syntax.OpRepeat:
		return b.repeat(re.Sub[0], re.Min, re.Max)
	}
	// Line anchors and word boundaries: never in a translation, and not handled here.
	b.failed = true
	return glu{}
}

// repeat expands sub{lo,hi} as lo-1 copies then sub+ when hi is unbounded, and as lo copies
// then nested optional copies (x(x(x)?)?)? otherwise: nesting keeps every follow pair of the
// optional tail a shift to the next position.
func (b *builder) repeat(sub *syntax.Regexp, lo, hi int) glu {
	g := glu{null: 1 << 0}
	if hi < 0 {
		for i := 1; i < lo; i++ {
			g = b.concat(g, b.build(sub))
		}
		t := b.plus(b.build(sub))
		if lo == 0 {
			t = b.quest(t)
		}
		return b.concat(g, t)
	}
	for i := 0; i < lo; i++ {
		g = b.concat(g, b.build(sub))
	}
	if hi == lo {
		return g
	}
	// The optional copies are numbered left to right but nested right to left, so build them
	// first and combine from the innermost.
	opt := make([]glu, hi-lo)
	for i := range opt {
		opt[i] = b.build(sub)
	}
	t := b.quest(opt[len(opt)-1])
	for i := len(opt) - 2; i >= 0; i-- {
		t = b.quest(b.concat(opt[i], t))
	}
	return b.concat(g, t)
}

// concat returns the summary of x followed by y and adds the follow pairs between them.
func (b *builder) concat(x, y glu) glu {
	var g glu
	for cx := uint8(0); cx < 4; cx++ {
		for cy := uint8(0); cy < 4; cy++ {
			if x.null&(1<<cx) != 0 && y.null&(1<<cy) != 0 {
				g.null |= 1 << (cx | cy)
			}
		}
	}
	// A path that crosses $ cannot consume afterwards, one that crosses ^ cannot have
	// consumed before: such first and last positions of y and x are dropped.
	g.first = x.first
	g.firstStart = x.firstStart
	if x.null&(1<<0) != 0 {
		g.first |= y.first
		g.firstStart |= y.firstStart
	}
	if x.null&(1<<condStart) != 0 {
		g.firstStart |= y.first | y.firstStart
	}
	g.last = y.last
	g.lastEnd = y.lastEnd
	if y.null&(1<<0) != 0 {
		g.last |= x.last
		g.lastEnd |= x.lastEnd
	}
	if y.null&(1<<condEnd) != 0 {
		g.lastEnd |= x.last | x.lastEnd
	}
	b.link(x.last, y.first)
	return g
}

// plus returns the summary of x+ and adds the follow pairs from one iteration to the next.
// Empty iterations in between are skipped: one that needs no anchor changes nothing, one that
// crosses an anchor cannot sit between two consumed code points.
func (b *builder) plus(x glu) glu {
	g := x
	for changed := true; changed; { // close the empty conditions under repetition
		changed = false
		for c := uint8(0); c < 4; c++ {
			for d := uint8(0); d < 4; d++ {
				if g.null&(1<<c) != 0 && g.null&(1<<d) != 0 && g.null&(1<<(c|d)) == 0 {
					g.null |= 1 << (c | d)
					changed = true
				}
			}
		}
	}
	// First and last positions are those of x: an empty iteration through ^ before the first
	// consuming one, or through $ after the last, only adds a condition to a path that exists
	// without it.
	b.link(x.last, x.first)
	return g
}

func (b *builder) quest(x glu) glu {
	x.null |= 1 << 0
	return x
}

// link adds q to the follow set of every p in from, for every q in to.
func (b *builder) link(from, to uint64) {
	if to == 0 {
		return
	}
	for f := from; f != 0; f &= f - 1 {
		b.follow[bits.TrailingZeros64(f)] |= to
	}
}

// matcher assembles the tables of the automaton whose whole pattern has summary g.
func (b *builder) matcher(g glu) *matcher {
	m := &matcher{
		first:      g.first,
		firstStart: g.firstStart &^ g.first,
		last:       g.last,
		lastEnd:    g.lastEnd &^ g.last,
		// An empty match that needs no anchor, or only one of them, exists in every subject
		// (at any offset, at offset 0, at the end).
		always:     g.null&(1<<0|1<<condStart|1<<condEnd) != 0,
		emptyWhole: g.null&(1<<(condStart|condEnd)) != 0,
	}
	n := len(b.sets)
	for p := 0; p < n; p++ {
		bit := uint64(1) << p
		f := b.follow[p]
		if p+1 < n && f&(bit<<1) != 0 {
			m.shift |= bit << 1
			f &^= bit << 1
		}
		if f&bit != 0 {
			m.loop |= bit
			f &^= bit
		}
		if f != 0 {
			m.exc |= bit
		}
	}
	for k := uint(0); k < maxPositions; k += 8 {
		part := byte(m.exc >> k)
		if part == 0 {
			continue
		}
		tab := new([256]uint64)
		for v := range tab {
			var f uint64
			for q := byte(v) & part; q != 0; q &= q - 1 {
				p := int(k) + bits.TrailingZeros8(q)
				f |= b.follow[p] &^ (uint64(1)<<p | uint64(1)<<(p+1))
			}
			tab[v] = f
		}
		m.chunks = append(m.chunks, chunk{off: k, tab: tab})
	}
	for c := rune(0); c < utf8.RuneSelf; c++ {
		m.ascii[c] = b.accepting(c)
	}
	m.lead = -1
	if m.first != 0 && b.firstOnly(m.first) {
		for c := range m.ascii {
			if m.ascii[c]&m.first != 0 {
				m.lead = c
				break
			}
		}
	}
	// Membership changes only where some range of some position starts or ends.
	cuts := []rune{utf8.RuneSelf}
	for _, set := range b.sets {
		for i := 0; i < len(set); i += 2 {
			for _, r := range [2]rune{set[i], set[i+1] + 1} {
				if r > utf8.RuneSelf && r <= utf8.MaxRune {
					cuts = append(cuts, r)
				}
			}
		}
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	for _, r := range cuts {
		mask := b.accepting(r)
		if len(m.masks) > 0 && m.masks[len(m.masks)-1] == mask {
			continue
		}
		m.bounds = append(m.bounds, r)
		m.masks = append(m.masks, mask)
	}
	m.dfa = newDFA(m)
	return m
}

// accepting returns the positions whose set holds r.
func (b *builder) accepting(r rune) uint64 {
	var mask uint64
	for p, set := range b.sets {
		for i := 0; i < len(set); i += 2 {
			if set[i] <= r && r <= set[i+1] {
				mask |= 1 << p
				break
			}
		}
	}
	return mask
}

// firstOnly reports whether the positions of first all accept one and the same ASCII code
// point and nothing else.
func (b *builder) firstOnly(first uint64) bool {
	lead := rune(-1)
	for f := first; f != 0; f &= f - 1 {
		set := b.sets[bits.TrailingZeros64(f)]
		if len(set) != 2 || set[0] != set[1] || set[0] >= utf8.RuneSelf || lead >= 0 && set[0] != lead {
			return false
		}
		lead = set[0]
	}
	return true
}
