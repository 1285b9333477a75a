package httpapi

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/gen/serverapi"
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
	params := db.ListAuditEntriesParams{Operation: p.Action, TargetKind: p.TargetKind, TargetID: p.TargetId, RowLimit: int32(limit + 1)}
	if p.Actor != nil {
		params.ActorID = uuid.NullUUID{UUID: uuid.UUID(*p.Actor), Valid: true}
	}
	if p.Outcome != nil {
		params.Outcome = ptr(string(*p.Outcome))
	}
	if p.Since != nil {
		params.Since = ptr(time.Time(*p.Since))
	}
	if cur != nil {
		params.BeforeAt = &cur.At
		params.BeforeID = uuid.NullUUID{UUID: cur.ID, Valid: true}
	}
	rows, err := s.Store.ListAuditEntries(ctx, params)
	if err != nil {
		return nil, err
	}
	out := serverapi.ListAudit200JSONResponse{Items: []serverapi.AuditEntry{}}
	for i, r := range rows {
		if i == limit {
			out.NextCursor = encodeCursor(auditCursor{At: rows[i-1].At, ID: rows[i-1].ID})
			break
		}
		out.Items = append(out.Items, toAuditEntry(r))
	}
	return out, nil
}

func toAuditEntry(r db.AuditEntry) serverapi.AuditEntry {
	e := serverapi.AuditEntry{Id: r.ID, CreatedAt: r.At, Operation: r.Operation, Method: r.Method, Path: r.Path, Status: int(r.Status),
		Outcome: serverapi.AuditEntryOutcome(r.Outcome), ClientAddress: nonEmpty(r.ClientAddr), RequestId: nonEmpty(r.RequestID)}
	e.Actor.Kind = serverapi.AuditEntryActorKind(r.ActorKind)
	e.Actor.Name = nonEmpty(r.ActorName)
	if r.ActorID.Valid {
		e.Actor.Id = ptr(r.ActorID.UUID)
	}
	if r.TargetKind != "" {
		e.Target = &struct {
			Id   *string `json:"id,omitempty"`
			Kind string  `json:"kind"`
			Name *string `json:"name,omitempty"`
		}{Id: nonEmpty(r.TargetID), Kind: r.TargetKind, Name: nonEmpty(r.TargetName)}
	}
	var detail map[string]any
	if json.Unmarshal(r.Detail, &detail) == nil && len(detail) > 0 {
		e.Detail = &detail
	}
	return e
}
