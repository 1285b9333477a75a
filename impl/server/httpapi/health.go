package httpapi

import (
	"context"

	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/egress"
	"github.com/sdods/sdods/impl/server/store"
)

// GetHealth reports the server's version and the database round trip; a database that does not
// answer makes the status degraded and the answer 503 with the same body, so that a probe keyed on
// the status sees it and an operator still reads the detail. An instance admin also sees the
// egress policy.
func (s *Server) GetHealth(ctx context.Context, _ serverapi.GetHealthRequestObject) (serverapi.GetHealthResponseObject, error) {
	out := serverapi.GetHealth200JSONResponse{Status: "ok", Version: s.Version}
	if p := PrincipalFrom(ctx); p != nil && p.InstanceAdmin && s.Egress != nil {
		out.Egress = egressPolicy(s.Egress)
	}
	latency, err := s.Health.Database(ctx)
	if err != nil {
		s.Log.WarnContext(ctx, "health: database unreachable", "error", err)
		out.Status = "degraded"
		out.Database.Status = "down"
		retry := store.RetryAfterSeconds
		return serverapi.GetHealth503JSONResponse{Body: serverapi.Health(out), Headers: serverapi.GetHealth503ResponseHeaders{RetryAfter: &retry}}, nil
	}
	ms := int(latency.Milliseconds())
	out.Database.Status = "up"
	out.Database.LatencyMs = &ms
	return out, nil
}

func egressPolicy(p *egress.Policy) *serverapi.EgressPolicy {
	out := &serverapi.EgressPolicy{Rules: []serverapi.EgressRule{}}
	for _, r := range p.Rules() {
		e := serverapi.EgressRule{Rule: r.Text, Effect: serverapi.EgressRuleEffectAllow, BuiltIn: r.BuiltIn}
		if r.Deny {
			e.Effect = serverapi.EgressRuleEffectDeny
		}
		if r.Reason != "" {
			e.Reason = &r.Reason
		}
		out.Rules = append(out.Rules, e)
	}
	return out
}
