package runs

import (
	"context"
	"strings"
	"time"

	"github.com/google/uuid"
)

// listen keeps one connection LISTENing to the runs channels for as long as ctx lives,
// reconnecting after a failure; a lost notification only delays a stream (which polls too).
func (s *Service) listen(ctx context.Context) {
	for ctx.Err() == nil {
		if err := s.listenOnce(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("runs: listener failed; reconnecting", "error", err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
}

func (s *Service) listenOnce(ctx context.Context) error {
	conn, err := s.st.Pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "LISTEN sdods_run_events"); err != nil {
		return err
	}
	defer func() {
		// The connection goes back to the pool: it must not keep listening.
		c, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, _ = conn.Exec(c, "UNLISTEN *")
	}()
	for {
		n, err := conn.Conn().WaitForNotification(ctx)
		if err != nil {
			return err
		}
		if id, ok := strings.CutPrefix(n.Payload, cancelPrefix); ok {
			if run, err := uuid.Parse(id); err == nil {
				s.cancelActive(run)
				s.hub.publish(run)
			}
			continue
		}
		id, _, _ := strings.Cut(n.Payload, ":")
		if run, err := uuid.Parse(id); err == nil {
			s.hub.publish(run)
		}
	}
}

func (s *Service) cancelActive(run uuid.UUID) {
	s.mu.Lock()
	cancel := s.active[run]
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}
