package runner_test

import (
	"strings"
	"testing"

	"github.com/sdods/sdods/impl/server/runner"
)

func TestTagExpr(t *testing.T) {
	tests := []struct {
		expr string
		tags string // space-separated
		want bool
	}{
		{"", "", true},
		{"", "@a", true},
		{"@a", "@a @b", true},
		{"@a", "@b", false},
		{"not @a", "@b", true},
		{"not @a", "@a", false},
		{"@a and @b", "@a @b", true},
		{"@a and @b", "@a", false},
		{"@a or @b", "@b", true},
		{"@a or @b", "@c", false},
		{"@a or @b and @c", "@a", true}, // and binds tighter than or
		{"@a or @b and @c", "@b", false},
		{"(@a or @b) and @c", "@a", false},
		{"(@a or @b) and @c", "@b @c", true},
		{"not @a and @b", "@b", true},
		{"not (@a and @b)", "@a @b", false},
		{"not not @a", "@a", true},
		{`@with\ space`, "@with space", true},
		{`@x\(1\)`, "@x(1)", true},
		{"@dataset:users", "@dataset:users", true},
	}
	for _, tt := range tests {
		t.Run(tt.expr+" | "+tt.tags, func(t *testing.T) {
			e, err := runner.ParseTagExpr(tt.expr)
			if err != nil {
				t.Fatal(err)
			}
			var tags []string
			if tt.tags == "@with space" || tt.tags == "@x(1)" {
				tags = []string{tt.tags}
			} else {
				tags = strings.Fields(tt.tags)
			}
			if got := e.Match(tags); got != tt.want {
				t.Fatalf("Match(%v) = %v", tags, got)
			}
		})
	}
}

func TestTagExprErrors(t *testing.T) {
	tests := []struct{ expr, want string }{
		{"@a and", "unexpected end"},
		{"(@a", "missing ')'"},
		{"@a @b", `unexpected "@b"`},
		{"a", "expected a tag starting with @"},
		{"@a or )", `found ")"`},
		{`@a\`, "nothing to escape"},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			_, err := runner.ParseTagExpr(tt.expr)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
		})
	}
}
