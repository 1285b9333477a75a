package rules

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/sdods/sdods/engine/internal/jsonv"
)

// slowParse is the reference: the tree decoder and the checks on the tree.
func slowParse(raw []byte) (*Request, string, bool) {
	n, err := jsonv.Decode(raw)
	if err != nil {
		return nil, "", false
	}
	req, id, d := ParseRequest(n)
	if d != nil {
		return nil, "", false
	}
	return req, id, true
}

// checkQuick fails when the single-pass decoder accepts a body the reference refuses, or
// returns something else than the reference.
func checkQuick(t *testing.T, raw []byte) (quick bool) {
	t.Helper()
	q, qid, ok := QuickParseRequest(raw)
	s, sid, sok := slowParse(raw)
	if !ok {
		return false
	}
	if !sok {
		t.Fatalf("%q: the quick path accepts what the slow path refuses", raw)
	}
	if qid != sid || !reflect.DeepEqual(q, s) {
		t.Fatalf("%q: quick %#v %q, slow %#v %q", raw, q, qid, s, sid)
	}
	return true
}

var quickSeeds = []string{
	`{"data":{}}`,
	` {"data" : null , "ctx":{"a":[1,2.5,-0,1e3,"x",true,false,null,{}]}} `,
	`{"data":{"s":"h\u00e9llo \ud83d\ude00 \"q\" \\ \/ \b\f\n\r\t","é":"ü"},"locale":"fr-CA","ruleset":"r","view":{"page":"p","screen":"s"}}`,
	`{"data":{"n":123456789012345,"m":1234567890123456,"z":0.1,"big":1e400,"tiny":1e-400}}`,
	`{"data":{"a":1,"a":2}}`,
	`{"data":{},"data":{}}`,
	`{"data":{},"extra":1}`,
	`{"data":{"s":"\ud800"}}`,
	`{"data":{"s":"\udc00x"}}`,
	"{\"data\":{\"s\":\"\xff\"}}",
	`{"data":{"n":01}}`,
	`{"data":{"n":-}}`,
	`{"data":{"n":1.}}`,
	`{"data":{"n":1e}}`,
	`{"data":{"n":-0.0}}`,
	`{"data":{}}x`,
	`{"data":{}} {}`,
	`{"data":[1]}`,
	`{"data":{},"locale":null,"view":null,"original":null,"actor":null}`,
	`{"data":{},"locale":"1a"}`,
	`{"data":{},"ruleset":""}`,
	`{"data":{},"ruleset":null}`,
	`{"data":{},"view":{"page":""}}`,
	`{"data":{},"view":{"page":"a","page":"b"}}`,
	`{"data":{},"view":{"zone":"a"}}`,
	`{"data":{},"view":{}}`,
	`{"ctx":{}}`,
	`[]`,
	`{`,
	`{"data":{"a":tru}}`,
	`{"data":{"a":"ctl` + "\x01" + `"}}`,
}

func TestQuickParseRequest(t *testing.T) {
	for _, s := range quickSeeds {
		checkQuick(t, []byte(s))
	}
	deep := func(n int) []byte {
		b := []byte(`{"data":`)
		for i := 0; i < n-1; i++ {
			b = append(b, `{"a":`...)
		}
		b = append(b, `{}`...)
		for i := 0; i < n; i++ {
			b = append(b, '}')
		}
		return b
	}
	if !checkQuick(t, deep(64)) {
		t.Fatal("64 levels are taken on the quick path")
	}
	checkQuick(t, deep(65))
	n := 0
	for _, raw := range fixtureRequests(t) {
		if checkQuick(t, raw) {
			n++
		}
	}
	if n == 0 {
		t.Fatal("no fixture request took the quick path")
	}
}

func fixtureRequests(tb testing.TB) [][]byte {
	paths, _ := filepath.Glob(filepath.Join("..", "..", "..", "conformance", "fixtures", "*", "evaluations.json"))
	var out [][]byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		var g struct {
			Tests []struct {
				Request json.RawMessage `json:"request"`
			} `json:"tests"`
		}
		if err := json.Unmarshal(b, &g); err != nil {
			tb.Fatal(err)
		}
		for _, tc := range g.Tests {
			out = append(out, tc.Request)
		}
	}
	return out
}

func FuzzQuickParseRequest(f *testing.F) {
	for _, s := range quickSeeds {
		f.Add([]byte(s))
	}
	for _, raw := range fixtureRequests(f) {
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		checkQuick(t, raw)
	})
}
