// Package pattern implements the portable pattern subset of the `matches` operator: the regular
// expressions that JavaScript (flags "su"), Python re, Java java.util.regex and Go regexp all read
// the same way, as specified in spec/v1/patterns.md.
//
// A pattern is validated by a parser written for this package, then translated into Go regexp
// syntax. A pattern of at most 64 positions (code-point sets, once counts are expanded) is
// matched by a bit-parallel simulation of its position automaton, a few word operations per
// code point, and, when the simulation reaches at most 64 states on ASCII, through a table of
// those states built at Compile, one load per byte; a larger one by Go's regexp (RE2). All take
// time linear in the length of the subject and give the same answers.
package pattern

import (
	"fmt"
	"regexp"
	"unicode/utf8"
)

// Error codes carried by *Error.
const (
	// CodeNotPortable marks a pattern refused by Compile.
	CodeNotPortable = "PATTERN_NOT_PORTABLE"
	// CodeSubjectTooLong marks a subject refused by Match; the caller reports it as an
	// evaluation error.
	CodeSubjectTooLong = "SUBJECT_TOO_LONG"
)

// Limits of the portable subset.
const (
	// MaxSubjectCodePoints is the longest subject, in code points, that Match accepts.
	MaxSubjectCodePoints = 10000
	// MaxPatternCodePoints is the longest pattern, in code points, that Compile accepts.
	MaxPatternCodePoints = 1000
	// MaxCount bounds every count {n,m} and the product of nested counts.
	MaxCount = 1000
)

// Error is a refused pattern or subject. Offset counts code points from the start of the
// pattern (for CodeNotPortable) or of the subject (for CodeSubjectTooLong), from 0.
type Error struct {
	Code    string
	Offset  int
	Message string
}

// Error returns the code, the offset and the message.
func (e *Error) Error() string {
	return fmt.Sprintf("%s at offset %d: %s", e.Code, e.Offset, e.Message)
}

// Pattern is a compiled portable pattern, safe for concurrent use.
type Pattern struct {
	src  string
	re   *regexp.Regexp
	fast *matcher // nil when the pattern is beyond the bit-parallel matcher: re matches
}

// Compile validates src against the portable subset and compiles it. It refuses, with an
// *Error whose Code is CodeNotPortable, any pattern outside the subset.
func Compile(src string) (*Pattern, error) {
	goSrc, err := translate(src)
	if err != nil {
		return nil, err
	}
	re, cerr := regexp.Compile(goSrc)
	if cerr != nil {
		// The validator accepted something Go refuses: a bug in this package, reported as a
		// refusal rather than a panic so that no input can crash the engine.
		return nil, &Error{Code: CodeNotPortable, Offset: 0, Message: "internal: Go regexp refused the translation: " + cerr.Error()}
	}
	return &Pattern{src: src, re: re, fast: newMatcher(goSrc)}, nil
}

// Match reports whether the pattern matches anywhere in subject (a search, not a full match).
// It refuses, with an *Error whose Code is CodeSubjectTooLong, a subject of more than
// MaxSubjectCodePoints code points; each byte of invalid UTF-8 counts as one code point U+FFFD.
func (p *Pattern) Match(subject string) (bool, error) {
	if len(subject) > MaxSubjectCodePoints && utf8.RuneCountInString(subject) > MaxSubjectCodePoints {
		return false, &Error{
			Code:    CodeSubjectTooLong,
			Offset:  MaxSubjectCodePoints,
			Message: fmt.Sprintf("subject longer than %d code points", MaxSubjectCodePoints),
		}
	}
	if p.fast != nil {
		return p.fast.match(subject), nil
	}
	return p.re.MatchString(subject), nil
}

// String returns the source text of the pattern, as given to Compile.
func (p *Pattern) String() string {
	return p.src
}
