package httpapi

import (
	"encoding/json"
	"math"
	"math/rand"
	"testing"
)

// TestAppendFloat32MatchesEncodingJSON: a proposal's confidence is written as encoding/json writes
// a float32, byte for byte, over values of every magnitude (both sides of the exponent form's
// bounds) and random bit patterns.
func TestAppendFloat32MatchesEncodingJSON(t *testing.T) {
	vals := []float32{0, 1, 0.5, 0.55, 0.333333, 1e-6, 9.99e-7, 1e-7, 1.5e-10, 1e20, 1e21, 3.4e38, -0.25, -1e-8, math.SmallestNonzeroFloat32,
		float32(math.Nextafter32(1e-6, 0)), float32(math.Nextafter32(1e21, 0))}
	r := rand.New(rand.NewSource(31))
	for i := 0; i < 20000; i++ {
		f := math.Float32frombits(r.Uint32())
		if !math.IsNaN(float64(f)) && !math.IsInf(float64(f), 0) {
			vals = append(vals, f)
		}
	}
	for _, f := range vals {
		want, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendFloat32(nil, f); string(got) != string(want) {
			t.Fatalf("%g: %s, encoding/json %s", f, got, want)
		}
	}
}

// TestAppendStoredObject: a stored evidence document is written as decoding it into a map and
// encoding the map would write it, up to spacing, key order and the form of numbers.
func TestAppendStoredObject(t *testing.T) {
	for _, doc := range []string{`{}`, `{"a": {"b": [1, 2.5, null, "x<y>&z"]}, "c": null}`, `null`, ` null `, `[1]`, `"s"`, `12`, `true`, ``, `{"big": 1e300}`} {
		m := map[string]any{}
		_ = json.Unmarshal([]byte(doc), &m)
		want, _ := json.Marshal(m)
		got := appendStoredObject(nil, []byte(doc))
		var a, b any
		if err := json.Unmarshal(got, &a); err != nil {
			t.Fatalf("%q: %s: %v", doc, got, err)
		}
		_ = json.Unmarshal(want, &b)
		if ja, jb := mustJSON(t, a), mustJSON(t, b); ja != jb {
			t.Fatalf("%q: %s, decoded and encoded %s", doc, got, want)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
