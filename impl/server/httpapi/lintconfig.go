package httpapi

import (
	"context"
	"regexp"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/features"
	"github.com/sdods/sdods/impl/server/projects"
)

// lintConfig returns the lint configuration of a project: its settings, the step library and its
// processes.
func (s *Server) lintConfig(ctx context.Context, q *db.Queries, p project) (features.Config, error) {
	st := projects.DecodeSettings(p.Settings)
	cfg := features.Config{Disabled: map[string]bool{}}
	for _, r := range st.DisabledLintRules {
		cfg.Disabled[r] = true
	}
	if st.TagPattern != "" {
		cfg.TagPattern, _ = regexp.Compile(st.TagPattern)
	}
	if s.Steps == nil {
		return cfg, nil
	}
	procs, err := q.AllProcesses(ctx, p.ID)
	if err != nil {
		return cfg, err
	}
	names := map[string]bool{}
	for _, pr := range procs {
		names[pr.Name] = true
	}
	cfg.Steps = features.Catalog{Builtin: s.Steps, Processes: names}
	return cfg, nil
}
