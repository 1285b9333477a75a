package value_test

import (
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
