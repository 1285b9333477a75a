package jsonv

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestArena: values decoded into an arena are encoding/json's; a text decoded again after Reset
// allocates nothing (its maps, lists and boxes are the last text's; only a string with an
// escape is a new string); and what Detach returned
// stays as it was while the arena is reused and the borrowed text overwritten.
func TestArena(t *testing.T) {
	texts := []string{
		`{"a":"x","n":1.5,"l":[{"k":"v","m":[1,"two",null,true]},{}],"o":{"p":{"q":"\u00e9"}}}`,
		`[{"a":"y"},{"b":[2,3]},"z",-0,{"c":{}}]`,
		`"plain"`,
		`{}`,
	}
	var a Arena
	decode := func(text []byte) any {
		sc := Borrow(text)
		sc.Use(&a)
		v, ok := sc.Value(64)
		if !ok || !sc.End() {
			t.Fatalf("Value said no to %s", text)
		}
		sc.Release()
		return v
	}
	var detached, wants []any
	for round := 0; round < 3; round++ {
		for _, text := range texts {
			var want any
			if err := json.Unmarshal([]byte(text), &want); err != nil {
				t.Fatal(err)
			}
			buf := []byte(text)
			got := decode(buf)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: got %#v, want %#v", text, got, want)
			}
			detached, wants = append(detached, Detach(got)), append(wants, want)
			for i := range buf {
				buf[i] = '#'
			}
			a.Reset()
		}
	}
	for i, v := range detached {
		if !reflect.DeepEqual(v, wants[i]) {
			t.Errorf("detached value %d changed with the arena's reuse: %#v, want %#v", i, v, wants[i])
		}
	}
	text := []byte(`{"a":"x","n":1.5,"l":[{"k":"v","m":[1,"two",null,true]},{}],"o":{"p":{"q":"r"}}}`)
	if n := testing.AllocsPerRun(100, func() { decode(text); a.Reset() }); n != 0 {
		t.Errorf("decoding into a reused arena: %v allocations, want 0", n)
	}
}
