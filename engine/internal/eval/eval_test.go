package eval

import "testing"

// TestInView compares inView, which compares only the levels a rule names, with the rule as the
// specification states it: rules scoped project or module are evaluated under every view;
// otherwise every location level from page down to the rule's scope that both the view and the
// rule name must agree.
func TestInView(t *testing.T) {
	names := []string{"", "a", "b"}
	var locs []Location
	for _, p := range names {
		for _, s := range names {
			for _, c := range names {
				for _, k := range names {
					locs = append(locs, Location{Page: p, Screen: s, Section: c, Component: k})
				}
			}
		}
	}
	want := func(v *Location, level int, l *Location) bool {
		if level < 2 {
			return true
		}
		for i := 2; i <= level; i++ {
			a, b := v.get(i), l.get(i)
			if a != "" && b != "" && a != b {
				return false
			}
		}
		return true
	}
	for level := 0; level < 6; level++ {
		for i := range locs {
			l := &locs[i]
			scope := scopeOf(level, l)
			for j := range locs {
				v := &locs[j]
				view := [4]string{v.Page, v.Screen, v.Section, v.Component}
				if got := inView(&view, scope); got != want(v, level, l) {
					t.Fatalf("level %d rule %+v view %+v: %v", level, *l, *v, got)
				}
			}
		}
	}
}
