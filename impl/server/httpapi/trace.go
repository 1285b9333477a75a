package httpapi

import (
	"context"

	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/tracing"
)

// GetScenarioTraceDiff compares a scenario's trace with the trace of its last passing run.
func (s *Server) GetScenarioTraceDiff(ctx context.Context, req serverapi.GetScenarioTraceDiffRequestObject) (serverapi.GetScenarioTraceDiffResponseObject, error) {
	r, err := s.runByID(ctx, req.RunId)
	if err != nil {
		return nil, err
	}
	c, err := s.Tracing.Compare(ctx, r.Run.ID, req.ScenarioId)
	if err != nil {
		return nil, err
	}
	return serverapi.GetScenarioTraceDiff200JSONResponse(toTraceDiff(c)), nil
}

func toTraceDiff(c tracing.Comparison) serverapi.TraceDiff {
	out := serverapi.TraceDiff{RunId: c.RunID, ScenarioId: c.ScenarioID, Attempt: &c.Attempt, Reason: nonEmpty(c.Reason),
		FirstDifference: c.FirstDifference, Steps: make([]serverapi.TraceStepDiff, 0, len(c.Steps))}
	if b := c.Baseline; b != nil {
		out.Baseline = &serverapi.TraceDiffBaseline{RunId: b.RunID, ScenarioId: b.ScenarioID, Attempt: b.Attempt, StartedAt: b.StartedAt}
	}
	for _, d := range c.Steps {
		sd := serverapi.TraceStepDiff{Index: d.Index, Text: d.Text, BaselineText: nonEmpty(d.BaselineText), Status: nonEmpty(d.Status),
			BaselineStatus: nonEmpty(d.BaselineStatus), DurationMs: d.DurationMs, BaselineDurationMs: d.BaselineDurationMs,
			TimingChanged: &d.TimingChanged, Differs: d.Differs, Network: make([]serverapi.TraceNetworkDiff, 0, len(d.Network)),
			ConsoleAdded: d.ConsoleAdded, ConsoleRemoved: d.ConsoleRemoved}
		for _, n := range d.Network {
			nd := serverapi.TraceNetworkDiff{Change: serverapi.TraceNetworkDiffChange(n.Change), Method: n.Method, Url: n.URL}
			if n.Change != tracing.NetworkRemoved {
				nd.Status = &n.Status
			}
			if n.Change != tracing.NetworkAdded {
				nd.BaselineStatus = &n.BaselineStatus
			}
			sd.Network = append(sd.Network, nd)
		}
		if d.DOM != nil {
			sd.Dom = &serverapi.TraceDomDiff{Selector: d.DOM.Selector, Html: nonEmpty(d.DOM.HTML), BaselineHtml: nonEmpty(d.DOM.BaselineHTML)}
		}
		out.Steps = append(out.Steps, sd)
	}
	return out
}
