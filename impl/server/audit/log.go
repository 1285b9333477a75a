package audit

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
)

// Entry is one entry of the audit log.
type Entry struct {
	ID                      uuid.UUID
	At                      time.Time
	Actor                   Actor
	Operation, Method, Path string
	Status                  int
	Outcome                 string
	Target                  Target
	ClientAddr, RequestID   string
	Detail                  map[string]any
}

// Filter selects entries of List, newest first: those before (BeforeAt, BeforeID) when set,
// Limit+1 at most; nil members do not filter.
type Filter struct {
	ActorID    *uuid.UUID
	Operation  *string
	TargetKind *string
	TargetID   *string
	Outcome    *string
	Since      *time.Time
	Until      *time.Time // entries before it
	BeforeAt   *time.Time
	BeforeID   uuid.UUID
	Limit      int
}

// Log reads the audit log.
type Log struct {
	q *db.Queries
}

// NewLog returns the reader of the audit log through q.
func NewLog(q *db.Queries) *Log { return &Log{q: q} }

// List returns the entries f selects, newest first.
func (l *Log) List(ctx context.Context, f Filter) ([]Entry, error) {
	params := db.ListAuditEntriesParams{Operation: f.Operation, TargetKind: f.TargetKind, TargetID: f.TargetID, Outcome: f.Outcome, Since: f.Since, Until: f.Until,
		RowLimit: int32(f.Limit + 1)}
	if f.ActorID != nil {
		params.ActorID = uuid.NullUUID{UUID: *f.ActorID, Valid: true}
	}
	if f.BeforeAt != nil {
		params.BeforeAt = f.BeforeAt
		params.BeforeID = uuid.NullUUID{UUID: f.BeforeID, Valid: true}
	}
	rows, err := l.q.ListAuditEntries(ctx, params)
	if err != nil {
		return nil, err
	}
	out := make([]Entry, len(rows))
	for i, r := range rows {
		e := Entry{ID: r.ID, At: r.At, Actor: Actor{Kind: r.ActorKind, Name: r.ActorName}, Operation: r.Operation, Method: r.Method, Path: r.Path,
			Status: int(r.Status), Outcome: r.Outcome, Target: Target{Kind: r.TargetKind, ID: r.TargetID, Name: r.TargetName},
			ClientAddr: r.ClientAddr, RequestID: r.RequestID}
		if r.ActorID.Valid {
			e.Actor.ID = r.ActorID.UUID
		}
		var detail map[string]any
		if json.Unmarshal(r.Detail, &detail) == nil && len(detail) > 0 {
			e.Detail = detail
		}
		out[i] = e
	}
	return out, nil
}
