package value_test

import (
	"math"
	"testing"

	"github.com/sdods/sdods/engine/internal/value"
)

func TestDepth(t *testing.T) {
	tests := []struct {
		v    any
		want int
	}{
		{1.0, 0},
		{[]any{}, 1},
		{map[string]any{}, 1},
		{map[string]any{"a": []any{1.0}}, 2},
		{[]any{[]any{[]any{}}, 1.0}, 3},
	}
	for _, tt := range tests {
		if got := value.Depth(tt.v, 64); got != tt.want {
			t.Errorf("Depth(%v) = %d, want %d", tt.v, got, tt.want)
		}
	}
}

func TestEqual(t *testing.T) {
	a := map[string]any{"x": []any{1.0, "s", nil, true}}
	b := map[string]any{"x": []any{1.0, "s", nil, true}}
	if !value.Equal(a, b) || value.Equal(a, map[string]any{"x": []any{1.0}}) || value.Equal(1.0, "1") || value.Equal(nil, false) {
		t.Fatal("Equal")
	}
}

func TestWeightStops(t *testing.T) {
	x := []any{1.0, 1.0}
	for i := 0; i < 200; i++ {
		x = []any{x, x} // 2^200 values as a tree
	}
	if w := value.Weight(x, 1000); w <= 1000 || w > 1002 {
		t.Fatalf("Weight = %d, want just over the limit", w)
	}
}

func TestNumber(t *testing.T) {
	for _, f := range []float64{0, 1, -1, 2, 200, -1024, 1024, 1025, -1025, 0.5, -0.5, 1e300, 1023.5} {
		v, ok := value.Number(f).(float64)
		if !ok || v != f {
			t.Errorf("Number(%v) = %v", f, v)
		}
	}
	if v := value.Number(math.Copysign(0, -1)).(float64); math.Signbit(v) {
		t.Error("Number(-0) is negative zero")
	}
	if n := testing.AllocsPerRun(100, func() { _ = value.Number(200) }); n != 0 {
		t.Errorf("Number(200) allocates %v times", n)
	}
}

func TestCanonicalKeepsCanonicalValues(t *testing.T) {
	in := []any{-5.0, 0.3, -0.25, "x", map[string]any{"n": -1.0}}
	out, ok := value.Canonical(in)
	if !ok || &out.([]any)[0] != &in[0] {
		t.Fatalf("Canonical copied a canonical value: %v %v", out, ok)
	}
	out, ok = value.Canonical([]any{math.Copysign(0, -1), 0.30000000000000004})
	if l := out.([]any); !ok || math.Signbit(l[0].(float64)) || l[1] != 0.3 {
		t.Fatalf("Canonical = %v %v", out, ok)
	}
}

func TestTypedSlicesAreCheckedLikeLists(t *testing.T) {
	for name, v := range map[string]any{
		"NaN in []float64":        []float64{1, math.NaN()},
		"Inf in []float64":        []float64{math.Inf(1)},
		"invalid UTF-8 []string":  []string{"ok", "\xff"},
		"nested []float64 in map": map[string]any{"a": []float64{math.NaN()}},
	} {
		if _, d := value.Normalize(v, ""); d == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if out, d := value.Normalize([]float64{1, 2.5}, ""); d != nil || len(out.([]any)) != 2 {
		t.Errorf("finite []float64: %v %v", out, d)
	}
}
