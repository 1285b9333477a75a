package runs

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
)

// hub fans the notifications of this process's listener out to the event streams it serves.
type hub struct {
	mu   sync.Mutex
	subs map[uuid.UUID]map[chan struct{}]struct{}
}

func newHub() *hub { return &hub{subs: map[uuid.UUID]map[chan struct{}]struct{}{}} }

// subscribe returns a channel that receives a signal whenever the run has new events.
func (h *hub) subscribe(run uuid.UUID) (chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	if h.subs[run] == nil {
		h.subs[run] = map[chan struct{}]struct{}{}
	}
	h.subs[run][ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		delete(h.subs[run], ch)
		if len(h.subs[run]) == 0 {
			delete(h.subs, run)
		}
		h.mu.Unlock()
	}
}

func (h *hub) publish(run uuid.UUID) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs[run] {
		select {
		case ch <- struct{}{}:
		default: // a signal is already pending; the stream reads everything new anyway
		}
	}
}

// listen keeps one connection LISTENing to the run events channel for as long as ctx lives,
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
