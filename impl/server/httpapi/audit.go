package httpapi

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/audit"
)

type auditCursor struct {
	At time.Time `json:"a"`
	ID uuid.UUID `json:"i"`
}

// ListAudit lists audit entries, newest first, with filters.
func (s *Server) ListAudit(ctx context.Context, req serverapi.ListAuditRequestObject) (serverapi.ListAuditResponseObject, error) {
	p := req.Params
	var cur *auditCursor
	if err := decodeCursor(p.Cursor, &cur); err != nil {
		return nil, err
	}
	limit := pageLimit(p.Limit)
	f := audit.Filter{Operation: p.Action, TargetKind: p.TargetKind, TargetID: p.TargetId, Limit: limit}
	if p.Actor != nil {
		f.ActorID = ptr(uuid.UUID(*p.Actor))
	}
	if p.Outcome != nil {
		f.Outcome = ptr(string(*p.Outcome))
	}
	if p.Since != nil {
		f.Since = ptr(time.Time(*p.Since))
	}
	if p.Until != nil {
		f.Until = ptr(time.Time(*p.Until))
	}
	if cur != nil {
		f.BeforeAt, f.BeforeID = &cur.At, cur.ID
	}
	rows, err := s.AuditLog.List(ctx, f)
	if err != nil {
		return nil, err
	}
	items, next := page(rows, limit, func(e audit.Entry) auditCursor { return auditCursor{At: e.At, ID: e.ID} })
	out := serverapi.ListAudit200JSONResponse{Items: []serverapi.AuditEntry{}, NextCursor: next}
	for _, e := range items {
		out.Items = append(out.Items, toAuditEntry(e))
	}
	return out, nil
}

func toAuditEntry(r audit.Entry) serverapi.AuditEntry {
	e := serverapi.AuditEntry{Id: r.ID, CreatedAt: r.At, Operation: r.Operation, Method: r.Method, Path: r.Path, Status: r.Status,
		Outcome: serverapi.AuditEntryOutcome(r.Outcome), ClientAddress: nonEmpty(r.ClientAddr), RequestId: nonEmpty(r.RequestID)}
	e.Actor.Kind = serverapi.AuditEntryActorKind(r.Actor.Kind)
	e.Actor.Name = nonEmpty(r.Actor.Name)
	if r.Actor.ID != uuid.Nil {
		e.Actor.Id = ptr(r.Actor.ID)
	}
	if r.Target.Kind != "" {
		e.Target = &struct {
			Id   *string `json:"id,omitempty"`
			Kind string  `json:"kind"`
			Name *string `json:"name,omitempty"`
		}{Id: nonEmpty(r.Target.ID), Kind: r.Target.Kind, Name: nonEmpty(r.Target.Name)}
	}
	if r.Detail != nil {
		e.Detail = &r.Detail
	}
	return e
}
