package results

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"
)

func p[T any](v T) *T { return &v }

// sameAsEncodingJSON fails unless AppendJSON gives json.Marshal's bytes, or fails where it fails.
func sameAsEncodingJSON(t *testing.T, e Event) {
	t.Helper()
	want, werr := json.Marshal(e)
	got, gerr := e.AppendJSON([]byte("prefix"))
	if werr != nil || gerr != nil {
		if werr == nil || gerr == nil {
			t.Fatalf("errors differ: encoding/json %v, AppendJSON %v", werr, gerr)
		}
		if string(got) != "prefix" {
			t.Fatalf("AppendJSON failed but changed dst: %q", got)
		}
		return
	}
	if !bytes.HasPrefix(got, []byte("prefix")) {
		t.Fatalf("dst lost: %q", got)
	}
	if got = got[len("prefix"):]; !bytes.Equal(got, want) {
		t.Fatalf("AppendJSON:\n %s\nencoding/json:\n %s", got, want)
	}
}

// Every kind of event the sink stores (run.status, scenario.started and finished with a dataset
// row, step.started and finished, log, attachment, heal, visual_check, end), then strings needing
// escapes, numbers at encoding/json's format cut-offs, times in zones: the same bytes as encoding/json.
func TestEventJSONSameAsEncodingJSON(t *testing.T) {
	run, sc, art := uuid.New(), uuid.New(), uuid.New()
	at := time.Date(2026, 11, 26, 19, 4, 5, 123456789, time.UTC)
	events := []Event{
		{Type: "run.status", RunID: run, At: at, Sequence: 1, Status: p("running")},
		{Type: "scenario.started", RunID: run, At: at, Sequence: 2, ScenarioID: &sc, Dataset: p("users"), Row: p(3)},
		{Type: "step.started", RunID: run, At: at, Sequence: 3, ScenarioID: &sc, StepIndex: p(0)},
		{Type: "log", RunID: run, At: at, Sequence: 4, ScenarioID: &sc, StepIndex: p(0), Level: p("info"), Message: p("GET /items/1 → 200")},
		{Type: "attachment", RunID: run, At: at, Sequence: 5, ScenarioID: &sc, StepIndex: p(0), ArtifactID: &art, Name: p("response.json")},
		{Type: "heal", RunID: run, At: at, Sequence: 6, ScenarioID: &sc, StepIndex: p(1), Heal: &Heal{OldSelector: "#go", NewSelector: "[data-testid=go]", Strategy: "test-id", Score: 0.875}},
		{Type: "heal", RunID: run, At: at, Sequence: 7, Heal: &Heal{Ambiguous: true, OldSelector: "a<b>&c", NewSelector: "x", Strategy: "text", Score: 1e-7,
			RunnerUp: &HealCandidate{Selector: `div[title="y"]`, Score: 0.5}}},
		{Type: "visual_check", RunID: run, At: at, Sequence: 8, ScenarioID: &sc, StepIndex: p(2), Name: p("home"), VisualCheck: &VisualCheck{Name: "home", Status: VisualPending}},
		{Type: "visual_check", RunID: run, At: at, Sequence: 9, VisualCheck: &VisualCheck{ActualArtifactID: &art, DiffArtifactID: &art, ExpectedArtifactID: &art,
			MismatchPixels: p(120), MismatchRatio: p(float32(0.0123)), Name: "home", SizeMismatch: p(false), Status: "failed", Threshold: p(float32(0.1))}},
		{Type: "step.finished", RunID: run, At: at, Sequence: 10, ScenarioID: &sc, StepIndex: p(2), Status: p("passed")},
		{Type: "scenario.finished", RunID: run, At: at, Sequence: 11, ScenarioID: &sc, Status: p("failed"), Message: p("step 3 (Then x) failed:\n\t\"expected\" <1> & 'got' 2\u2028\u2029\x00\x1f\x7f\xff\xfe"), Dataset: p(""), Row: p(-1)},
		{Type: "run.status", RunID: run, At: at, Sequence: 12, Status: p("failed"), Counts: &Counts{Total: 200, Passed: 199, Failed: 1, Flaky: 2, Pending: 3, Skipped: 4, Undefined: 5}},
		{Type: "end", RunID: run, At: at, Sequence: 13, Status: p("failed"), Counts: &Counts{Quarantined: p(1)}, Message: p("")},
		{Type: "", At: time.Time{}},
		{Type: "x", At: at.In(time.FixedZone("", 5*3600+30*60)), Sequence: math.MaxInt64},
		{Type: "x", At: at.In(time.FixedZone("", -7*3600)), Sequence: -1},
		{Type: "x", At: at.Truncate(time.Second)},
		{Type: "x", At: at.In(time.FixedZone("", 25*3600))},           // refused by both
		{Type: "x", At: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}, // refused by both
		{Type: "x", At: time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)},    // refused by both
		{Type: "heal", At: at, Heal: &Heal{Score: float32(math.NaN())}},
		{Type: "heal", At: at, Heal: &Heal{Score: float32(math.Inf(1))}},
	}
	for _, f := range []float32{0, -0, 1, -1, 1e-6, 9.99999e-7, 1e20, 1e21, 123456789, 1.5e-9, math.MaxFloat32, math.SmallestNonzeroFloat32, 0.1, 1.0 / 3} {
		events = append(events, Event{Type: "heal", At: at, Heal: &Heal{Score: f, RunnerUp: &HealCandidate{Score: -f}}},
			Event{Type: "visual_check", At: at, VisualCheck: &VisualCheck{MismatchRatio: &f, Threshold: &f}})
	}
	for _, e := range events {
		sameAsEncodingJSON(t, e)
	}
}

// Random events, with random strings (of every byte value and some runes) and numbers: the same
// bytes as encoding/json.
func TestEventJSONRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 1))
	str := func() string {
		runes := []string{"a", "é", "→", "\u2028", "\u2029", "<", ">", "&", `"`, `\`, "\n", "\t", "\x01", "\x7f", "\xff", "😀", "\xed\xa0\x80"}
		var b []byte
		for range r.IntN(12) {
			if r.IntN(2) == 0 {
				b = append(b, byte(r.IntN(256)))
			} else {
				b = append(b, runes[r.IntN(len(runes))]...)
			}
		}
		return string(b)
	}
	maybe := func() bool { return r.IntN(2) == 0 }
	f32 := func() float32 { return math.Float32frombits(r.Uint32()) }
	for range 20000 {
		e := Event{Type: str(), RunID: uuid.New(), Sequence: r.Int64(), At: time.Unix(r.Int64N(1<<36), r.Int64N(1e9)).In(time.FixedZone("", (r.IntN(48)-24)*1800))}
		if maybe() {
			e.ArtifactID = p(uuid.New())
		}
		if maybe() {
			e.ScenarioID = p(uuid.New())
		}
		if maybe() {
			e.Status, e.Level, e.Message, e.Name, e.Dataset = p(str()), p(str()), p(str()), p(str()), p(str())
		}
		if maybe() {
			e.Row, e.StepIndex = p(r.Int()-r.Int()), p(r.IntN(100))
		}
		if maybe() {
			e.Counts = &Counts{Failed: r.Int(), Flaky: -r.Int(), Passed: r.IntN(10), Pending: 1, Skipped: 2, Total: 3, Undefined: 4}
			if maybe() {
				e.Counts.Quarantined = p(r.IntN(5))
			}
		}
		if maybe() {
			e.Heal = &Heal{Ambiguous: maybe(), NewSelector: str(), OldSelector: str(), Score: f32(), Strategy: str()}
			if maybe() {
				e.Heal.RunnerUp = &HealCandidate{Score: f32(), Selector: str()}
			}
		}
		if maybe() {
			e.VisualCheck = &VisualCheck{Name: str(), Status: str()}
			if maybe() {
				e.VisualCheck.ActualArtifactID, e.VisualCheck.DiffArtifactID, e.VisualCheck.ExpectedArtifactID = p(uuid.New()), p(uuid.New()), p(uuid.New())
				e.VisualCheck.MismatchPixels, e.VisualCheck.MismatchRatio = p(r.Int()), p(f32())
				e.VisualCheck.SizeMismatch, e.VisualCheck.Threshold = p(maybe()), p(f32())
			}
		}
		sameAsEncodingJSON(t, e)
	}
}

func FuzzEventJSON(f *testing.F) {
	f.Add("log", "message <&>", "info", int64(7), float32(0.5), int64(1764180000), 3600)
	f.Add("\xff\u2028", "\x00", "", int64(-1), float32(1e-9), int64(0), -7200)
	f.Fuzz(func(t *testing.T, typ, msg, level string, seq int64, score float32, unix int64, zone int) {
		e := Event{Type: typ, Message: &msg, Level: &level, Sequence: seq, RunID: uuid.New(), At: time.Unix(unix, seq%1e9).In(time.FixedZone("", zone)),
			Heal:        &Heal{OldSelector: msg, NewSelector: typ, Score: score, Strategy: level, RunnerUp: &HealCandidate{Score: -score, Selector: msg}},
			VisualCheck: &VisualCheck{Name: msg, Status: typ, MismatchRatio: &score}}
		sameAsEncodingJSON(t, e)
	})
}

func BenchmarkEventJSON(b *testing.B) {
	sc := uuid.New()
	e := Event{Type: "step.finished", RunID: uuid.New(), At: time.Now().UTC(), Sequence: 42, ScenarioID: &sc, StepIndex: p(1), Status: p("passed")}
	b.Run("encoding/json", func(b *testing.B) {
		for b.Loop() {
			_, _ = json.Marshal(e)
		}
	})
	b.Run("AppendJSON", func(b *testing.B) {
		buf := make([]byte, 0, 256)
		for b.Loop() {
			buf, _ = e.AppendJSON(buf[:0])
		}
	})
}
