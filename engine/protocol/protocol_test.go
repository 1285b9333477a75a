package protocol_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/sdods/sdods/engine/protocol"
	"github.com/sdods/sdods/engine/testops"
)

func serve(t *testing.T, lines ...string) []map[string]any {
	t.Helper()
	var out bytes.Buffer
	srv := protocol.New(protocol.WithOperators(testops.Operators()))
	if err := srv.Serve(context.Background(), strings.NewReader(strings.Join(lines, "\n")+"\n"), &out); err != nil {
		t.Fatal(err)
	}
	var resps []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not a protocol line: %q", l)
		}
		resps = append(resps, m)
	}
	if len(resps) != len(lines) {
		t.Fatalf("%d responses for %d requests", len(resps), len(lines))
	}
	return resps
}

func code(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

func TestCommands(t *testing.T) {
	bundle, err := os.ReadFile("../../conformance/fixtures/signup/signup.bundle.json")
	if err != nil {
		t.Fatal(err)
	}
	var c bytes.Buffer
	if err := json.Compact(&c, bundle); err != nil {
		t.Fatal(err)
	}
	r := serve(t,
		`{"id":1,"cmd":"version"}`,
		`{"id":2,"cmd":"expression","expression":{"op":"+","args":[0.1,0.2]}}`,
		`not json`,
		`{"id":3,"cmd":"evaluate","ruleset":"nope","request":{"data":{},"bogus":1}}`,
		`{"id":4,"cmd":"evaluate","ruleset":"nope","request":{"data":{}}}`,
		`{"id":5,"cmd":"load","bundle":`+c.String()+`}`,
		`{"id":6,"cmd":"evaluate","ruleset":"signup","request":{"data":{}}}`,
		`{"id":7,"cmd":"frobnicate"}`,
		`{"id":8,"cmd":"manifest","ruleset":"signup","channel":"client","extra":1}`,
	)
	if v := r[0]["result"].(map[string]any)["version"]; v != "1.0.0-alpha.2" {
		t.Errorf("version %v", v)
	}
	if v := r[1]["result"].(map[string]any)["value"]; v != 0.3 {
		t.Errorf("0.1+0.2 = %v", v)
	}
	want := []string{"", "", protocol.CodeInvalid, "BAD_REQUEST", protocol.CodeRulesetNotLoaded, "", "", protocol.CodeCommandUnknown, protocol.CodeInvalid}
	for i, w := range want {
		if got := code(r[i]); got != w {
			t.Errorf("response %d: code %q, want %q (%v)", i, got, w, r[i])
		}
	}
	if r[2]["id"] != nil {
		t.Errorf("malformed line answered with id %v", r[2]["id"])
	}
	if r[6]["id"] != float64(6) {
		t.Errorf("id %v, want 6", r[6]["id"])
	}
}
