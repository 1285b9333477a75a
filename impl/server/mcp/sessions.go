package mcp

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/sdods/sdods/impl/server/httpapi"
	"github.com/sdods/sdods/impl/server/store"
)

// sessions keeps the sessions of protocol revisions before 2026-07-28 in PostgreSQL, so that any
// sdods process serves a session another one opened. A session belongs to the user whose token
// opened it: another user's token presenting its id is told the session does not exist.
type sessions struct {
	store *store.Store
	log   *slog.Logger
}

var errUnknownSession = errors.New("unknown MCP session")

// sessionIdle is how long a session may go unused before it is forgotten (and then unknown: 404).
const sessionIdle = 7 * 24 * time.Hour

// ResolveSessionIdManager implements mcpserver.SessionIdManagerResolver: the manager of one request,
// bound to its context and to the user the pipeline authenticated.
func (s *sessions) ResolveSessionIdManager(r *http.Request) mcpserver.SessionIdManager {
	m := &sessionManager{sessions: s, ctx: context.Background()}
	if r != nil {
		m.ctx = r.Context()
		if p := httpapi.PrincipalFrom(r.Context()); p != nil {
			m.user, _ = uuid.Parse(p.UserID)
		}
	}
	return m
}

type sessionManager struct {
	*sessions
	ctx  context.Context
	user uuid.UUID
}

func hashID(id string) []byte {
	h := sha256.Sum256([]byte(id))
	return h[:]
}

// Generate records a new session of the request's user and returns its id ("" when it cannot be
// recorded: the client then works without a session).
func (m *sessionManager) Generate() string {
	if m.user == uuid.Nil {
		return ""
	}
	var b [24]byte
	_, _ = rand.Read(b[:])
	id := "mcps_" + base64.RawURLEncoding.EncodeToString(b[:])
	ctx, cancel := context.WithTimeout(context.WithoutCancel(m.ctx), 5*time.Second)
	defer cancel()
	if _, err := m.store.Pool.Exec(ctx, `INSERT INTO mcp_sessions (id_hash, user_id) VALUES ($1, $2)`, hashID(id), m.user); err != nil {
		m.log.ErrorContext(ctx, "mcp: session not recorded", "error", err)
		return ""
	}
	// Forget the sessions idle for too long (clients often end none).
	if _, err := m.store.Pool.Exec(ctx, `DELETE FROM mcp_sessions WHERE last_seen_at < now() - make_interval(secs => $1)`, sessionIdle.Seconds()); err != nil {
		m.log.WarnContext(ctx, "mcp: idle sessions not purged", "error", err)
	}
	return id
}

// state returns whether the session exists for this user and whether it has ended.
func (m *sessionManager) state(id string) (exists, ended bool, err error) {
	if id == "" || m.user == uuid.Nil || len(id) > 200 {
		return false, false, nil
	}
	var owner uuid.UUID
	var endedAt *time.Time
	var stale bool
	// A read on every request; the last use is written at most once a minute (a write waits for
	// the WAL to reach the disk).
	err = m.store.Pool.QueryRow(m.ctx, `SELECT user_id, ended_at, last_seen_at < now() - interval '1 minute' FROM mcp_sessions
		WHERE id_hash = $1 AND last_seen_at >= now() - make_interval(secs => $2)`, hashID(id), sessionIdle.Seconds()).Scan(&owner, &endedAt, &stale)
	if err == nil && stale && owner == m.user {
		if _, err := m.store.Pool.Exec(m.ctx, `UPDATE mcp_sessions SET last_seen_at = now() WHERE id_hash = $1`, hashID(id)); err != nil {
			m.log.WarnContext(m.ctx, "mcp: session use not recorded", "error", err)
		}
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return false, false, nil
	}
	if err != nil {
		return false, false, err
	}
	if owner != m.user {
		return false, false, nil
	}
	return true, endedAt != nil, nil
}

// Validate implements mcpserver.SessionIdManager.
func (m *sessionManager) Validate(id string) (isTerminated bool, err error) {
	exists, ended, err := m.state(id)
	if err != nil {
		return false, err
	}
	if !exists {
		return false, errUnknownSession
	}
	return ended, nil
}

// Terminate implements mcpserver.SessionIdManager: the session ends for every process.
func (m *sessionManager) Terminate(id string) (isNotAllowed bool, err error) {
	if id == "" {
		return false, nil
	}
	_, err = m.store.Pool.Exec(m.ctx, `UPDATE mcp_sessions SET ended_at = now() WHERE id_hash = $1 AND user_id = $2 AND ended_at IS NULL`, hashID(id), m.user)
	return false, err
}
