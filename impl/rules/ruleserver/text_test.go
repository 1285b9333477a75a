package ruleserver_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestMalformedText posts evaluation bodies that are not UTF-8 or escape a lone surrogate: each
// is malformed JSON, answered 400 BAD_REQUEST (spec/v1/README.md, Text), never evaluated with
// U+FFFD in place of the bad text.
func TestMalformedText(t *testing.T) {
	s := fixtureServer(t)
	body := func(email string) []byte {
		return []byte(`{"ruleset":"signup","data":{"account":{"email":"` + email + `"}}}`)
	}
	for name, email := range map[string]string{
		"byte 0xFF":                  "a\xff@example.com",
		"encoded surrogate ED A0 80": "\xed\xa0\x80@example.com",
		"overlong C0 AF":             "\xc0\xaf@example.com",
		"lone surrogate escape":      `\ud800@example.com`,
		"reversed pair":              `\udc00\ud800@example.com`,
	} {
		t.Run(name, func(t *testing.T) {
			r := do(t, nil, "POST", s.URL+"/evaluations", body(email), auth()...)
			var e struct {
				Error struct{ Message string } `json:"error"`
			}
			_ = json.Unmarshal(r.Body, &e)
			if r.Status != 400 || r.errorCode() != "BAD_REQUEST" || !strings.Contains(e.Error.Message, "byte") {
				t.Errorf("%d %s", r.Status, r.Body)
			}
		})
	}
	if r := do(t, nil, "POST", s.URL+"/evaluations", body(`\ud83d\ude00@example.com`), auth()...); r.Status != 200 {
		t.Errorf("a surrogate pair escape: %d %s", r.Status, r.Body)
	}
}
