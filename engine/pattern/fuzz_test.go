package pattern_test

import (
	"errors"
	"regexp"
	"testing"
	"unicode/utf8"

	"github.com/sdods/sdods/engine/pattern"
)

// addCorpus seeds a fuzz target with every pattern and subject of testdata/cases.json.
func addCorpus(f *testing.F, withSubject bool) {
	c := mustCases(f)
	for _, a := range c.Accept {
		subjects := append(append([]string{""}, a.Match...), a.NoMatch...)
		for _, s := range subjects {
			if withSubject {
				f.Add(a.Pattern, s)
			} else {
				f.Add(a.Pattern)
				break
			}
		}
	}
	for _, r := range c.Refuse {
		if withSubject {
			f.Add(r.Pattern, "a")
		} else {
			f.Add(r.Pattern)
		}
	}
}

// FuzzCompile checks that Compile never panics, refuses with a well-formed *Error, and accepts
// only patterns that Go's own parser reads as written.
func FuzzCompile(f *testing.F) {
	addCorpus(f, false)
	f.Fuzz(func(t *testing.T, src string) {
		p, err := pattern.Compile(src)
		if err != nil {
			var pe *pattern.Error
			if !errors.As(err, &pe) || pe.Code != pattern.CodeNotPortable {
				t.Fatalf("Compile(%q): %v", src, err)
			}
			if pe.Offset < 0 || pe.Offset > pattern.MaxPatternCodePoints || pe.Offset > utf8.RuneCountInString(src) {
				t.Fatalf("Compile(%q): offset %d out of range", src, pe.Offset)
			}
			if pe.Message == "" || len(pe.Message) >= 9 && pe.Message[:9] == "internal:" {
				t.Fatalf("Compile(%q): %v", src, pe)
			}
			return
		}
		if p.String() != src {
			t.Fatalf("String() = %q, want %q", p.String(), src)
		}
		if !utf8.ValidString(src) || utf8.RuneCountInString(src) > pattern.MaxPatternCodePoints {
			t.Fatalf("Compile(%q) accepted an invalid or too long pattern", src)
		}
		if _, err := regexp.Compile("(?s:" + src + ")"); err != nil {
			t.Fatalf("Compile(%q) accepted what Go's parser refuses: %v", src, err)
		}
	})
}

// FuzzMatch checks that Match never panics and agrees with Go's regexp reading the accepted
// pattern as written (with flag s, under which ^ and $ mean \A and \z in Go).
func FuzzMatch(f *testing.F) {
	addCorpus(f, true)
	f.Add("^(?:a|b)+c$", "ababc\n")
	f.Add("^.$", "\xff")
	f.Fuzz(func(t *testing.T, src, subject string) {
		p, err := pattern.Compile(src)
		if err != nil {
			return
		}
		got, err := p.Match(subject)
		if utf8.RuneCountInString(subject) > pattern.MaxSubjectCodePoints {
			var pe *pattern.Error
			if !errors.As(err, &pe) || pe.Code != pattern.CodeSubjectTooLong {
				t.Fatalf("Match(%d code points): %v", utf8.RuneCountInString(subject), err)
			}
			return
		}
		if err != nil {
			t.Fatalf("Match: %v", err)
		}
		want := regexp.MustCompile("(?s:" + src + ")").MatchString(subject)
		if got != want {
			t.Fatalf("Compile(%q).Match(%q) = %v, Go regexp says %v", src, subject, got, want)
		}
	})
}
