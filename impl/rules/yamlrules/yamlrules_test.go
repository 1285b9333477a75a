package yamlrules_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/sdods/sdods/impl/rules/yamlrules"
)

func TestCoreSchema(t *testing.T) {
	src := "a: no\nb: on\nc: 2024-01-01\nd: yes\ne: 0x1F\nf: 0o17\ng: ~\nh: True\ni: '1'\nj: 1.50\nk: .5\nl: -007\nm: |\n  text\n"
	doc, problems := yamlrules.ReadYAML([]byte(src))
	if problems != nil {
		t.Fatal(problems)
	}
	var got map[string]any
	if err := json.Unmarshal(doc.JSON, &got); err != nil {
		t.Fatalf("%s: %v", doc.JSON, err)
	}
	want := map[string]any{"a": "no", "b": "on", "c": "2024-01-01", "d": "yes", "e": 31.0, "f": 15.0, "g": nil,
		"h": true, "i": "1", "j": 1.5, "k": 0.5, "l": -7.0, "m": "text\n"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
	if p := doc.Position("/c"); p.Line != 3 || p.Column != 1 {
		t.Errorf("position of /c: %+v", p)
	}
}

func TestLint(t *testing.T) {
	src := "a: no\nb: 'no'\nc: 2024-01-01\nd: 0755\ne: 1e3\nf: 1_000\ng: 0.1\nh: 0.30000000000000004\ni: 12345678901234567\nj: 1:20\non: 1\nk: 1e-400\n"
	doc, problems := yamlrules.ReadYAML([]byte(src))
	if problems != nil {
		t.Fatal(problems)
	}
	type key struct {
		code, ptr string
		line      int
	}
	var got []key
	for _, p := range doc.Lint() {
		got = append(got, key{p.Code, p.Pointer, p.Line})
	}
	want := []key{
		{"YAML_NOT_PORTABLE", "/a", 1}, {"YAML_NOT_PORTABLE", "/c", 3}, {"YAML_NOT_PORTABLE", "/d", 4},
		{"YAML_NOT_PORTABLE", "/e", 5}, {"YAML_NOT_PORTABLE", "/f", 6}, {"NUMBER_NOT_PORTABLE", "/h", 8},
		{"NUMBER_NOT_PORTABLE", "/i", 9}, {"YAML_NOT_PORTABLE", "/j", 10}, {"YAML_NOT_PORTABLE", "/on", 11}, {"YAML_NOT_PORTABLE", "/k", 12},
		{"NUMBER_NOT_PORTABLE", "/k", 12},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
}

func TestNotJSON(t *testing.T) {
	for _, src := range []string{"a: .inf\n", "a: !!binary aGk=\n", "a: [\n", "? [a]\n: 1\n", "a: 1\n---\nb: 2\n"} {
		if _, problems := yamlrules.ReadYAML([]byte(src)); len(problems) == 0 || problems[0].Code != yamlrules.CodeYAMLInvalid {
			t.Errorf("%q: want YAML_INVALID, got %v", src, problems)
		}
	}
}

func TestReadJSON(t *testing.T) {
	doc, problems := yamlrules.ReadJSON([]byte("{\n  \"a\": [1,\n    2.000000000000000001],\n  \"b\": {\"c\": true}\n}"))
	if problems != nil {
		t.Fatal(problems)
	}
	if p := doc.Position("/b/c"); p.Line != 4 || p.Column != 9 {
		t.Errorf("position of /b/c: %+v", p)
	}
	if p := doc.Position("/a/1"); p.Line != 3 || p.Column != 5 {
		t.Errorf("position of /a/1: %+v", p)
	}
	lint := doc.Lint()
	if len(lint) != 1 || lint[0].Code != "NUMBER_NOT_PORTABLE" || lint[0].Pointer != "/a/1" {
		t.Errorf("lint %v", lint)
	}
	if _, problems := yamlrules.ReadJSON([]byte("{\n\"a\": }")); len(problems) != 1 || problems[0].Line != 2 {
		t.Errorf("malformed JSON: %v", problems)
	}
}
