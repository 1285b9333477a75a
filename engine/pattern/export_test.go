package pattern

// MatchBoth returns the answer of the bit-parallel matcher (ok false when the pattern is left
// to Go's regexp) and the answer of Go's regexp, for the differential tests.
func MatchBoth(p *Pattern, subject string) (fast, ok, slow bool) {
	if p.fast != nil {
		fast, ok = p.fast.match(subject), true
	}
	return fast, ok, p.re.MatchString(subject)
}
