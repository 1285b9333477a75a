package runs

import (
	"context"
	"strings"

	"github.com/google/uuid"

	"github.com/sdods/sdods/impl/server/livefeed"
)

// listen keeps one connection LISTENing to the runs channel for as long as ctx lives: a batch of
// events wakes the run's feed, a cancel request the run's execution in this process.
func (s *Service) listen(ctx context.Context) {
	livefeed.Listen(ctx, s.st.Pool, "sdods_run_events", s.log, func(payload string) {
		if id, ok := strings.CutPrefix(payload, cancelPrefix); ok {
			if run, err := uuid.Parse(id); err == nil {
				s.cancelActive(run)
				s.hub.Publish(run)
			}
			return
		}
		id, _, _ := strings.Cut(payload, ":")
		if run, err := uuid.Parse(id); err == nil {
			s.hub.Publish(run)
		}
	})
}

func (s *Service) cancelActive(run uuid.UUID) {
	s.mu.Lock()
	cancel := s.active[run]
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}
