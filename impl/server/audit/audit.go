// Package audit appends to the audit log. The HTTP pipeline puts a Request in the context; a
// service records its change with Record inside the transaction that makes it, so an entry exists
// exactly when the change does. Refused and failed requests are recorded by the pipeline. Log
// reads the entries back.
package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
)

// Actor is who made a request.
type Actor struct {
	Kind string // user, token, anonymous or system
	ID   uuid.UUID
	Name string
}

// Request is the audit context of one HTTP request.
type Request struct {
	Operation     string
	Method        string
	Path          string
	RequestID     string
	ClientAddr    string
	SuccessStatus int
	Actor         Actor
	// Via names the front end the request came through when it is not the REST API itself
	// ("mcp": a tool call); the entry's detail carries it.
	Via       string
	recorded  atomic.Bool
	unchanged atomic.Bool
}

// Recorded reports whether a service recorded the request's change.
func (r *Request) Recorded() bool { return r.recorded.Load() }

// Unchanged reports whether the handler declared that the request changed nothing (NoChange).
func (r *Request) Unchanged() bool { return r.unchanged.Load() }

// NoChange declares that the request in ctx succeeded without changing anything (a dry run, a
// recording not saved), so that it has no audit entry by design rather than by mistake.
func NoChange(ctx context.Context) {
	if r := RequestFrom(ctx); r != nil {
		r.unchanged.Store(true)
	}
}

type ctxKey struct{}

// WithRequest returns ctx carrying r.
func WithRequest(ctx context.Context, r *Request) context.Context {
	return context.WithValue(ctx, ctxKey{}, r)
}

// RequestFrom returns the request in ctx, or nil (for example in a command-line tool).
func RequestFrom(ctx context.Context) *Request {
	r, _ := ctx.Value(ctxKey{}).(*Request)
	return r
}

// Target is what a change was made to.
type Target struct {
	Kind string
	ID   string
	Name string
}

// Record appends the success entry of the request in ctx through q (a transaction's queries).
// Outside a request (a command-line tool) the entry's actor is the system.
func Record(ctx context.Context, q *db.Queries, target Target, detail map[string]any) error {
	r := RequestFrom(ctx)
	if r == nil {
		r = &Request{Operation: "cli", Actor: Actor{Kind: "system", Name: "sdods"}}
	}
	if err := insert(ctx, q, r, "success", r.SuccessStatus, target, detail); err != nil {
		return err
	}
	r.recorded.Store(true)
	return nil
}

// RecordOutcome appends the entry of a refused ("denied") or failed request.
func RecordOutcome(ctx context.Context, q *db.Queries, r *Request, outcome string, status int) error {
	return insert(ctx, q, r, outcome, status, Target{}, nil)
}

func insert(ctx context.Context, q *db.Queries, r *Request, outcome string, status int, t Target, detail map[string]any) error {
	if detail == nil {
		detail = map[string]any{}
	}
	if r.Via != "" {
		withVia := make(map[string]any, len(detail)+1)
		for k, v := range detail {
			withVia[k] = v
		}
		withVia["via"] = r.Via
		detail = withVia
	}
	raw, err := json.Marshal(detail)
	if err != nil {
		return fmt.Errorf("audit detail: %w", err)
	}
	actor := uuid.NullUUID{UUID: r.Actor.ID, Valid: r.Actor.ID != uuid.Nil}
	kind := r.Actor.Kind
	if kind == "" {
		kind = "anonymous"
	}
	err = q.InsertAuditEntry(ctx, db.InsertAuditEntryParams{
		ActorKind: kind, ActorID: actor, ActorName: r.Actor.Name,
		Operation: r.Operation, Method: r.Method, Path: r.Path, Status: int32(status), Outcome: outcome,
		TargetKind: t.Kind, TargetID: t.ID, TargetName: t.Name,
		ClientAddr: r.ClientAddr, RequestID: r.RequestID, Detail: raw,
	})
	if err != nil {
		return fmt.Errorf("append audit entry: %w", err)
	}
	return nil
}
