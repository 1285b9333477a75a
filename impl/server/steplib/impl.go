package steplib

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// maxProcessDepth bounds processes running processes (a cycle otherwise never ends).
const maxProcessDepth = 8

// implementations maps each definition ID to its implementation.
func implementations() map[string]stepFunc {
	m := map[string]stepFunc{}
	httpImpls(m)
	browserImpls(m)
	m["data.set"] = func(_ context.Context, s *Session, c *call) error {
		if strings.TrimSpace(c.str(0)) == "" {
			return errors.New("a variable needs a name")
		}
		s.vars.Set(c.str(0), c.str(1))
		return nil
	}
	m["data.assert"] = func(_ context.Context, s *Session, c *call) error {
		v, ok := s.vars.Get(c.str(0))
		if !ok {
			return fmt.Errorf("the variable %q is not defined", c.str(0))
		}
		if v != c.str(1) {
			return fmt.Errorf("the variable %q is %q, expected %q", c.str(0), v, c.str(1))
		}
		return nil
	}
	lease := func(ctx context.Context, s *Session, c *call, label string) error {
		if s.cfg.Lease == nil {
			return errors.New("this run has no users pool to lease an account from")
		}
		fields, err := s.cfg.Lease(ctx, label)
		if err != nil {
			return fmt.Errorf("lease an account: %w", err)
		}
		s.vars.SetAccount(fields)
		c.rep.Log("info", fmt.Sprintf("leased the account %q", fields["username"]))
		return nil
	}
	m["data.lease"] = func(ctx context.Context, s *Session, c *call) error { return lease(ctx, s, c, "") }
	m["data.lease_label"] = func(ctx context.Context, s *Session, c *call) error { return lease(ctx, s, c, c.str(0)) }
	m["process.wait"] = func(ctx context.Context, _ *Session, c *call) error {
		secs, err := c.float(0)
		if err != nil {
			return err
		}
		if secs < 0 {
			return fmt.Errorf("cannot wait a negative time")
		}
		t := time.NewTimer(time.Duration(secs * float64(time.Second)))
		defer t.Stop()
		select {
		case <-t.C:
			return nil
		case <-ctx.Done():
			return stepContextError(ctx)
		}
	}
	m["process.log"] = func(_ context.Context, s *Session, c *call) error {
		c.rep.Log("info", s.vars.Mask(c.str(0)))
		return nil
	}
	m["process.pending"] = func(context.Context, *Session, *call) error {
		return fmt.Errorf("the scenario is marked pending: %w", ErrPending)
	}
	m["process.run"] = func(ctx context.Context, s *Session, c *call) error {
		if s.cfg.Process == nil {
			return errors.New("this run has no processes")
		}
		if s.depth >= maxProcessDepth {
			return fmt.Errorf("processes nest deeper than %d (does %q run itself?)", maxProcessDepth, c.str(0))
		}
		steps, err := s.cfg.Process(c.str(0))
		if err != nil {
			return err
		}
		s.depth++
		defer func() { s.depth-- }()
		for i, st := range steps {
			c.rep.Log("info", fmt.Sprintf("process %q, step %d: %s%s", c.str(0), i+1, st.Keyword, st.Text))
			impl, inner, err := s.resolve(st, m)
			if err != nil {
				return fmt.Errorf("process %q, step %d %q: %w", c.str(0), i+1, st.Text, err)
			}
			inner.rep = c.rep
			// The nested step runs on this goroutine: the outer step already watches ctx.
			if err := impl(ctx, s, inner); err != nil {
				return fmt.Errorf("process %q, step %d %q: %w", c.str(0), i+1, st.Text, err)
			}
		}
		return nil
	}
	return m
}

// resolve matches a nested step and prepares its call.
func (s *Session) resolve(st Step, impls map[string]stepFunc) (stepFunc, *call, error) {
	matches := matchAll(st.Text)
	switch len(matches) {
	case 0:
		return nil, nil, errors.New("undefined step: no step definition matches it")
	case 1:
	default:
		return nil, nil, fmt.Errorf("ambiguous step: it matches %d definitions", len(matches))
	}
	impl := impls[matches[0].def.ID]
	if impl == nil {
		return nil, nil, fmt.Errorf("step %s is not implemented: %w", matches[0].def.ID, ErrPending)
	}
	c, err := s.prepare(st, matches[0])
	if err != nil {
		return nil, nil, err
	}
	return impl, c, nil
}
