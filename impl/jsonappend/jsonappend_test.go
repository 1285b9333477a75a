package jsonappend_test

import (
	"encoding/json"
	"math/rand"
	"testing"

	"github.com/google/uuid"

	"github.com/sdods/sdods/impl/jsonappend"
)

// String and UUID write exactly what encoding/json writes, on the characters it treats specially
// and on random bytes (invalid UTF-8 included).
func TestSameAsEncodingJSON(t *testing.T) {
	cases := []string{"", "plain", `quote " backslash \`, "<a href='x'>&amp;</a>", "\b\f\n\r\t\x00\x1f\x7f",
		"caf\u00e9 \u2028 \u2029 \U0001F600", "bad \xff \xc3 end", "\xed\xa0\x80 encoded surrogate"}
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 2000; i++ {
		b := make([]byte, r.Intn(24))
		r.Read(b)
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		want, _ := json.Marshal(s)
		if got := jsonappend.String(nil, s); string(got) != string(want) {
			t.Fatalf("String(%q) = %s, encoding/json %s", s, got, want)
		}
	}
	for i := 0; i < 100; i++ {
		u := uuid.New()
		want, _ := json.Marshal(u)
		if got := jsonappend.UUID([]byte("x"), u); string(got) != "x"+string(want) {
			t.Fatalf("UUID(%s) = %s, encoding/json %s", u, got, want)
		}
	}
}
