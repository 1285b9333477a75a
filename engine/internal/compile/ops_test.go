package compile

import (
	"strings"
	"testing"
)

// trimSpace must remove exactly what strings.Trim with the six ASCII white space characters
// removes: every string of up to three bytes over an alphabet of spaces, their neighbours, other
// white space and the bytes of multi-byte sequences, and longer ones around text.
func TestTrimSpaceMatchesStringsTrim(t *testing.T) {
	const cutset = "\t\n\v\f\r "
	alphabet := []string{"", "\t", "\n", "\v", "\f", "\r", " ", "\x08", "\x0e", "\x1f", "!", "a", "\u00a0", "\u2003", "\x85", "\xa0", "é", "\xff"}
	check := func(s string) {
		t.Helper()
		if got, want := trimSpace(s), strings.Trim(s, cutset); got != want {
			t.Fatalf("trimSpace(%q) = %q, want %q", s, got, want)
		}
	}
	for _, a := range alphabet {
		for _, b := range alphabet {
			for _, c := range alphabet {
				check(a + b + c)
				check(a + b + " x y " + c + b)
			}
		}
	}
	for c := range 256 {
		check(string(rune(c)))
		check(string([]byte{byte(c)}) + "mid" + string([]byte{byte(c)}))
	}
}
