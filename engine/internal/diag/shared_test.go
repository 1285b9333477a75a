package diag

import (
	"fmt"
	"strconv"
	"sync"
	"testing"
)

// The shared diagnostics are a cache of a function of their key: whatever the table holds, every
// call returns the diagnostic that key makes, also when keys that land on one entry alternate and
// when goroutines make them concurrently; a key made again is served from the table.
func TestSharedDiagnosticsAreThoseOfTheirKey(t *testing.T) {
	type call struct {
		ptr, op string
		i       int
		a, b    string
		arg     bool // ArgumentInvalid(ptr, op, i, a), else TypeMismatch(ptr, op, i, a, b)
	}
	want := func(c call) Diagnostic {
		if c.arg {
			return Diagnostic{Code: EvaluationError, Pointer: c.ptr, Message: c.op + ": argument " + strconv.Itoa(c.i+1) + ": " + c.a}
		}
		return Diagnostic{Code: EvaluationError, Pointer: c.ptr,
			Message: c.op + ": argument " + strconv.Itoa(c.i+1) + " must be " + c.a + ", got " + c.b}
	}
	get := func(c call) *Diagnostic {
		if c.arg {
			return ArgumentInvalid(c.ptr, c.op, c.i, c.a)
		}
		return TypeMismatch(c.ptr, c.op, c.i, c.a, c.b)
	}
	var calls []call
	types := []string{"null", "boolean", "number", "string", "array", "object"}
	for k := 0; k < 3*len(sharedTable); k++ { // more keys than entries: they collide
		c := call{ptr: fmt.Sprintf("/rules/%d/when", k%97), op: []string{"comparison", "+", "matches"}[k%3], i: k % 4,
			a: []string{"a number", "a string", "a number or a string"}[k%5%3], b: types[k%6], arg: k%7 == 0}
		calls = append(calls, c)
	}
	// the keys that differ in one part only
	base := call{ptr: "/p", op: "x", i: 0, a: "a number", b: "string"}
	for _, c := range []call{base, {ptr: "/q", op: "x", a: "a number", b: "string"}, {ptr: "/p", op: "y", a: "a number", b: "string"},
		{ptr: "/p", op: "x", i: 1, a: "a number", b: "string"}, {ptr: "/p", op: "x", a: "a numbe", b: "string"},
		{ptr: "/p", op: "x", a: "a number", b: "object"}, {ptr: "/p", op: "x", a: "a number", b: "string", arg: true}} {
		calls = append(calls, c, base)
	}
	for round := 0; round < 2; round++ {
		for _, c := range calls {
			if got := get(c); *got != want(c) {
				t.Fatalf("%+v: got %+v, want %+v", c, *got, want(c))
			}
		}
	}
	if first, again := get(base), get(base); first != again {
		t.Fatal("a diagnostic made again is not the one made before")
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for k := 0; k < 2000; k++ {
				c := calls[(k*(g+1))%len(calls)]
				if got := get(c); *got != want(c) {
					t.Errorf("%+v: got %+v, want %+v", c, *got, want(c))
					return
				}
			}
		}(g)
	}
	wg.Wait()
}

// Budget diagnostics are shared too: the one of their pointer and budget, whatever else the
// table holds.
func TestSharedBudget(t *testing.T) {
	for round := 0; round < 2; round++ {
		for k := 0; k < 3*len(sharedTable); k++ {
			ptr, n := fmt.Sprintf("/rules/%d/when", k%89), int64(k%7)+1<<(k%40)
			want := Diagnostic{Code: EvaluationLimit, Pointer: ptr,
				Message: fmt.Sprintf("evaluation exceeded its budget of %d steps", n)}
			if got := Budget(ptr, n); *got != want {
				t.Fatalf("got %+v, want %+v", *got, want)
			}
			if got := TypeMismatch(ptr, "x", 0, "a number", "string"); got.Code != EvaluationError {
				t.Fatalf("got %+v", *got)
			}
		}
	}
	if first, again := Budget("/p", 5), Budget("/p", 5); first != again {
		t.Fatal("a budget diagnostic made again is not the one made before")
	}
}
