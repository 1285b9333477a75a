package app

import (
	"github.com/sdods/sdods/impl/server/egress"
	"log/slog"

	"github.com/sdods/sdods/impl/server/agents"
	"github.com/sdods/sdods/impl/server/jobs"
	"github.com/sdods/sdods/impl/server/secrets"
	"github.com/sdods/sdods/impl/server/store"
)

// newAgents builds the agent service with the built-in kinds and registers its workers on reg.
func newAgents(st *store.Store, box *secrets.Box, log *slog.Logger, workerID string, reg *jobs.Registry, pol *egress.Policy) *agents.Service {
	kinds := agents.NewRegistry()
	kinds.Add(agents.Triage())
	kinds.Add(agents.Heal())
	kinds.Add(agents.Stabilise())
	s := agents.New(st, box, kinds, log, agents.Config{WorkerID: workerID, Egress: pol})
	kinds.Add(agents.LLM(s))
	s.Register(reg)
	return s
}
