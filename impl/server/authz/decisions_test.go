package authz

import "testing"

// TestDecisionsAreCasbins: the decisions computed once are casbin's for every question, and a
// question outside them (an unknown role, domain or action) still goes to casbin: refused.
func TestDecisionsAreCasbins(t *testing.T) {
	e, err := New()
	if err != nil {
		t.Fatal(err)
	}
	if len(e.decisions) == 0 {
		t.Fatal("no decisions computed")
	}
	subs := append([]string{"", "owner", "Admin"}, askedRoles...)
	acts := []Action{ActionRead, ActionRun, ActionEdit, ActionManage, "", "delete"}
	allowedSome := false
	for _, sub := range subs {
		for _, dom := range []string{"instance", "workspace", "", "org"} {
			for _, act := range acts {
				got, want := e.allowed(sub, dom, act), e.enforce(sub, dom, act)
				if got != want {
					t.Errorf("%q %q %q: %v, casbin says %v", sub, dom, act, got, want)
				}
				if _, known := e.decisions[decision{sub, dom, act}]; !known && got {
					t.Errorf("%q %q %q: allowed outside the known questions", sub, dom, act)
				}
				allowedSome = allowedSome || got
			}
		}
	}
	if !allowedSome {
		t.Fatal("nothing allowed: the policy did not load")
	}
}
