package jsonv

import (
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// TestValueBoxes: the strings and numbers Value returns are boxed in the scanner's slabs, not
// one allocation each. They must be the values encoding/json gives (type switches, equality and
// maps keyed by them alike), stay what they were after a collection, after the scanner is
// released and reused for another text, and after the borrowed text is overwritten.
func TestValueBoxes(t *testing.T) {
	var b strings.Builder
	b.WriteString(`[`)
	for i := 0; i < 100; i++ { // more than a few slabs of each
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"s%d", %d.5, {"k":"v%d","n":%d}, ["x\u00e9%d", -%d]`, i, i, i, i, i, i)
	}
	b.WriteString(`]`)
	text := []byte(b.String())
	var want any
	if err := json.Unmarshal(text, &want); err != nil {
		t.Fatal(err)
	}
	read := func(data []byte) any {
		sc := Borrow(data)
		defer sc.Release()
		v, ok := sc.Value(64)
		if !ok || !sc.End() {
			t.Fatalf("Value said no to %.40s", data)
		}
		return v
	}
	buf := append([]byte(nil), text...)
	got := read(buf)
	check := func(when string) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: the values differ from encoding/json's", when)
		}
		list := got.([]any)
		if s, ok := list[0].(string); !ok || s != "s0" || list[0] != any("s0") {
			t.Fatalf("%s: first element %#v, want the string s0", when, list[0])
		}
		if f, ok := list[1].(float64); !ok || f != 0.5 || list[1] != any(0.5) {
			t.Fatalf("%s: second element %#v, want the number 0.5", when, list[1])
		}
		seen := map[any]int{}
		for _, v := range list {
			switch v.(type) {
			case string, float64:
				seen[v]++
			}
		}
		if seen["s42"] != 1 || seen[42.5] != 1 || len(seen) != 200 {
			t.Fatalf("%s: as map keys: s42 %d, 42.5 %d, %d keys", when, seen["s42"], seen[42.5], len(seen))
		}
	}
	check("decoded")
	runtime.GC()
	check("after a collection")
	for i := range buf {
		buf[i] = ' '
	}
	check("after the text was overwritten")
	for i := 0; i < 10; i++ { // the pooled scanners read other texts
		read([]byte(`["other", 7, {"k": "w"}]`))
	}
	runtime.GC()
	check("after other texts")
}
