package runs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/blob"
	"github.com/sdods/sdods/impl/server/results"
	"github.com/sdods/sdods/impl/server/runner"
	"github.com/sdods/sdods/impl/server/store"
)

// failingBlobs refuses every Put, counting them.
type failingBlobs struct{ puts atomic.Int32 }

func (f *failingBlobs) Put(context.Context, io.Reader, int64) (blob.Info, error) {
	f.puts.Add(1)
	return blob.Info{}, errors.New("disk full")
}
func (f *failingBlobs) Open(context.Context, string) (io.ReadCloser, error) {
	return nil, blob.ErrNotFound
}
func (f *failingBlobs) Delete(context.Context, string) error { return nil }

// bigJSON is a JSON document one byte too large to be kept in the database.
func bigJSON() []byte {
	return []byte(`"` + strings.Repeat("x", store.InlineContentMax-1) + `"`)
}

// An attachment whose blob cannot be stored (tried in the background, then once more by its batch)
// is not written as an artifact: its event becomes an error line of the log, at the same sequence
// number, and the steps written from then on leave it out.
func TestAttachmentThatCannotBeStored(t *testing.T) {
	blobs := &failingBlobs{}
	k := &sink{s: &Service{blobs: blobs, log: slog.New(slog.DiscardHandler)}, run: db.Run{ID: uuid.New()}, scenarios: map[string]*scenarioState{}}
	sc := &scenarioState{id: uuid.New(), steps: []results.Step{results.NewStep(0)}}
	k.scenarios["s1"] = sc
	step := 0
	k.Emit(runner.Event{Type: runner.EventAttachment, ScenarioID: "s1", Step: &step, Time: time.Now(),
		Attachment: &runner.AttachmentEvent{Name: "body.json", MediaType: "application/json", Data: bigJSON()}})
	if len(sc.steps[0].Attachments) != 1 {
		t.Fatalf("the step does not list the attachment: %+v", sc.steps[0])
	}
	k.b.mu.Lock()
	buf := k.b.buf
	k.b.buf = eventBuffer{}
	if k.b.timer != nil {
		k.b.timer.Stop()
	}
	k.b.mu.Unlock()
	if len(buf.seqs) != 1 || buf.types[0] != "attachment" || len(buf.arts) != 1 {
		t.Fatalf("buffered %v %v, %d attachments", buf.seqs, buf.types, len(buf.arts))
	}
	rows := k.awaitArtifacts(context.Background(), &buf)
	if len(rows) != 0 {
		t.Fatalf("rows %+v", rows)
	}
	if n := blobs.puts.Load(); n != 2 {
		t.Errorf("%d puts, want 2 (the background one and the batch's)", n)
	}
	var ev results.Event
	if err := json.Unmarshal([]byte(buf.datas[0]), &ev); err != nil {
		t.Fatal(err)
	}
	if buf.types[0] != "log" || ev.Type != "log" || ev.Sequence != buf.seqs[0] || ev.Level == nil || *ev.Level != "error" ||
		ev.Message == nil || !strings.Contains(*ev.Message, `"body.json" could not be stored: disk full`) || ev.ScenarioID == nil || *ev.ScenarioID != sc.id {
		t.Errorf("event %s %s", buf.types[0], buf.datas[0])
	}
	kept := withoutLost(sc.steps, k.b.lost)
	if len(kept[0].Attachments) != 0 || len(sc.steps[0].Attachments) != 1 {
		t.Errorf("withoutLost: %+v (the sink's own steps %+v must stay)", kept[0].Attachments, sc.steps[0].Attachments)
	}
	if got := withoutLost(sc.steps, nil); &got[0] != &sc.steps[0] {
		t.Error("withoutLost copies when nothing is lost")
	}
}

// An attachment of at most store.InlineContentMax is not a blob: its row carries its content and
// hash, and the blob store is not asked (even one that refuses everything).
func TestSmallAttachmentKeptWithItsRow(t *testing.T) {
	blobs := &failingBlobs{}
	k := &sink{s: &Service{blobs: blobs, log: slog.New(slog.DiscardHandler)}, run: db.Run{ID: uuid.New()}, scenarios: map[string]*scenarioState{}}
	sc := &scenarioState{id: uuid.New(), steps: []results.Step{results.NewStep(0)}}
	k.scenarios["s1"] = sc
	cases := map[string][]byte{"trace-a1.json": []byte(`{"attempt":1}`), "empty.txt": {}, "largest.json": bigJSON()[1:]}
	for name, data := range cases {
		k.Emit(runner.Event{Type: runner.EventAttachment, ScenarioID: "s1", Time: time.Now(),
			Attachment: &runner.AttachmentEvent{Name: name, MediaType: "application/json", Data: data}})
	}
	k.b.mu.Lock()
	buf := k.b.buf
	k.b.buf = eventBuffer{}
	if k.b.timer != nil {
		k.b.timer.Stop()
	}
	k.b.mu.Unlock()
	rows := k.awaitArtifacts(context.Background(), &buf)
	if len(rows) != len(cases) {
		t.Fatalf("%d rows, want %d", len(rows), len(cases))
	}
	for _, r := range rows {
		want := cases[r.Name]
		sum := sha256.Sum256(want)
		if r.BlobKey != "" || !bytes.Equal(r.Content, want) || r.SHA256 != hex.EncodeToString(sum[:]) || r.SizeBytes != int64(len(want)) {
			t.Errorf("%s: key %q, %d bytes of content, sha256 %s, size %d", r.Name, r.BlobKey, len(r.Content), r.SHA256, r.SizeBytes)
		}
	}
	if n := blobs.puts.Load(); n != 0 {
		t.Errorf("%d puts, want none", n)
	}
}
