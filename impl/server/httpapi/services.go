package httpapi

import (
	"github.com/sdods/sdods/impl/server/artifacts"
	"github.com/sdods/sdods/impl/server/audit"
	"github.com/sdods/sdods/impl/server/features"
	"github.com/sdods/sdods/impl/server/health"
	"github.com/sdods/sdods/impl/server/hierarchy"
	"github.com/sdods/sdods/impl/server/ingest"
	"github.com/sdods/sdods/impl/server/integrations"
	"github.com/sdods/sdods/impl/server/pool"
	"github.com/sdods/sdods/impl/server/projects"
	"github.com/sdods/sdods/impl/server/reports"
	"github.com/sdods/sdods/impl/server/stats"
	"github.com/sdods/sdods/impl/server/tracing"
	"github.com/sdods/sdods/impl/server/visual"
)

// Services are the domain services behind the handlers: they own the use cases, their
// transactions, invariants and audit records; a handler decodes, calls one and encodes.
type Services struct {
	Hierarchy *hierarchy.Service
	Projects  *projects.Service
	// Features owns stored features; Integrations their Git sync and the webhook configuration.
	Features     *features.Service
	Integrations *integrations.Service
	Pool         *pool.Service
	Environments *projects.Environments
	Datasets     *projects.Datasets
	AuditLog     *audit.Log
	Visual       *visual.Service
	// Artifacts reads stored files and keeps computed diff images.
	Artifacts *artifacts.Service
	// Health checks the server's dependencies for GET /api/health.
	Health *health.Service
	// Stats answers trends, flakiness, heals and insights; Quarantines a project's quarantined scenarios.
	Stats       *stats.Service
	Quarantines *stats.Quarantines
	// Reports reads a run's report: its scenarios with their steps, and the HTML page.
	Reports *reports.Service
	// Ingest creates runs for ingest and writes ingested results.
	Ingest *ingest.Service
	// Tracing compares a scenario's trace with its last passing run's.
	Tracing *tracing.Service
}

// page cuts rows (at most limit+1, as a service returns them) to one page and the cursor of the
// next one, made of key of the page's last item.
func page[T any, K any](rows []T, limit int, key func(T) K) ([]T, *string) {
	if len(rows) <= limit {
		return rows, nil
	}
	return rows[:limit], encodeCursor(key(rows[limit-1]))
}
