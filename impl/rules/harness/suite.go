// Package conformance reads the conformance suite (conformance/, spec/v1/protocol.md) and certifies
// an engine over the engine protocol: it starts the engine command, sends every case as a request
// line, compares each response with the expected output or error and reports per category.
package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// Categories of the suite, in the order they run, with the number of cases each must hold. The
// seed categories hold the product specification's 1899 cases; additions holds the cases written
// since, for rules spec/v1 settled later, counted on their own so that the seed's numbers stay
// checkable.
var Categories = []struct {
	Name  string
	Count int
	Seed  bool
}{
	{"expression", 499, true},
	{"load-error", 191, true},
	{"golden", 66, true},
	{"corpus", 1000, true},
	{"protocol", 88, true},
	{"compiler", 55, true},
	{"additions", Additions, false},
}

// SeedTotal is the number of cases of the seed categories.
const SeedTotal = 1899

// Additions is the number of cases of the additions category.
const Additions = 278

// Total is the number of cases of the suite.
const Total = SeedTotal + Additions

// Levels of conformance: an evaluator runs compiled bundles, manifests and expressions; a
// compiler also compiles source rulesets. The compiler level includes every evaluator case.
const (
	LevelEvaluator = "evaluator"
	LevelCompiler  = "compiler"
)

// File is one case file: a category, requests sent once before its cases (setup) and the cases.
type File struct {
	Category    string            `json:"category"`
	Description string            `json:"description,omitempty"`
	Setup       []json.RawMessage `json:"setup,omitempty"`
	Cases       []Case            `json:"cases"`

	Path string `json:"-"` // inside the suite
}

// Case is one conformance case. Input is a request object without id (the runner adds one) or,
// for protocol cases, a JSON string sent verbatim as one line.
type Case struct {
	ID          string            `json:"id"`
	Level       string            `json:"level"`
	Description string            `json:"description,omitempty"`
	Setup       []json.RawMessage `json:"setup,omitempty"`
	Input       json.RawMessage   `json:"input,omitempty"`
	// InputBase64, instead of Input, is a line sent verbatim as these bytes: a line that is not
	// UTF-8, which no JSON string can hold.
	InputBase64 []byte   `json:"inputBase64,omitempty"`
	Expected    Expected `json:"expected"`
}

// Expected is the expected response: exactly one of Result and Error. ID, when set, is the id the
// response must carry (for raw lines); otherwise the request's id.
type Expected struct {
	ID json.RawMessage `json:"id,omitempty"`
	// Subset, when true, compares only the object members the expected result names (an
	// engine's version answer carries its own name).
	Subset bool            `json:"subset,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *ExpectedError  `json:"error,omitempty"`
}

// ExpectedError is an expected refusal: the code, the pointer when it matters, and for loads the
// set of (code, pointer) pairs every runtime must report.
type ExpectedError struct {
	Code        string       `json:"code"`
	Pointer     *string      `json:"pointer,omitempty"`
	Diagnostics []Diagnostic `json:"diagnostics,omitempty"`
}

// Diagnostic is a (code, pointer) pair.
type Diagnostic struct {
	Code    string `json:"code"`
	Pointer string `json:"pointer"`
}

// Load reads every case file of the suite (CATEGORY/*.json), checks ids are unique and levels
// valid, and returns the files in category order, then by path.
func Load(suite fs.FS) ([]*File, error) {
	var files []*File
	ids := map[string]string{}
	for _, cat := range Categories {
		names, err := fs.Glob(suite, cat.Name+"/*.json")
		if err != nil {
			return nil, err
		}
		sort.Strings(names)
		for _, name := range names {
			b, err := fs.ReadFile(suite, name)
			if err != nil {
				return nil, err
			}
			f := &File{Path: name}
			dec := json.NewDecoder(bytes.NewReader(b))
			dec.DisallowUnknownFields()
			if err := dec.Decode(f); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			if f.Category != cat.Name {
				return nil, fmt.Errorf("%s: category %q, want %q", name, f.Category, cat.Name)
			}
			for _, c := range f.Cases {
				if prev, dup := ids[c.ID]; dup {
					return nil, fmt.Errorf("%s: case id %s is also in %s", name, c.ID, prev)
				}
				ids[c.ID] = name
				if c.Level != LevelEvaluator && c.Level != LevelCompiler {
					return nil, fmt.Errorf("%s: case %s: level %q", name, c.ID, c.Level)
				}
				if (c.Input == nil) == (c.InputBase64 == nil) {
					return nil, fmt.Errorf("%s: case %s: exactly one of input and inputBase64", name, c.ID)
				}
				if (c.Expected.Result == nil) == (c.Expected.Error == nil) {
					return nil, fmt.Errorf("%s: case %s: exactly one of expected result and error", name, c.ID)
				}
			}
			files = append(files, f)
		}
	}
	return files, nil
}

// Counts returns the number of cases per category.
func Counts(files []*File) map[string]int {
	out := map[string]int{}
	for _, f := range files {
		out[f.Category] += len(f.Cases)
	}
	return out
}

// CheckCounts refuses a suite whose categories do not hold exactly the specified numbers: the
// seed's six (1899 together) and the additions.
func CheckCounts(files []*File) error {
	got := Counts(files)
	var bad []string
	seed := 0
	for _, c := range Categories {
		if got[c.Name] != c.Count {
			bad = append(bad, fmt.Sprintf("%s has %d cases, want %d", c.Name, got[c.Name], c.Count))
		}
		if c.Seed {
			seed += c.Count
		}
	}
	if seed != SeedTotal {
		bad = append(bad, fmt.Sprintf("the seed categories are meant to hold %d cases, not %d", SeedTotal, seed))
	}
	if len(bad) > 0 {
		return fmt.Errorf("suite: %s", strings.Join(bad, "; "))
	}
	return nil
}

// Resolve replaces every top-level member of a request written {"$file": "PATH"} with the JSON
// text of that file of the suite (bundles and manifests are kept once, next to the cases).
func Resolve(suite fs.FS, req json.RawMessage) (json.RawMessage, error) {
	if !bytes.Contains(req, []byte(`"$file"`)) {
		return req, nil
	}
	var ms []member
	ms, err := members(req)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.key)
		b.Write(k)
		b.WriteByte(':')
		if ref := fileRef(m.raw); ref != "" {
			data, err := fs.ReadFile(suite, path.Clean(ref))
			if err != nil {
				return nil, err
			}
			var c bytes.Buffer
			if err := json.Compact(&c, data); err != nil {
				return nil, fmt.Errorf("%s: %w", ref, err)
			}
			b.Write(c.Bytes())
			continue
		}
		b.Write(m.raw)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

type member struct {
	key string
	raw json.RawMessage
}

func members(obj []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("not an object")
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, member{key, v})
	}
	return out, nil
}

// fileRef returns PATH for a value {"$file": "PATH"}, else "".
func fileRef(raw json.RawMessage) string {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || t[0] != '{' {
		return ""
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(t, &m) != nil || len(m) != 1 || m["$file"] == nil {
		return ""
	}
	var p string
	if json.Unmarshal(m["$file"], &p) != nil {
		return ""
	}
	return p
}
