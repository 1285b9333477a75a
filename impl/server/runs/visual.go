package runs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/pixeldiff"
	"github.com/sdods/sdods/impl/server/results"
	"github.com/sdods/sdods/impl/server/runner"
	"github.com/sdods/sdods/impl/server/steplib"
	"github.com/sdods/sdods/impl/server/store"
)

// VisualThreshold is the YIQ colour-distance threshold of visual checks (pixelmatch's default);
// a check fails when any pixel differs beyond it, anti-aliased pixels left out.
const VisualThreshold = 0.1

// baselines is a run's steplib.BaselineChecker: it compares a capture with the project's baseline
// of the same name, browser and viewport. The first capture of a key becomes its baseline at once,
// pending review, so that the following captures are compared with it.
type baselines struct {
	s   *Service
	run db.Run
}

// CheckBaseline implements steplib.BaselineChecker.
func (b *baselines) CheckBaseline(ctx context.Context, v steplib.VisualCheck) (steplib.VisualResult, error) {
	res := steplib.VisualResult{Threshold: VisualThreshold}
	key := db.GetVisualBaselineParams{ProjectID: b.run.ProjectID, Name: v.Name, Browser: v.Browser, Viewport: v.Viewport}
	base, err := b.s.st.GetVisualBaseline(ctx, key)
	if store.IsNotFound(err) {
		info, perr := b.s.blobs.Put(ctx, bytes.NewReader(v.Image), 0)
		if perr != nil {
			return res, fmt.Errorf("store the capture: %w", perr)
		}
		var inserted bool
		err = b.s.st.WithTx(ctx, func(q *db.Queries) error {
			if err := store.KeepBlob(ctx, q, b.s.blobs, info.Key, v.Image); err != nil {
				return err
			}
			_, err := q.InsertPendingBaseline(ctx, db.InsertPendingBaselineParams{ProjectID: b.run.ProjectID, Name: v.Name, Browser: v.Browser,
				Viewport: v.Viewport, MediaType: v.MediaType, SizeBytes: info.Size, Sha256: info.SHA256, BlobKey: info.Key,
				SourceRunID: uuid.NullUUID{UUID: b.run.ID, Valid: true}})
			if store.IsNotFound(err) {
				return nil // another capture became the baseline meanwhile
			}
			inserted = err == nil
			return err
		})
		if err != nil {
			return res, fmt.Errorf("record the baseline: %w", err)
		}
		if inserted {
			res.Status = steplib.VisualPending
			return res, nil
		}
		// Another capture became the baseline meanwhile: compare with it.
		base, err = b.s.st.GetVisualBaseline(ctx, key)
	}
	if err != nil {
		return res, fmt.Errorf("load the baseline: %w", err)
	}
	sum := sha256.Sum256(v.Image)
	if hex.EncodeToString(sum[:]) == base.Sha256 {
		res.Status = steplib.VisualPassed
		return res, nil
	}
	rc, err := b.s.blobs.Open(ctx, base.BlobKey)
	if err != nil {
		return res, fmt.Errorf("read the baseline image: %w", err)
	}
	expected, err := io.ReadAll(rc)
	_ = rc.Close()
	if err != nil {
		return res, fmt.Errorf("read the baseline image: %w", err)
	}
	opt := pixeldiff.Defaults()
	opt.Threshold = VisualThreshold
	d, diffPNG, err := pixeldiff.DiffPNG(expected, v.Image, opt)
	if err != nil {
		return res, err
	}
	res.MismatchPixels, res.MismatchRatio, res.SizeMismatch = d.Mismatch, d.Ratio, d.SizeMismatch
	res.Status = steplib.VisualPassed
	if d.Mismatch > 0 {
		res.Status, res.Expected, res.Diff = steplib.VisualFailed, expected, diffPNG
	}
	return res, nil
}

// visualCheck records a visual check: its images as artifacts of the step (the capture, and the
// baseline and the diff when it failed), the figures on the step, a visual_checks row and an event.
func (k *sink) visualCheck(ctx context.Context, e runner.Event, sc *scenarioState) {
	vc := e.VisualCheck
	v := results.VisualCheck{Name: vc.Name, Status: results.VisualPending}
	save := func(suffix, mediaType string, data []byte) *uuid.UUID {
		if len(data) == 0 {
			return nil
		}
		return k.attachment(ctx, runner.Event{Type: runner.EventAttachment, ScenarioID: e.ScenarioID, Step: e.Step,
			Attachment: &runner.AttachmentEvent{Name: "visual-" + vc.Name + suffix, MediaType: mediaType, Size: len(data), Data: data}}, sc)
	}
	v.ActualArtifactID = save(".png", vc.MediaType, vc.Image)
	res := vc.Result
	if res != nil {
		v.Status = string(res.Status)
		v.Threshold = ptr(float32(res.Threshold))
		if res.Status != steplib.VisualPending {
			v.MismatchPixels, v.MismatchRatio, v.SizeMismatch = ptr(res.MismatchPixels), ptr(float32(res.MismatchRatio)), ptr(res.SizeMismatch)
		}
		v.ExpectedArtifactID = save("-expected.png", "image/png", res.Expected)
		v.DiffArtifactID = save("-diff.png", "image/png", res.Diff)
	}
	if st := step(sc, e.Step); st != nil {
		k.stepsMu.Lock()
		st.VisualCheck = &v
		k.stepsMu.Unlock()
	}
	if sc != nil && e.Step != nil && res != nil {
		row := db.InsertVisualCheckParams{RunID: k.run.ID, ProjectID: k.run.ProjectID, ScenarioID: sc.id, StepIndex: int32(*e.Step),
			Name: vc.Name, Browser: vc.Browser, Viewport: vc.Viewport, Selector: nonEmpty(vc.Selector), Status: res.Status,
			ActualArtifactID: nullUUID(v.ActualArtifactID), ExpectedArtifactID: nullUUID(v.ExpectedArtifactID), DiffArtifactID: nullUUID(v.DiffArtifactID),
			MismatchRatio: res.MismatchRatio, Threshold: res.Threshold, SizeMismatch: res.SizeMismatch}
		if res.Status != steplib.VisualPending {
			row.MismatchPixels = ptr(int64(res.MismatchPixels))
		}
		if _, err := k.s.st.InsertVisualCheck(ctx, row); err != nil {
			k.s.log.Error("runs: record visual check", "error", err)
		}
	}
	var scID *uuid.UUID
	if sc != nil {
		scID = &sc.id
	}
	k.appendEvent(apiEvent{Type: "visual_check", ScenarioID: scID, StepIndex: e.Step, Name: &v.Name, VisualCheck: &v})
}

func nullUUID(id *uuid.UUID) uuid.NullUUID {
	if id == nil {
		return uuid.NullUUID{}
	}
	return uuid.NullUUID{UUID: *id, Valid: true}
}
