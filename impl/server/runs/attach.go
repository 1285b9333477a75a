package runs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/sdods/sdods/impl/server/blob"
	"github.com/sdods/sdods/impl/server/results"
	"github.com/sdods/sdods/impl/server/runner"
	"github.com/sdods/sdods/impl/server/safecontent"
	"github.com/sdods/sdods/impl/server/scenariowrite"
	"github.com/sdods/sdods/impl/server/store"
)

// Attachments (a step's file, a scenario's trace) are written with the batch of their event
// instead of on the runner's way: the sink gives the artifact its id at once (the event and the
// step refer to it), starts storing the blob in the background, and the batch that carries the
// event waits for the blob and inserts the artifact row in its statement, under the blob key's
// lock (store.KeepBlob's, so that the blob cleanup either sees the row or deleted the blob before
// it: the blob is then stored again once the batch committed). A blob that cannot be stored turns
// its event into an error line of the log and leaves the artifact out of the step.
//
// An attachment of at most store.InlineContentMax (a passed attempt's trace manifest, most step
// files) is not a blob: its content goes into the database with its row, in the same batch, so it
// costs no file, fsync or lock of its own and is as durable as its event.

// maxPuts bounds the blobs a sink stores at once.
const maxPuts = 4

// pendingArtifact is an attachment on its way to the blob store and the artifacts table.
type pendingArtifact struct {
	row  scenariowrite.Artifact // BlobKey and SHA256 once stored
	seq  int64                  // its event's sequence number
	data []byte
	// done is closed when the blob is stored (err nil) or could not be (err).
	done chan struct{}
	err  error
	// scenario and step locate the event, to say what was lost when err is set.
	scenario *uuid.UUID
	step     *int
}

// put stores the blob, waiting for a slot of the sink's.
func (k *sink) put(p *pendingArtifact) {
	defer close(p.done)
	k.putSlots <- struct{}{}
	defer func() { <-k.putSlots }()
	ctx, cancel := k.ctx()
	defer cancel()
	p.err = p.store(ctx, k.s.blobs)
}

func (p *pendingArtifact) store(ctx context.Context, blobs blob.Store) error {
	info, err := blobs.Put(ctx, bytes.NewReader(p.data), 0)
	if err != nil {
		return err
	}
	p.row.BlobKey, p.row.SHA256 = info.Key, info.SHA256
	return nil
}

// attachLater records a step's or a scenario's file (see above); the runner does not wait for it.
func (k *sink) attachLater(e runner.Event, sc *scenarioState) {
	a := e.Attachment
	// The type a test gave is untrusted (a response's Content-Type): stored from the allow-list.
	kind := safecontent.Kind(a.MediaType, a.Name)
	mediaType := safecontent.MediaType(a.MediaType)
	p := &pendingArtifact{row: scenariowrite.Artifact{ID: uuid.New(), ScenarioKey: e.ScenarioID, StepIndex: e.Step, Name: a.Name,
		Kind: kind, MediaType: mediaType, SizeBytes: int64(len(a.Data)), CreatedAt: e.Time},
		data: a.Data, done: make(chan struct{}), step: e.Step}
	if len(a.Data) <= store.InlineContentMax {
		sum := sha256.Sum256(a.Data)
		p.row.SHA256, p.row.Content = hex.EncodeToString(sum[:]), a.Data
		close(p.done)
	} else {
		if k.putSlots == nil {
			k.putSlots = make(chan struct{}, maxPuts)
		}
		go k.put(p)
	}
	if st := step(sc, e.Step); st != nil {
		k.stepsMu.Lock()
		st.Attachments = append(st.Attachments, results.Attachment{ArtifactID: p.row.ID, Kind: kind, MediaType: mediaType, Name: a.Name, SizeBytes: p.row.SizeBytes})
		k.stepsMu.Unlock()
	}
	if sc != nil {
		p.scenario = &sc.id
	}
	id := p.row.ID
	k.appendEventWith(apiEvent{Type: "attachment", ScenarioID: p.scenario, StepIndex: e.Step, ArtifactID: &id, Name: &a.Name}, func(b *eventBuffer, seq int64) {
		p.seq = seq
		b.arts = append(b.arts, p)
	})
}

// awaitArtifacts waits for the blobs of a batch's attachments and returns their rows. An attachment
// whose blob could not be stored (tried again once) is left out: its event becomes an error line of
// the log, and its id is remembered as lost, so that the steps written from now on leave it out.
func (k *sink) awaitArtifacts(ctx context.Context, b *eventBuffer) []scenariowrite.Artifact {
	if len(b.arts) == 0 {
		return nil
	}
	rows := make([]scenariowrite.Artifact, 0, len(b.arts))
	for _, p := range b.arts {
		<-p.done
		if p.err != nil {
			p.err = p.store(ctx, k.s.blobs)
		}
		if p.err == nil {
			rows = append(rows, p.row)
			continue
		}
		k.s.log.Error("runs: store attachment", "run_id", k.run.ID, "name", p.row.Name, "error", p.err)
		k.b.mu.Lock()
		if k.b.lost == nil {
			k.b.lost = map[uuid.UUID]bool{}
		}
		k.b.lost[p.row.ID] = true
		k.b.mu.Unlock()
		for i, seq := range b.seqs {
			if seq != p.seq {
				continue
			}
			msg := fmt.Sprintf("the attachment %q could not be stored: %v", p.row.Name, p.err)
			b.types[i], b.datas[i] = "log", string(encodeEvent(nil, &results.Event{Type: "log", RunID: k.run.ID, At: b.ats[i], Sequence: seq,
				ScenarioID: p.scenario, StepIndex: p.step, Level: ptr("error"), Message: &msg}))
		}
	}
	return rows
}

// verifyBlobs stores again, from memory, a committed attachment whose blob the cleanup deleted
// between its storing and its batch (see above).
func (k *sink) verifyBlobs(ctx context.Context, b *eventBuffer) {
	for _, p := range b.arts {
		if p.err != nil || p.row.BlobKey == "" {
			continue
		}
		rc, err := k.s.blobs.Open(ctx, p.row.BlobKey)
		if err == nil {
			_ = rc.Close()
			continue
		}
		if errors.Is(err, blob.ErrNotFound) {
			err = p.store(ctx, k.s.blobs)
		}
		if err != nil {
			k.s.log.Error("runs: keep attachment", "run_id", k.run.ID, "name", p.row.Name, "error", err)
		}
	}
}

// withoutLost returns the steps without the attachments that could not be stored (the steps
// themselves when none is lost).
func withoutLost(steps []results.Step, lost map[uuid.UUID]bool) []results.Step {
	if len(lost) == 0 || steps == nil {
		return steps
	}
	out := make([]results.Step, len(steps))
	for i, st := range steps {
		out[i] = st
		kept := make([]results.Attachment, 0, len(st.Attachments))
		for _, a := range st.Attachments {
			if !lost[a.ArtifactID] {
				kept = append(kept, a)
			}
		}
		out[i].Attachments = kept
	}
	return out
}
