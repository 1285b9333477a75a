// Package resultsapi converts the stored run results (package results) to the API's types
// (gen/serverapi). It is the one place where the two meet; handlers and the report builder call it.
package resultsapi

import (
	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/results"
)

// Steps converts stored steps; nil stays nil.
func Steps(in []results.Step) []serverapi.RunStep {
	if in == nil {
		return nil
	}
	out := make([]serverapi.RunStep, len(in))
	for i, s := range in {
		out[i] = Step(s)
	}
	return out
}

// Step converts one stored step.
func Step(s results.Step) serverapi.RunStep {
	out := serverapi.RunStep{DataTable: s.DataTable, DocString: s.DocString, DurationMs: s.DurationMs, Error: StepError(s.Error),
		FinishedAt: s.FinishedAt, Index: s.Index, Keyword: s.Keyword, Line: s.Line, StartedAt: s.StartedAt,
		Status: serverapi.ResultStatus(s.Status), Text: s.Text, VisualCheck: VisualCheck(s.VisualCheck)}
	if s.Attachments != nil {
		out.Attachments = make([]serverapi.Attachment, len(s.Attachments))
		for i, a := range s.Attachments {
			out.Attachments[i] = Attachment(a)
		}
	}
	if s.Heals != nil {
		out.Heals = make([]serverapi.Heal, len(s.Heals))
		for i, h := range s.Heals {
			out.Heals[i] = Heal(h)
		}
	}
	return out
}

// Attachment converts a stored attachment.
func Attachment(a results.Attachment) serverapi.Attachment {
	return serverapi.Attachment{ArtifactId: a.ArtifactID, Kind: serverapi.AttachmentKind(a.Kind), MediaType: a.MediaType, Name: a.Name, SizeBytes: a.SizeBytes}
}

// Heal converts a stored heal.
func Heal(h results.Heal) serverapi.Heal {
	out := serverapi.Heal{NewSelector: h.NewSelector, OldSelector: h.OldSelector, Score: h.Score, Strategy: serverapi.HealStrategy(h.Strategy)}
	if h.Ambiguous {
		out.Ambiguous = &h.Ambiguous
	}
	if h.RunnerUp != nil {
		out.RunnerUp = &serverapi.HealCandidate{Selector: h.RunnerUp.Selector, Score: h.RunnerUp.Score}
	}
	return out
}

// HealPtr converts an optional heal.
func HealPtr(h *results.Heal) *serverapi.Heal {
	if h == nil {
		return nil
	}
	out := Heal(*h)
	return &out
}

// StepError converts an optional stored error.
func StepError(e *results.StepError) *serverapi.RunStepError {
	if e == nil {
		return nil
	}
	return &serverapi.RunStepError{Actual: e.Actual, Expected: e.Expected, Message: e.Message, Stack: e.Stack, Type: e.Type}
}

// Counts converts stored counts.
func Counts(c results.Counts) serverapi.Counts {
	return serverapi.Counts{Failed: c.Failed, Flaky: c.Flaky, Passed: c.Passed, Pending: c.Pending, Quarantined: c.Quarantined,
		Skipped: c.Skipped, Total: c.Total, Undefined: c.Undefined}
}

// CountsPtr converts optional counts.
func CountsPtr(c *results.Counts) *serverapi.Counts {
	if c == nil {
		return nil
	}
	out := Counts(*c)
	return &out
}

// VisualCheck converts an optional stored visual check.
func VisualCheck(v *results.VisualCheck) *serverapi.VisualCheck {
	if v == nil {
		return nil
	}
	return &serverapi.VisualCheck{ActualArtifactId: v.ActualArtifactID, DiffArtifactId: v.DiffArtifactID, ExpectedArtifactId: v.ExpectedArtifactID,
		MismatchPixels: v.MismatchPixels, MismatchRatio: v.MismatchRatio, Name: v.Name, SizeMismatch: v.SizeMismatch,
		Status: serverapi.VisualCheckStatus(v.Status), Threshold: v.Threshold}
}
