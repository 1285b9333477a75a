package pattern

// MatchBoth returns the answer of the bit-parallel matcher (ok false when the pattern is left
// to Go's regexp) and the answer of Go's regexp, for the differential tests.
func MatchBoth(p *Pattern, subject string) (fast, ok, slow bool) {
	if p.fast != nil {
		fast, ok = p.fast.match(subject), true
	}
	return fast, ok, p.re.MatchString(subject)
}

// MatchSim returns the answer of the bit-parallel simulation alone, without its deterministic
// automaton, and whether the pattern has such an automaton.
func MatchSim(p *Pattern, subject string) (sim, hasDFA bool) {
	if p.fast == nil {
		return false, false
	}
	t := p.fast.dfa
	p2 := *p.fast
	p2.dfa = nil
	return p2.match(subject), t != nil
}
