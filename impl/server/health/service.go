// Package health is what GET /api/health reports of the server's own state.
package health

import (
	"context"
	"time"

	"github.com/sdods/sdods/impl/server/store"
)

// Service checks the server's dependencies.
type Service struct {
	st *store.Store
}

// NewService returns the health service.
func NewService(st *store.Store) *Service { return &Service{st: st} }

// Database returns the round trip of a trivial query, bounded to two seconds; an error means the
// database does not answer.
func (s *Service) Database(ctx context.Context) (time.Duration, error) { return s.st.Health(ctx) }
