package agents

import (
	"testing"

	"github.com/sdods/sdods/gen/db"
)

func TestClassify(t *testing.T) {
	for _, tt := range []struct {
		name string
		f    db.TriageFailuresRow
		want string
	}{
		{"undefined step", db.TriageFailuresRow{Status: "undefined"}, "test_bug"},
		{"flips", db.TriageFailuresRow{Status: "failed", Flips: 3, PassedBefore: 2, FailedBefore: 1, Message: "GET /x answered 500"}, "flaky"},
		{"passed on retry", db.TriageFailuresRow{Status: "failed", RetryPasses: 1, Message: "no element matches \"#a\""}, "flaky"},
		{"unreachable", db.TriageFailuresRow{Status: "failed", Message: "dial tcp 127.0.0.1:1: connect: connection refused"}, "environment"},
		{"timeout", db.TriageFailuresRow{Status: "failed", Message: "step timed out after 30s"}, "environment"},
		{"5xx", db.TriageFailuresRow{Status: "failed", Message: "GET /api/orders answered 503, expected 200"}, "product_bug"},
		{"4xx", db.TriageFailuresRow{Status: "failed", Message: "POST /api/login answered 401, expected 200"}, "test_bug"},
		{"selector", db.TriageFailuresRow{Status: "failed", Message: "no element matches \"#pay\" after 5s", Heals: 1}, "test_bug"},
		{"regression", db.TriageFailuresRow{Status: "failed", Flips: 1, PassedBefore: 4, Message: "expected \"Total 10\""}, "product_bug"},
		{"known", db.TriageFailuresRow{Status: "failed", SignatureSeen: 3, Message: "expected \"Total 10\""}, "product_bug"},
	} {
		if got := classify(tt.f); got.Class != tt.want || len(got.Reasons) == 0 || got.Confidence <= 0 || got.Confidence > 1 {
			t.Errorf("%s: %+v, want %s", tt.name, got, tt.want)
		}
	}
	if s := similarity("no element matches <n> ¦ When I click \"#a\"", "no element matches <n> ¦ When I click \"#b\""); s <= 0.5 || s >= 1 {
		t.Errorf("similarity %v", s)
	}
	if s := similarity("a b", "a b"); s != 1 {
		t.Errorf("identical signatures %v", s)
	}
}
