package suitecmd_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/sdods/sdods/conformance"
	"github.com/sdods/sdods/engine/protocol"
	"github.com/sdods/sdods/engine/testops"
	"github.com/sdods/sdods/impl/rules/harness"
	"github.com/sdods/sdods/impl/server/steplib"
)

// TestProtocolSchema validates, for the protocol, load-error and compiler cases, every well-formed
// request the harness sends against spec/v1/protocol.schema.json, and every response of the Go
// engine to it.
func TestProtocolSchema(t *testing.T) {
	schema := readJSON(t, filepath.Join("..", "..", "..", "..", "spec", "v1", "protocol.schema.json"))
	files, err := harness.Load(conformance.Suite())
	if err != nil {
		t.Fatal(err)
	}
	srv := protocol.New(protocol.WithOperators(testops.Operators()))
	n := 0
	for _, f := range files {
		if f.Category != "protocol" && f.Category != "load-error" && f.Category != "compiler" && f.Category != "additions" {
			continue
		}
		for _, c := range f.Cases {
			reqs := append(append(append([]json.RawMessage{}, f.Setup...), c.Setup...), c.Input)
			for i, in := range reqs {
				if in == nil || bytes.HasPrefix(bytes.TrimSpace(in), []byte(`"`)) {
					continue // a raw line, malformed on purpose
				}
				req, err := harness.Resolve(conformance.Suite(), in)
				if err != nil {
					t.Fatal(err)
				}
				line := append([]byte(`{"id":"t",`), bytes.TrimPrefix(bytes.TrimSpace(req), []byte("{"))...)
				if bytes.Equal(bytes.TrimSpace(req), []byte("{}")) {
					line = []byte(`{"id":"t"}`)
				}
				var e *harness.ExpectedError
				if i == len(reqs)-1 {
					e = c.Expected.Error
				}
				malformed := e != nil && (e.Code == protocol.CodeInvalid || e.Code == protocol.CodeCommandUnknown)
				validate(t, c.ID+" request", schema, line, !malformed)
				validate(t, c.ID+" response", schema, srv.Handle(line), true)
				n++
			}
		}
	}
	if n < 300 {
		t.Fatalf("only %d messages validated", n)
	}
}

func validate(t *testing.T, what string, schema any, line []byte, wantValid bool) {
	t.Helper()
	var v any
	if err := json.Unmarshal(line, &v); err != nil {
		return // a number beyond double range, refused on purpose; the validator reads float64
	}
	vs, err := steplib.ValidateJSONSchema(schema, v)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if wantValid && len(vs) > 0 {
		t.Errorf("%s: %v\n%s", what, vs, clipLine(line))
	}
	if !wantValid && len(vs) == 0 {
		t.Errorf("%s: the schema accepts a request the engine refuses: %s", what, clipLine(line))
	}
}

func clipLine(b []byte) string {
	if len(b) > 400 {
		return string(b[:400]) + "…"
	}
	return string(b)
}

func readJSON(t *testing.T, path string) any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}
