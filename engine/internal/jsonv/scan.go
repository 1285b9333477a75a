package jsonv

import (
	"math/bits"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/sdods/sdods/engine/internal/num"
)

// Scanner reads one JSON text in a single pass, straight into the engine's values (nil, bool,
// float64, string, []any, map[string]any), without a tree in between. It is the fast path of
// request decoding: it accepts only what Decode followed by the request checks would accept
// unchanged, and says no (ok false) to anything else — malformed JSON, a duplicate member, a
// number beyond double range, text Decode refuses (invalid UTF-8, a lone surrogate escape:
// CheckText), nesting past the limit. The caller then runs the slow path, which names the
// problem. The input is copied once into a string; strings without escapes are slices of it.
type Scanner struct {
	s string
	i int
	// borrowed: s is the caller's bytes, not a copy (see Borrow), so the strings Value and
	// Object keep are copied
	borrowed bool
	items    []any  // scratch for array elements, used as a stack
	buf      []byte // scratch for strings with escapes
	keys     []name // scratch: the member names of the objects being read (see Key), as a stack
	// member names kept from borrowed text (see keepName), by a hash of the name: requests
	// repeat the same few, in every element of a list
	names [64]string
	// the values Value returns are boxed in these (see box): a few allocations per text rather
	// than one per string or number; reused from one text to the next only
	// through an Arena (see Use)
	strs  []string
	nums  []float64
	boxed int // strings boxed in this text
	// where maps, lists and slabs come from when the caller reuses them (see Use); nil: new
	// ones per text
	arena *Arena
}

var scanners = sync.Pool{New: func() any { return new(Scanner) }}

// NewScanner returns a pooled scanner over data; give it back with Release.
func NewScanner(data []byte) *Scanner {
	sc := scanners.Get().(*Scanner)
	sc.s, sc.i, sc.borrowed = string(data), 0, false
	return sc
}

// Borrow returns a pooled scanner reading data itself rather than a copy, for a caller that
// keeps data unchanged until it has released the scanner and keeps only what Value and Object
// return (their strings are copies): strings the other methods return are part of data. Give
// the scanner back with Release.
func Borrow(data []byte) *Scanner {
	sc := scanners.Get().(*Scanner)
	sc.s, sc.i, sc.borrowed = "", 0, true
	if len(data) > 0 {
		sc.s = unsafe.String(&data[0], len(data))
	}
	return sc
}

// Keep returns s, a string of the text, as a value to keep: copied when the text is borrowed
// and s part of it (a string with an escape is already a copy).
func (sc *Scanner) Keep(s string) string {
	if !sc.borrowed || len(s) == 0 {
		return s
	}
	base, p := uintptr(unsafe.Pointer(unsafe.StringData(sc.s))), uintptr(unsafe.Pointer(unsafe.StringData(s)))
	if p < base || p-base >= uintptr(len(sc.s)) {
		return s
	}
	return strings.Clone(s)
}

// Expect sizes the first slab of the strings Value boxes (see boxString) for n of them: a
// caller that knows about how many strings it keeps (see Boxed) allocates no more than it needs.
func (sc *Scanner) Expect(n int) {
	if cap(sc.strs) == 0 && n > 0 {
		sc.strs = make([]string, 0, n)
	}
}

// Boxed returns how many strings Value has returned (and boxed) since the scanner was taken.
func (sc *Scanner) Boxed() int { return sc.boxed }

// eface is the layout of an interface value without methods (as in package runtime).
type eface struct {
	typ, data unsafe.Pointer
}

// The type words of string and float64 in an interface value.
var (
	stringType  = typeOf("")
	float64Type = typeOf(float64(1))
)

func typeOf(v any) unsafe.Pointer { return (*eface)(unsafe.Pointer(&v)).typ }

// slab is how many values a scanner's first slab of strings or numbers holds (see Expect); the
// next ones double.
const slab = 4

// boxString returns s as an interface value whose data is a slot of the scanner's slab of
// strings: what any(s) returns, without allocating per string. A slot is written once, and
// strings are immutable, so values sharing a slab are independent.
func (sc *Scanner) boxString(s string) (v any) {
	if len(sc.strs) == cap(sc.strs) {
		sc.strs = make([]string, 0, max(slab, 2*cap(sc.strs)))
	}
	sc.strs = append(sc.strs, s)
	sc.boxed++
	e := (*eface)(unsafe.Pointer(&v))
	e.typ, e.data = stringType, unsafe.Pointer(&sc.strs[len(sc.strs)-1])
	return v
}

// boxNumber returns f as an interface value, as boxString does a string.
func (sc *Scanner) boxNumber(f float64) (v any) {
	if len(sc.nums) == cap(sc.nums) {
		sc.nums = make([]float64, 0, max(slab, 2*cap(sc.nums)))
	}
	sc.nums = append(sc.nums, f)
	e := (*eface)(unsafe.Pointer(&v))
	e.typ, e.data = float64Type, unsafe.Pointer(&sc.nums[len(sc.nums)-1])
	return v
}

// maxName is the longest member name keepName keeps in Scanner.names.
const maxName = 24

// keepName returns the member name k, a string of the text, as a value to keep: as Keep does,
// but a name kept before by this scanner is shared rather than copied again. Only the names
// stay in the scanner from one text to the next (strings do not change, so sharing one is
// copying it), never a value.
func (sc *Scanner) keepName(k string) string {
	if !sc.borrowed || sc.arena != nil {
		return k
	}
	if n := len(k); n > 0 && n <= maxName {
		h := (uint(n)*31 + uint(k[0])*7 + uint(k[n-1])) % uint(len(sc.names))
		if sc.names[h] == k {
			return sc.names[h]
		}
		c := strings.Clone(k)
		sc.names[h] = c
		return c
	}
	return strings.Clone(k)
}

// Release returns the scanner to the pool; nothing it decoded is kept.
func (sc *Scanner) Release() {
	clear(sc.items[:cap(sc.items)])
	sc.items = sc.items[:0]
	clear(sc.keys[:cap(sc.keys)])
	sc.keys = sc.keys[:0]
	sc.s, sc.i, sc.borrowed = "", 0, false
	if sc.arena != nil {
		sc.takeSlabs()
		sc.arena = nil
	}
	sc.strs, sc.nums, sc.boxed = nil, nil, 0 // (the values boxed in them may outlive the scanner)
	if cap(sc.buf) > 1<<16 {
		sc.buf = nil
	}
	if cap(sc.items) > 1<<12 {
		sc.items = nil
	}
	if cap(sc.keys) > 1<<10 {
		sc.keys = nil
	}
	scanners.Put(sc)
}

func (sc *Scanner) ws() {
	s, i := sc.s, sc.i
	for i < len(s) {
		switch s[i] {
		case ' ':
			// a run of spaces (indentation), a word at a time
			for len(s)-i >= 8 {
				t := s[i : i+8] // (one bounds check, and the loads merge into one)
				w := uint64(t[0]) | uint64(t[1])<<8 | uint64(t[2])<<16 | uint64(t[3])<<24 |
					uint64(t[4])<<32 | uint64(t[5])<<40 | uint64(t[6])<<48 | uint64(t[7])<<56
				if w ^= spaces; w != 0 {
					i += bits.TrailingZeros64(w) / 8
					break
				}
				i += 8
			}
			if i < len(s) && s[i] == ' ' {
				i++
			}
		case '\n', '\t', '\r':
			i++
		default:
			sc.i = i
			return
		}
	}
	sc.i = i
}

// spaces is eight spaces as a little-endian word.
const spaces = 0x2020202020202020

// Peek returns the next byte that is not white space, or 0 at the end. It inlines: the usual
// case, no white space, costs a comparison.
func (sc *Scanner) Peek() byte {
	if i := sc.i; i < len(sc.s) && sc.s[i] > ' ' {
		return sc.s[i]
	}
	return sc.peekSpace()
}

// Space reports whether white space (or the end) comes next: Consume(c) can then hold where
// Next(c) did not. It inlines, so that sc.Next(c) || sc.Space() && sc.Consume(c) makes no call
// in compact text when c does not come next (an object's first member, where '}' is tried).
func (sc *Scanner) Space() bool {
	return sc.i >= len(sc.s) || sc.s[sc.i] <= ' '
}

// Near returns the next byte when it is not white space (ok false otherwise, or at the end),
// without a call: Peek does not inline (its call to peekSpace puts it over the inliner's
// budget), so the loops over values read c, ok := sc.Near() and call Peek only when !ok.
func (sc *Scanner) Near() (c byte, ok bool) {
	if i := sc.i; i < len(sc.s) && sc.s[i] > ' ' {
		return sc.s[i], true
	}
	return 0, false
}

// peekSpace is Peek after white space.
func (sc *Scanner) peekSpace() byte {
	sc.ws()
	if sc.i < len(sc.s) {
		return sc.s[sc.i]
	}
	return 0
}

// Consume skips white space and c when c comes next, reporting whether it did.
func (sc *Scanner) Consume(c byte) bool {
	if sc.Next(c) {
		return true
	}
	return sc.consumeSpace(c)
}

// Next consumes c when it is the very next byte, with no white space before it. It inlines
// where Consume does not (the call to consumeSpace puts Consume over the inliner's budget), so
// a loop over compact text calls Consume only after white space: sc.Next(c) || sc.Consume(c).
func (sc *Scanner) Next(c byte) bool {
	if i := sc.i; i < len(sc.s) && sc.s[i] == c {
		sc.i = i + 1
		return true
	}
	return false
}

// After reads what follows a member or an element (a loop over compact text tries
// sc.Next(',') first, which inlines): a comma (more true) or close (more false);
// ok is false for anything else. (One call where sc.Next(',') || sc.Consume(',') then the same
// for close made two at the end of every object and list.)
func (sc *Scanner) After(close byte) (more, ok bool) {
	switch {
	case sc.Next(','):
		return true, true
	case sc.Next(close):
		return false, true
	case sc.Consume(','):
		return true, true
	}
	return false, sc.Consume(close)
}

// consumeSpace is Consume when c is not the next byte.
func (sc *Scanner) consumeSpace(c byte) bool {
	if i := sc.i; i < len(sc.s) && sc.s[i] > ' ' {
		return false // no white space, and c is not next
	}
	if sc.peekSpace() == c {
		sc.i++
		return true
	}
	return false
}

// End reports whether only white space remains.
func (sc *Scanner) End() bool {
	sc.Peek()
	return sc.i == len(sc.s)
}

// Null consumes the literal null when it comes next.
func (sc *Scanner) Null() bool {
	if _, near := sc.Near(); !near {
		sc.Peek()
	}
	if len(sc.s)-sc.i >= 4 && sc.s[sc.i:sc.i+4] == "null" {
		sc.i += 4
		return true
	}
	return false
}

// plain marks the bytes a string holds as they are: printable ASCII but the quote and the
// backslash.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// notPlain is nonzero when one of the eight bytes of w (little-endian) is not plain: below
// 0x20, a quote, a backslash or 0x80 and above. (Each term sets the high bit of a byte for which
// it holds; a borrow can set it in a higher byte too, but only above one for which it holds, so
// the lowest bit set is in the first byte that is not plain. The terms for the quote and the
// backslash, x-1 of x the byte xor the character, may also set it for a byte of 0x80 and above,
// which w's own high bit already marks.)
func notPlain(w uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	q := w ^ ('"' * ones)
	b := w ^ ('\\' * ones)
	return (w | (w - 0x20*ones) | (q - ones) | (b - ones)) & highs
}

// String reads a string.
func (sc *Scanner) String() (string, bool) {
	if !(sc.Next('"') || sc.Consume('"')) {
		return "", false
	}
	// the usual case, printable ASCII up to the closing quote, in a loop over locals
	s, i := sc.s, sc.i
	start := i
	// eight bytes at a time up to the first that is not plain, then the rest a byte at a time
	for len(s)-i >= 8 {
		t := s[i : i+8] // (one bounds check, and the loads merge into one)
		w := uint64(t[0]) | uint64(t[1])<<8 | uint64(t[2])<<16 | uint64(t[3])<<24 |
			uint64(t[4])<<32 | uint64(t[5])<<40 | uint64(t[6])<<48 | uint64(t[7])<<56
		if m := notPlain(w); m != 0 {
			i += bits.TrailingZeros64(m) / 8 // the first byte that is not plain
			goto end
		}
		i += 8
	}
	for i < len(s) && plain[s[i]] {
		i++
	}
end:
	if i < len(s) && s[i] == '"' {
		sc.i = i + 1
		return s[start:i], true
	}
	return sc.stringRest(start, i)
}

// stringRest finishes a string that started at start and holds more than printable ASCII from
// i on.
func (sc *Scanner) stringRest(start, i int) (string, bool) {
	sc.i = i
	ascii := true
	for sc.i < len(sc.s) {
		c := sc.s[sc.i]
		switch {
		case c == '"':
			s := sc.s[start:sc.i]
			sc.i++
			if !ascii && !utf8.ValidString(s) {
				return "", false
			}
			return s, true
		case c == '\\':
			return sc.escaped(start)
		case c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			ascii = false
		}
		sc.i++
	}
	return "", false
}

// escaped finishes a string that holds an escape; start is the offset after the opening quote.
func (sc *Scanner) escaped(start int) (string, bool) {
	b := append(sc.buf[:0], sc.s[start:sc.i]...)
	defer func() { sc.buf = b[:0] }()
	for sc.i < len(sc.s) {
		c := sc.s[sc.i]
		switch {
		case c == '"':
			sc.i++
			if !utf8.Valid(b) {
				return "", false
			}
			return string(b), true
		case c < 0x20:
			return "", false
		case c != '\\':
			b = append(b, c)
			sc.i++
			continue
		}
		if sc.i+1 >= len(sc.s) {
			return "", false
		}
		e := sc.s[sc.i+1]
		sc.i += 2
		switch e {
		case '"', '\\', '/':
			b = append(b, e)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, ok := sc.hex4()
			if !ok {
				return "", false
			}
			if utf16.IsSurrogate(r) {
				// only a well-formed pair; Decode refuses the rest (CheckText) and says where
				if r >= 0xdc00 || len(sc.s)-sc.i < 2 || sc.s[sc.i] != '\\' || sc.s[sc.i+1] != 'u' {
					return "", false
				}
				sc.i += 2
				r2, ok := sc.hex4()
				if !ok {
					return "", false
				}
				r = utf16.DecodeRune(r, r2)
				if r == utf8.RuneError {
					return "", false
				}
			}
			b = utf8.AppendRune(b, r)
		default:
			return "", false
		}
	}
	return "", false
}

func (sc *Scanner) hex4() (rune, bool) {
	if len(sc.s)-sc.i < 4 {
		return 0, false
	}
	var r rune
	for k := 0; k < 4; k++ {
		c := sc.s[sc.i+k]
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	sc.i += 4
	return r, true
}

// number reads a number by the JSON grammar; numbers of at most 15 digits without an exponent
// are converted here, everything else by num.Parse.
func (sc *Scanner) number() (float64, bool) {
	start := sc.i
	s := sc.s
	i := sc.i
	neg := false
	if i < len(s) && s[i] == '-' {
		neg = true
		i++
	}
	if i >= len(s) {
		return 0, false
	}
	digits := i
	switch {
	case s[i] == '0':
		i++
	case s[i] >= '1' && s[i] <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	default:
		return 0, false
	}
	plain := i-digits <= 15
	point, frac := -1, 0 // the decimal point's offset, and how many digits follow it
	if i < len(s) && s[i] == '.' {
		point = i
		i++
		k := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == k {
			return 0, false
		}
		frac = i - k
		plain = plain && i-digits-1 <= 15
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		plain = false
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		k := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == k {
			return 0, false
		}
	}
	sc.i = i
	if plain {
		// at most 15 digits: their integer is exact as a double, and so is a power of ten up to
		// 1e22, so one division rounds as parsing the text does (strconv's exact case); zero
		// is positive, as num.Parse makes it
		var n int64
		end := i
		if point >= 0 {
			end = point
		}
		for k := digits; k < end; k++ {
			n = n*10 + int64(s[k]-'0')
		}
		for k := end + 1; k < i; k++ {
			n = n*10 + int64(s[k]-'0')
		}
		f := float64(n)
		if frac > 0 {
			f /= pow10[frac]
		}
		if neg && n != 0 {
			f = -f
		}
		return f, true
	}
	return num.Parse(s[start:i])
}

// pow10 are the powers of ten a number of at most 15 digits is divided by (see number).
var pow10 = [16]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// Value reads any value as an engine value; arrays and objects may nest at most depth deep
// (an object or array counts one).
func (sc *Scanner) Value(depth int) (any, bool) {
	c, near := sc.Near()
	if !near {
		c = sc.Peek()
	}
	switch c {
	case '{':
		return sc.Object(depth)
	case '[':
		if depth < 1 {
			return nil, false
		}
		sc.i++
		base := len(sc.items)
		if !(sc.Next(']') || sc.Space() && sc.Consume(']')) {
			for {
				v, ok := sc.Value(depth - 1)
				if !ok {
					sc.items = sc.items[:base]
					return nil, false
				}
				sc.items = append(sc.items, v)
				if sc.Next(',') {
					continue
				}
				if sc.Next(']') {
					break
				}
				more, ok := sc.After(']')
				if more {
					continue
				}
				if ok {
					break
				}
				sc.items = sc.items[:base]
				return nil, false
			}
		}
		out := sc.newList(sc.items[base:])
		clear(sc.items[base:])
		sc.items = sc.items[:base]
		return sc.boxList(out), true
	case '"':
		if sc.arena != nil {
			// the usual string, printable ASCII of fewer than sixteen bytes, a word at a time
			// without String's call
			if s, i := sc.s, sc.i; len(s)-i >= 17 {
				t := s[i+1 : i+17]
				n := 16
				if m := notPlain(load64(t[:8])); m != 0 {
					n = bits.TrailingZeros64(m) / 8
				} else if m := notPlain(load64(t[8:16])); m != 0 {
					n = 8 + bits.TrailingZeros64(m)/8
				}
				if n < 16 && t[n] == '"' {
					sc.i = i + 2 + n
					return sc.boxString(t[:n]), true
				}
			}
		}
		s, ok := sc.String()
		if !ok {
			return nil, false
		}
		if sc.arena == nil {
			s = sc.Keep(s)
		}
		return sc.boxString(s), true
	case 't':
		if len(sc.s)-sc.i >= 4 && sc.s[sc.i:sc.i+4] == "true" {
			sc.i += 4
			return true, true
		}
	case 'f':
		if len(sc.s)-sc.i >= 5 && sc.s[sc.i:sc.i+5] == "false" {
			sc.i += 5
			return false, true
		}
	case 'n':
		if sc.Null() {
			return nil, true
		}
	default:
		f, ok := sc.number()
		if !ok {
			return nil, false
		}
		return sc.boxNumber(f), true
	}
	return nil, false
}

// Object reads an object as a map[string]any (see Value); a duplicate member says no.
func (sc *Scanner) Object(depth int) (map[string]any, bool) {
	if depth < 1 || !(sc.Next('{') || sc.Consume('{')) {
		return nil, false
	}
	m := sc.newMap()
	if sc.Next('}') || sc.Space() && sc.Consume('}') {
		return m, true
	}
	for {
		k, _, ok := sc.Name()
		if !ok {
			return nil, false
		}
		v, ok := sc.Value(depth - 1)
		if !ok {
			return nil, false
		}
		if sc.arena == nil {
			k = sc.keepName(k)
		}
		n := len(m)
		m[k] = v
		if len(m) == n {
			return nil, false
		}
		if sc.Next(',') {
			continue
		}
		if sc.Next('}') {
			return m, true
		}
		more, ok := sc.After('}')
		if more {
			continue
		}
		if ok {
			return m, true
		}
		return nil, false
	}
}

// MaxKeys is the most members an object read with Key may have: the names are compared one by
// one, so a larger object says no and is left to the slow path. (A caller reading names with
// Name and Unique keeps to it too.)
const MaxKeys = 32

// Mark starts the member names of an object read with Key; Unmark(mark) ends them.
func (sc *Scanner) Mark() int { return len(sc.keys) }

// Unmark drops the member names read with Key since Mark returned mark. (They stay in the
// scratch's storage until Release clears it: they are part of the same text, and clearing them
// per object costs a call.)
func (sc *Scanner) Unmark(mark int) {
	sc.keys = sc.keys[:mark]
}

// name is a member name read with Key, and its Word.
type name struct {
	w uint64
	s string
}

// Word returns the first eight bytes of k (fewer when k is shorter) as a little-endian word, the
// rest zero. Two names of at most eight bytes are equal when their lengths and words are: Name
// and Key return it, so a caller matching the names it expects compares two words, not two
// strings.
func Word(k string) uint64 {
	var w uint64
	for i := 0; i < len(k) && i < 8; i++ {
		w |= uint64(k[i]) << (8 * i)
	}
	return w
}

// Key reads a member name and the colon after it, and returns the name's Word too; a name
// already read since mark (a duplicate member) says no, and so does a name past MaxKeys.
func (sc *Scanner) Key(mark int) (string, uint64, bool) {
	k, w, ok := sc.Name()
	if !ok || !sc.Unique(mark, k, w) {
		return "", 0, false
	}
	return k, w, true
}

// Unique records the member name k (of Word w) read since mark, reporting whether it is new
// there and within MaxKeys of mark. A caller that tells some names apart itself (a name it
// expects, once) records only the others.
func (sc *Scanner) Unique(mark int, k string, w uint64) bool {
	if len(sc.keys)-mark >= MaxKeys {
		return false
	}
	for _, seen := range sc.keys[mark:] {
		// (words and lengths first: they settle names of up to eight bytes without memequal's call)
		if seen.w == w && len(seen.s) == len(k) && (len(k) <= 8 || seen.s == k) {
			return false
		}
	}
	sc.keys = append(sc.keys, name{w, k})
	return true
}

// Name reads a member name and the colon after it, and returns the name's Word too; it checks
// nothing against the names before (see Key and Unique). Names are short: one of at most
// sixteen bytes of printable ASCII with its colon right after is read, and its word taken, a
// word at a time (when the text has the bytes to load after its opening quote); any other by
// String.
func (sc *Scanner) Name() (string, uint64, bool) {
	s, i := sc.s, sc.i
	if len(s)-i >= 18 && s[i] == '"' {
		t := s[i+1 : i+18]
		w := load64(t[:8])
		if m := notPlain(w); m != 0 {
			n := bits.TrailingZeros64(m) / 8 // (below 8)
			if t[n] == '"' && t[n+1] == ':' {
				sc.i = i + 3 + n
				return t[:n], w & (1<<(8*n) - 1), true
			}
		} else if m := notPlain(load64(t[8:16])); m != 0 {
			n := 8 + bits.TrailingZeros64(m)/8 // (below 16)
			if t[n] == '"' && t[n+1] == ':' {
				sc.i = i + 3 + n
				return t[:n], w, true
			}
		}
	}
	k, ok := sc.String()
	if !ok || !(sc.Next(':') || sc.Consume(':')) {
		return "", 0, false
	}
	return k, Word(k), true
}

// load64 returns the first eight bytes of t as a little-endian word.
func load64(t string) uint64 {
	t = t[:8] // (one bounds check, and the loads merge into one)
	return uint64(t[0]) | uint64(t[1])<<8 | uint64(t[2])<<16 | uint64(t[3])<<24 |
		uint64(t[4])<<32 | uint64(t[5])<<40 | uint64(t[6])<<48 | uint64(t[7])<<56
}

// Skip reads any value as Value does, keeping nothing: it says no where Value would.
func (sc *Scanner) Skip(depth int) bool {
	c, near := sc.Near()
	if !near {
		c = sc.Peek()
	}
	switch c {
	case '{':
		if depth < 1 {
			return false
		}
		sc.i++
		if sc.Next('}') || sc.Space() && sc.Consume('}') {
			return true
		}
		mark := sc.Mark()
		defer sc.Unmark(mark)
		for {
			if _, _, ok := sc.Key(mark); !ok || !sc.Skip(depth-1) {
				return false
			}
			if more, ok := sc.After('}'); !more {
				return ok
			}
		}
	case '[':
		if depth < 1 {
			return false
		}
		sc.i++
		if sc.Next(']') || sc.Space() && sc.Consume(']') {
			return true
		}
		for {
			if !sc.Skip(depth - 1) {
				return false
			}
			if more, ok := sc.After(']'); !more {
				return ok
			}
		}
	case '"':
		_, ok := sc.String()
		return ok
	case 't':
		return sc.literal("true")
	case 'f':
		return sc.literal("false")
	case 'n':
		return sc.Null()
	}
	_, ok := sc.number()
	return ok
}

func (sc *Scanner) literal(word string) bool {
	if len(sc.s)-sc.i >= len(word) && sc.s[sc.i:sc.i+len(word)] == word {
		sc.i += len(word)
		return true
	}
	return false
}
