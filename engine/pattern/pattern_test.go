package pattern_test

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/sdods/sdods/engine/pattern"
)

// cases is testdata/cases.json: the portable cases, shared with the other runtimes.
type cases struct {
	Accept []struct {
		Pattern string   `json:"pattern"`
		Match   []string `json:"match"`
		NoMatch []string `json:"noMatch"`
	} `json:"accept"`
	Refuse []struct {
		Pattern string `json:"pattern"`
		Offset  int    `json:"offset"`
	} `json:"refuse"`
}

func mustCases(tb testing.TB) cases {
	tb.Helper()
	b, err := os.ReadFile("testdata/cases.json")
	if err != nil {
		tb.Fatal(err)
	}
	var c cases
	if err := json.Unmarshal(b, &c); err != nil {
		tb.Fatal(err)
	}
	return c
}

func mustCompile(tb testing.TB, src string) *pattern.Pattern {
	tb.Helper()
	p, err := pattern.Compile(src)
	if err != nil {
		tb.Fatalf("Compile(%q): %v", src, err)
	}
	return p
}

func short(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

func TestAccepted(t *testing.T) {
	for _, c := range mustCases(t).Accept {
		t.Run(short(c.Pattern), func(t *testing.T) {
			p := mustCompile(t, c.Pattern)
			if p.String() != c.Pattern {
				t.Errorf("String() = %q, want %q", p.String(), c.Pattern)
			}
			for _, want := range []bool{true, false} {
				subjects := c.Match
				if !want {
					subjects = c.NoMatch
				}
				for _, s := range subjects {
					got, err := p.Match(s)
					if err != nil {
						t.Fatalf("Match(%q): %v", short(s), err)
					}
					if got != want {
						t.Errorf("Match(%q) = %v, want %v", short(s), got, want)
					}
				}
			}
		})
	}
}

func TestRefused(t *testing.T) {
	c := mustCases(t)
	refuse := c.Refuse
	// Invalid UTF-8 cannot be written in JSON.
	for _, x := range []struct {
		Pattern string
		Offset  int
	}{
		{"a\xffb", 1},
		{"\xed\xa0\x80", 0}, // an encoded surrogate
		{"é\xc3", 1},
		{"\x80", 0},
		{strings.Repeat("a", 999) + "\xff", 999},
		{strings.Repeat("a", 1000) + "\xff", 1000},
	} {
		refuse = append(refuse, struct {
			Pattern string `json:"pattern"`
			Offset  int    `json:"offset"`
		}{x.Pattern, x.Offset})
	}
	for _, c := range refuse {
		t.Run(short(c.Pattern), func(t *testing.T) {
			p, err := pattern.Compile(c.Pattern)
			if err == nil {
				t.Fatalf("Compile(%q) accepted, as %q", c.Pattern, p)
			}
			var pe *pattern.Error
			if !errors.As(err, &pe) {
				t.Fatalf("Compile(%q) error %T, want *pattern.Error", c.Pattern, err)
			}
			if pe.Code != pattern.CodeNotPortable || pe.Offset != c.Offset {
				t.Errorf("Compile(%q) = %s at %d (%s), want %s at %d", short(c.Pattern), pe.Code, pe.Offset, pe.Message, pattern.CodeNotPortable, c.Offset)
			}
			if strings.Contains(pe.Message, "internal") {
				t.Errorf("Compile(%q): %v", c.Pattern, pe)
			}
		})
	}
}

func TestLimits(t *testing.T) {
	mustCompile(t, strings.Repeat("a", pattern.MaxPatternCodePoints))
	mustCompile(t, strings.Repeat("😀", pattern.MaxPatternCodePoints))
	mustCompile(t, strings.Repeat("(", 499)+"a"+strings.Repeat(")", 499))
	mustCompile(t, strings.Repeat("(?:", 249)+"a"+strings.Repeat(")", 249))
	mustCompile(t, strings.Repeat("a{100}", 10))

	p := mustCompile(t, "^.*$")
	for _, tc := range []struct {
		name    string
		subject string
		tooLong bool
	}{
		{"10000 ASCII", strings.Repeat("a", 10000), false},
		{"10000 astral", strings.Repeat("😀", 10000), false},
		{"10001 ASCII", strings.Repeat("a", 10001), true},
		{"10001 astral", strings.Repeat("😀", 10001), true},
		{"10001 invalid bytes", strings.Repeat("\xff", 10001), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, err := p.Match(tc.subject)
			if !tc.tooLong {
				if err != nil || !ok {
					t.Fatalf("Match = %v, %v; want true, nil", ok, err)
				}
				return
			}
			var pe *pattern.Error
			if !errors.As(err, &pe) || pe.Code != pattern.CodeSubjectTooLong || pe.Offset != pattern.MaxSubjectCodePoints {
				t.Fatalf("Match = %v, %v; want %s", ok, err, pattern.CodeSubjectTooLong)
			}
		})
	}
}

// TestInvalidSubject pins that each invalid byte of a subject is one code point U+FFFD.
func TestInvalidSubject(t *testing.T) {
	p := mustCompile(t, "^a.b$")
	if ok, err := p.Match("a\xffb"); err != nil || !ok {
		t.Fatalf("Match = %v, %v", ok, err)
	}
	if ok, err := p.Match("a\xff\xffb"); err != nil || ok {
		t.Fatalf("Match = %v, %v", ok, err)
	}
}
