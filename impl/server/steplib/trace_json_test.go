package steplib

import (
	"encoding/json"
	"math"
	"math/rand"
	"testing"
	"time"
)

// AppendJSON writes what encoding/json writes for every shape of manifest (members empty and not,
// nil and empty lists, odd strings, times and floats), and refuses exactly what it refuses.
func TestTraceManifestAppendJSONSameAsEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	strs := []string{"", "plain", `quote " backslash \`, "<a href='x'>&amp;</a>", "\b\f\n\r\t\x00\x1f\x7f",
		"caf\u00e9 \u2028 \u2029 \U0001F600", "bad \xff \xc3 end", "GET http://127.0.0.1/items/1 → 200 OK"}
	str := func() string {
		if r.Intn(4) == 0 {
			b := make([]byte, r.Intn(12))
			r.Read(b)
			return string(b)
		}
		return strs[r.Intn(len(strs))]
	}
	zones := []*time.Location{time.UTC, time.FixedZone("x", 5*3600+1800), time.FixedZone("y", -7*3600), time.FixedZone("bad", 24*3600+60), time.FixedZone("sec", 3600+7)}
	tm := func() time.Time {
		switch r.Intn(8) {
		case 0:
			return time.Time{}
		case 1:
			return time.Date(10000+r.Intn(5), 1, 1, 0, 0, 0, 0, time.UTC)
		case 2:
			return time.Date(-1-r.Intn(5), 1, 1, 0, 0, 0, 0, time.UTC)
		}
		return time.Unix(r.Int63n(4e9), r.Int63n(1e9)).In(zones[r.Intn(len(zones))])
	}
	floats := []float64{0, 1, -1, 0.5, 1e-7, 1.5e-6, 1e20, 1e21, 123456789.125, 3.0000001, math.NaN(), math.Inf(1), -2.5e-9, 1e100}
	headers := func() map[string]string {
		switch r.Intn(3) {
		case 0:
			return nil
		case 1:
			return map[string]string{}
		}
		m := map[string]string{}
		for range r.Intn(6) {
			m[str()] = str()
		}
		return m
	}
	var refused, written int
	for i := range 3000 {
		m := TraceManifest{Version: TraceVersion, Attempt: r.Intn(3) + 1, Status: str(), Files: str()}
		if r.Intn(10) > 0 {
			m.Steps = []TraceStep{}
		}
		for j := range r.Intn(4) {
			st := TraceStep{Index: j, Keyword: str(), Text: str(), Definition: str(), Kind: str(), Status: str(), Error: str(),
				StartedAt: tm(), DurationMs: r.Int63n(1e6) - 10, Before: str(), After: str(), DOM: str(), URL: str()}
			if r.Intn(2) == 0 {
				st.Target = &TraceTarget{Selector: str(), HTML: str()}
			}
			if r.Intn(4) > 0 {
				st.Console = []TraceConsole{}
				for range r.Intn(3) {
					st.Console = append(st.Console, TraceConsole{At: tm(), Level: str(), Text: str()})
				}
			}
			if r.Intn(4) > 0 {
				st.Network = []*TraceRequest{}
				for range r.Intn(3) {
					if r.Intn(8) == 0 {
						st.Network = append(st.Network, nil)
						continue
					}
					q := &TraceRequest{At: tm(), Method: str(), URL: str(), Type: str(), Status: r.Intn(3) * 200, StatusText: str(), MimeType: str(),
						RequestBytes: r.Intn(2) * r.Intn(5000), ResponseBytes: r.Intn(2) * r.Intn(5000), Failure: str(), ResponseBody: str()}
					if r.Intn(2) == 0 {
						f := floats[r.Intn(len(floats))] * float64(r.Intn(3)+1)
						q.DurationMs = &f
					}
					st.Network = append(st.Network, q)
				}
			}
			if r.Intn(2) == 0 {
				st.HTTP = &TraceHTTP{Method: str(), URL: str(), RequestHeaders: headers(), RequestBody: str(), Status: r.Intn(2) * 404,
					ResponseHeaders: headers(), ResponseBody: str(), DurationMs: r.Int63n(100), Error: str()}
			}
			switch r.Intn(3) {
			case 0:
				st.Notes = []string{}
			case 1:
				st.Notes = []string{str(), str()}
			}
			m.Steps = append(m.Steps, st)
		}
		want, werr := json.Marshal(m)
		got, gerr := m.AppendJSON([]byte("prefix"))
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("case %d: encoding/json error %v, AppendJSON error %v", i, werr, gerr)
		}
		if werr != nil {
			refused++
			continue
		}
		written++
		if string(got) != "prefix"+string(want) {
			t.Fatalf("case %d:\n got %s\nwant prefix%s", i, got, want)
		}
	}
	if refused == 0 || written < 1000 {
		t.Fatalf("%d refused, %d written: the cases miss a side", refused, written)
	}
}
