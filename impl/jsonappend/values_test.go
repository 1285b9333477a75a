package jsonappend

import (
	"encoding/json"
	"math"
	"math/rand"
	"testing"
	"time"
)

// Time, Float and StringMap write what encoding/json writes, and refuse what it refuses.
func TestValuesMatchEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	times := []time.Time{{}, time.Date(2026, 11, 27, 5, 0, 20, 123456000, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.FixedZone("x", -(23*3600+59*60))),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("y", 24*3600)), time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("z", 30))}
	for i := 0; i < 500; i++ {
		times = append(times, time.Unix(rng.Int63n(1<<36)-1<<35, rng.Int63n(1e9)).In(time.FixedZone("r", (rng.Intn(48)-24)*1800)))
	}
	for _, tm := range times {
		want, werr := json.Marshal(tm)
		got, ok := Time(nil, tm)
		if ok != (werr == nil) || ok && string(got) != string(want) {
			t.Errorf("Time(%v) = %s %v, encoding/json %s %v", tm, got, ok, want, werr)
		}
	}
	floats := []float64{0, math.Copysign(0, -1), 1, -1, 1e-6, 9.99e-7, 1e21, 1e20, 123.456, 1e-9, 3.4e38,
		math.NaN(), math.Inf(1), math.Inf(-1), math.SmallestNonzeroFloat64, math.MaxFloat64}
	for i := 0; i < 2000; i++ {
		floats = append(floats, math.Float64frombits(rng.Uint64()), float64(math.Float32frombits(rng.Uint32())))
	}
	for _, f := range floats {
		want, werr := json.Marshal(f)
		got, ok := Float(nil, f, 64)
		if ok != (werr == nil) || ok && string(got) != string(want) {
			t.Errorf("Float(%v, 64) = %s %v, encoding/json %s %v", f, got, ok, want, werr)
		}
		f32 := float32(f)
		want, werr = json.Marshal(f32)
		got, ok = Float(nil, float64(f32), 32)
		if ok != (werr == nil) || ok && string(got) != string(want) {
			t.Errorf("Float(%v, 32) = %s %v, encoding/json %s %v", f32, got, ok, want, werr)
		}
	}
	for _, m := range []map[string]string{nil, {}, {"b": "<2>", "a": "1", "\u2028": "\xff"}} {
		want, _ := json.Marshal(m)
		if got := StringMap(nil, m); string(got) != string(want) {
			t.Errorf("StringMap(%v) = %s, encoding/json %s", m, got, want)
		}
	}
}
