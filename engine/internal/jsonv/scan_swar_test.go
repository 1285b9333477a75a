package jsonv

import (
	"math/bits"
	"math/rand"
	"testing"
)

// TestNotPlain checks the word-at-a-time test of String against the byte table: for every byte
// at every position among plain neighbours, and for random words, notPlain is nonzero exactly
// when some byte is not plain.
func TestNotPlain(t *testing.T) {
	word := func(b [8]byte) uint64 {
		var w uint64
		for k := 7; k >= 0; k-- {
			w = w<<8 | uint64(b[k])
		}
		return w
	}
	want := func(b [8]byte) bool {
		for _, c := range b {
			if !plain[c] {
				return true
			}
		}
		return false
	}
	for pos := 0; pos < 8; pos++ {
		for c := 0; c < 256; c++ {
			for _, fill := range []byte{' ', '!', '#', '[', ']', 'a', '~', 0x7f} {
				var b [8]byte
				for k := range b {
					b[k] = fill
				}
				b[pos] = byte(c)
				if got := notPlain(word(b)) != 0; got != want(b) {
					t.Fatalf("%q: notPlain %v, want %v", b[:], got, want(b))
				}
			}
		}
	}
	r := rand.New(rand.NewSource(1))
	for n := 0; n < 1_000_000; n++ {
		var b [8]byte
		for k := range b {
			if r.Intn(4) == 0 {
				b[k] = byte(r.Intn(256))
			} else {
				b[k] = byte(0x20 + r.Intn(0x60))
			}
		}
		if got := notPlain(word(b)) != 0; got != want(b) {
			t.Fatalf("%q: notPlain %v, want %v", b[:], got, want(b))
		}
	}
}

// TestNotPlainFirst checks that the lowest bit notPlain sets is in the first byte that is not
// plain, which String skips to.
func TestNotPlainFirst(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	for n := 0; n < 1_000_000; n++ {
		var b [8]byte
		var w uint64
		first := 8
		for k := 0; k < 8; k++ {
			if r.Intn(5) == 0 {
				b[k] = byte(r.Intn(256))
			} else {
				b[k] = byte(0x20 + r.Intn(0x60))
			}
			if first == 8 && !plain[b[k]] {
				first = k
			}
			w |= uint64(b[k]) << (8 * k)
		}
		m := notPlain(w)
		if first == 8 {
			if m != 0 {
				t.Fatalf("%q: notPlain %#x, want 0", b[:], m)
			}
			continue
		}
		if got := bits.TrailingZeros64(m) / 8; got != first {
			t.Fatalf("%q: first not plain at %d, notPlain says %d", b[:], first, got)
		}
	}
}

// TestKeepName checks that member names read from borrowed text are copies (the text may change
// once the scanner is released), in a second text too, and that no value is kept in the scanner.
func TestKeepName(t *testing.T) {
	for round := 0; round < 2; round++ {
		data := []byte(`{"email":"a@b.ch","a-name-longer-than-the-limit":"x","email2":"secret-value"}`)
		sc := Borrow(data)
		m, ok := sc.Object(8)
		if !ok {
			t.Fatal("not decoded")
		}
		for _, n := range sc.names {
			if n == "a@b.ch" || n == "secret-value" || n == "x" {
				t.Fatalf("value %q kept in the scanner", n)
			}
		}
		sc.Release()
		for i := range data {
			data[i] = '#'
		}
		want := map[string]any{"email": "a@b.ch", "a-name-longer-than-the-limit": "x", "email2": "secret-value"}
		if len(m) != len(want) {
			t.Fatalf("round %d: %v", round, m)
		}
		for k, v := range want {
			if m[k] != v {
				t.Fatalf("round %d: %q is %v, want %v", round, k, m[k], v)
			}
		}
	}
}

// TestKeyWords checks Key's names and words against String and Word: names of every length
// around the one- and two-word loads, plain, escaped or not ASCII, at the end of the text and
// before more of it; a duplicate says no, and so does a name that differs from an earlier one
// only past its eighth byte or only in length.
func TestKeyWords(t *testing.T) {
	bases := []string{"abcdefghijklmnopqrstu", `a\"cdefghijklmnopqrs`, "äbcdefghijklmnopqr", `ab\u0000defghijklmnop`}
	for _, base := range bases {
		for n := 0; n <= len(base); n++ {
			for _, after := range []string{`:1}`, `:1,"zzzzzzzzzzzzzzzzzzzz":2}`} {
				text := `"` + base[:n] + `"` + after
				ref := Borrow([]byte(text))
				want, wantOK := ref.String()
				wantOK = wantOK && ref.Next(':')
				sc := Borrow([]byte(text))
				mark := sc.Mark()
				k, w, ok := sc.Key(mark)
				if ok != wantOK || ok && (k != want || w != Word(want)) {
					t.Fatalf("%s: Key %q %x %v, want %q %x %v", text, k, w, ok, want, Word(want), wantOK)
				}
				if !ok {
					continue
				}
				if sc.Skip(1); !sc.Next(',') {
					continue
				}
				if k2, _, ok := sc.Key(mark); !ok || k2 != "zzzzzzzzzzzzzzzzzzzz" {
					t.Fatalf("%s: second name %q %v", text, k2, ok)
				}
				sc.Unmark(mark)
			}
		}
	}
	for _, tc := range []struct {
		text string
		dup  bool
	}{
		{`{"a":1,"a":2}`, true},
		{`{"abcdefgh":1,"abcdefgh":2}`, true},
		{`{"abcdefghi":1,"abcdefghj":2}`, false},
		{`{"abcdefghijklmnopq":1,"abcdefghijklmnopr":2}`, false},
		{`{"abcdefghijklmnopq":1,"abcdefghijklmnopq":2}`, true},
		{`{"ab":1,"ab\u0000":2}`, false},
		{`{"":1,"\u0000":2}`, false},
		{`{"":1,"":2}`, true},
		{`{"ab\u0063":1,"abc":2}`, true},
	} {
		if _, ok := Borrow([]byte(tc.text)).Value(2); ok == tc.dup {
			t.Errorf("%s: Value ok %v", tc.text, ok)
		}
		if ok := Borrow([]byte(tc.text)).Skip(2); ok == tc.dup {
			t.Errorf("%s: Skip ok %v", tc.text, ok)
		}
	}
}

// TestShortStrings checks Value's word-at-a-time strings (in an arena) against String's, for
// strings of every length around the two loads, plain, escaped, not ASCII or cut short.
func TestShortStrings(t *testing.T) {
	bases := []string{"abcdefghijklmnopqrstu", `a\"cdefghijklmnopqrs`, "äbcdefghijklmnopqr", `abcdefghijklmno\n`, "abc\x01efgh", "abcdefghijklm\xff"}
	var a Arena
	for _, base := range bases {
		for n := 0; n <= len(base); n++ {
			for _, after := range []string{``, `"`, `"]`, `"                  ]`} {
				text := `"` + base[:n] + after
				ref := Borrow([]byte(text))
				want, wantOK := ref.String()
				sc := Borrow([]byte(text))
				sc.Use(&a)
				v, ok := sc.Value(1)
				if ok != wantOK || ok && (v != want || sc.i != ref.i) {
					t.Fatalf("%q: Value %q %v at %d, want %q %v at %d", text, v, ok, sc.i, want, wantOK, ref.i)
				}
				sc.Release()
				a.Reset()
			}
		}
	}
}
