package httpapi

import (
	"context"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/features"
)

// lintConfig returns the lint configuration of a project read through q, for the processes
// handlers, which lint inside their own transactions until their tag moves to a service.
func (s *Server) lintConfig(ctx context.Context, q *db.Queries, p project) (features.Config, error) {
	return s.Features.LintConfigIn(ctx, q, featureProject(p))
}
