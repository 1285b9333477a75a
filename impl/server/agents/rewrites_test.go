package agents

import (
	"strings"
	"testing"
)

func TestSplitRewrites(t *testing.T) {
	many := "[" + strings.TrimSuffix(strings.Repeat(`{"feature":"f","line":1,"step":"a","replacement":"b"},`, maxRewrites+1), ",") + "]"
	for _, tc := range []struct {
		name, answer, summary string
		n                     int
		err                   string
	}{
		{"no block", "  Just a summary.\n", "Just a summary.", 0, ""},
		{"a block", "Sum.\n```sdods-rewrites\n[{\"feature\":\"a.feature\",\"line\":4,\"step\":\"Then x\",\"replacement\":\"Then y\"}]\n```\n", "Sum.", 1, ""},
		{"text after the block", "Sum.\n```sdods-rewrites\n[]\n```\nMore.", "Sum.\nMore.", 0, ""},
		{"not closed", "Sum.\n```sdods-rewrites\n[]", "Sum.", 0, "not closed"},
		{"not an array", "Sum.\n```sdods-rewrites\n{\"feature\":\"a\"}\n```", "Sum.", 0, "not a JSON array"},
		{"an unknown member", "Sum.\n```sdods-rewrites\n[{\"file\":\"a\"}]\n```", "Sum.", 0, "not a JSON array"},
		{"too many", "Sum.\n```sdods-rewrites\n" + many + "\n```", "Sum.", 0, "more than 20"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sum, rw, err := splitRewrites(tc.answer)
			if sum != tc.summary || len(rw) != tc.n || (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("summary %q, %d rewrites, error %v", sum, len(rw), err)
			}
		})
	}
}
