package results

import (
	"errors"
	"strconv"
	"time"

	"github.com/sdods/sdods/impl/jsonappend"
)

// errUnsupported is returned for what encoding/json refuses too (a NaN or infinite number, a time
// outside the years 0–9999): the caller then uses encoding/json, for the same outcome.
var errUnsupported = errors.New("results: value encoding/json refuses")

// AppendJSON appends the event's stored form to dst: byte for byte what encoding/json makes of it
// (json.Marshal), without reflection. Every event of a run is encoded once, as it happens; a
// change to Event or the types it holds must change this function (TestEventJSONSameAsEncodingJSON
// compares the two).
func (e *Event) AppendJSON(dst []byte) ([]byte, error) {
	b := append(dst, '{')
	if e.ArtifactID != nil {
		b = jsonappend.UUID(append(b, `"artifactId":`...), *e.ArtifactID)
		b = append(b, ',')
	}
	b = append(b, `"at":`...)
	b, err := appendTime(b, e.At)
	if err != nil {
		return dst, err
	}
	if e.Counts != nil {
		b = e.Counts.appendJSON(append(b, `,"counts":`...))
	}
	if e.Dataset != nil {
		b = jsonappend.String(append(b, `,"dataset":`...), *e.Dataset)
	}
	if e.Heal != nil {
		if b, err = e.Heal.appendJSON(append(b, `,"heal":`...)); err != nil {
			return dst, err
		}
	}
	if e.Level != nil {
		b = jsonappend.String(append(b, `,"level":`...), *e.Level)
	}
	if e.Message != nil {
		b = jsonappend.String(append(b, `,"message":`...), *e.Message)
	}
	if e.Name != nil {
		b = jsonappend.String(append(b, `,"name":`...), *e.Name)
	}
	if e.Row != nil {
		b = strconv.AppendInt(append(b, `,"row":`...), int64(*e.Row), 10)
	}
	b = jsonappend.UUID(append(b, `,"runId":`...), e.RunID)
	if e.ScenarioID != nil {
		b = jsonappend.UUID(append(b, `,"scenarioId":`...), *e.ScenarioID)
	}
	b = strconv.AppendInt(append(b, `,"sequence":`...), e.Sequence, 10)
	if e.Status != nil {
		b = jsonappend.String(append(b, `,"status":`...), *e.Status)
	}
	if e.StepIndex != nil {
		b = strconv.AppendInt(append(b, `,"stepIndex":`...), int64(*e.StepIndex), 10)
	}
	b = jsonappend.String(append(b, `,"type":`...), e.Type)
	if e.VisualCheck != nil {
		if b, err = e.VisualCheck.appendJSON(append(b, `,"visualCheck":`...)); err != nil {
			return dst, err
		}
	}
	return append(b, '}'), nil
}

func (c *Counts) appendJSON(b []byte) []byte {
	b = strconv.AppendInt(append(b, `{"failed":`...), int64(c.Failed), 10)
	b = strconv.AppendInt(append(b, `,"flaky":`...), int64(c.Flaky), 10)
	b = strconv.AppendInt(append(b, `,"passed":`...), int64(c.Passed), 10)
	b = strconv.AppendInt(append(b, `,"pending":`...), int64(c.Pending), 10)
	if c.Quarantined != nil {
		b = strconv.AppendInt(append(b, `,"quarantined":`...), int64(*c.Quarantined), 10)
	}
	b = strconv.AppendInt(append(b, `,"skipped":`...), int64(c.Skipped), 10)
	b = strconv.AppendInt(append(b, `,"total":`...), int64(c.Total), 10)
	b = strconv.AppendInt(append(b, `,"undefined":`...), int64(c.Undefined), 10)
	return append(b, '}')
}

func (h *Heal) appendJSON(b []byte) ([]byte, error) {
	b = append(b, '{')
	if h.Ambiguous {
		b = append(b, `"ambiguous":true,`...)
	}
	b = jsonappend.String(append(b, `"newSelector":`...), h.NewSelector)
	b = jsonappend.String(append(b, `,"oldSelector":`...), h.OldSelector)
	var err error
	if h.RunnerUp != nil {
		b, err = appendFloat32(append(b, `,"runnerUp":{"score":`...), h.RunnerUp.Score)
		if err != nil {
			return b, err
		}
		b = jsonappend.String(append(b, `,"selector":`...), h.RunnerUp.Selector)
		b = append(b, '}')
	}
	if b, err = appendFloat32(append(b, `,"score":`...), h.Score); err != nil {
		return b, err
	}
	b = jsonappend.String(append(b, `,"strategy":`...), h.Strategy)
	return append(b, '}'), nil
}

func (v *VisualCheck) appendJSON(b []byte) ([]byte, error) {
	b = append(b, '{')
	if v.ActualArtifactID != nil {
		b = jsonappend.UUID(append(b, `"actualArtifactId":`...), *v.ActualArtifactID)
		b = append(b, ',')
	}
	if v.DiffArtifactID != nil {
		b = jsonappend.UUID(append(b, `"diffArtifactId":`...), *v.DiffArtifactID)
		b = append(b, ',')
	}
	if v.ExpectedArtifactID != nil {
		b = jsonappend.UUID(append(b, `"expectedArtifactId":`...), *v.ExpectedArtifactID)
		b = append(b, ',')
	}
	if v.MismatchPixels != nil {
		b = strconv.AppendInt(append(b, `"mismatchPixels":`...), int64(*v.MismatchPixels), 10)
		b = append(b, ',')
	}
	var err error
	if v.MismatchRatio != nil {
		if b, err = appendFloat32(append(b, `"mismatchRatio":`...), *v.MismatchRatio); err != nil {
			return b, err
		}
		b = append(b, ',')
	}
	b = jsonappend.String(append(b, `"name":`...), v.Name)
	if v.SizeMismatch != nil {
		b = strconv.AppendBool(append(b, `,"sizeMismatch":`...), *v.SizeMismatch)
	}
	b = jsonappend.String(append(b, `,"status":`...), v.Status)
	if v.Threshold != nil {
		if b, err = appendFloat32(append(b, `,"threshold":`...), *v.Threshold); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

// appendTime is time.Time's MarshalJSON, refusing what it refuses.
func appendTime(b []byte, t time.Time) ([]byte, error) {
	b, ok := jsonappend.Time(b, t)
	if !ok {
		return b, errUnsupported
	}
	return b, nil
}

// appendFloat32 is encoding/json's float32, refusing what it refuses.
func appendFloat32(b []byte, f float32) ([]byte, error) {
	b, ok := jsonappend.Float(b, float64(f), 32)
	if !ok {
		return b, errUnsupported
	}
	return b, nil
}
