package steplib

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/chromedp"
)

// Alternative is one recorded way to find an element again when its selector stops matching.
type Alternative struct {
	// Strategy is test-id, id, role, text, label, attribute or tag.
	Strategy string `json:"strategy"`
	// Name is the attribute name (test-id, attribute) or the role (role).
	Name string `json:"name,omitempty"`
	// Value is the expected value; for role, the accessible name.
	Value string `json:"value"`
}

// LocatorStore keeps the alternatives recorded for a selector of a project by earlier passing runs.
type LocatorStore interface {
	// Load returns the alternatives recorded for the selector, or none.
	Load(ctx context.Context, project, selector string) ([]Alternative, error)
	// Save replaces the alternatives recorded for the selector.
	Save(ctx context.Context, project, selector string, alts []Alternative) error
}

// MemoryLocatorStore is a LocatorStore in memory, safe for concurrent use.
type MemoryLocatorStore struct {
	mu sync.Mutex
	m  map[[2]string][]Alternative
}

// NewMemoryLocatorStore returns an empty store.
func NewMemoryLocatorStore() *MemoryLocatorStore {
	return &MemoryLocatorStore{m: map[[2]string][]Alternative{}}
}

// Load returns a copy of the recorded alternatives.
func (m *MemoryLocatorStore) Load(_ context.Context, project, selector string) ([]Alternative, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.m[[2]string{project, selector}]), nil
}

// Save replaces the recorded alternatives.
func (m *MemoryLocatorStore) Save(_ context.Context, project, selector string, alts []Alternative) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.m[[2]string{project, selector}] = slices.Clone(alts)
	return nil
}

// healThreshold is the least weighted share of the recorded alternatives a candidate must satisfy.
const healThreshold = 0.5

// HealAmbiguityMargin is how close the runner-up's score may come to the chosen element's before
// a heal is ambiguous (docs/steps.md): the runner still heals, but the heal agent never verifies
// a patch made of an ambiguous heal on its own.
const HealAmbiguityMargin = 0.1

// RejectedHeal is a replacement of a selector that a reviewer rejected (a rejected heal
// proposal): the runner never heals the selector to an element it matches.
type RejectedHeal struct {
	// Selector is the rejected replacement; Reason and Proposal say who decided it and why.
	Selector string
	Reason   string
	Proposal string
}

// locatorJS is evaluated in the page as (function(mode, arg){…})(mode, arg). Modes: "probe" reads
// the first element a selector matches and its alternatives; "heal" scores every element against
// recorded alternatives and returns a unique selector for the best one.
const locatorJS = `(function (mode, arg) {
  const TESTIDS = ['data-testid', 'data-test-id', 'data-test', 'data-qa', 'data-cy'];
  const ATTRS = ['name', 'placeholder', 'aria-label', 'title', 'alt', 'type', 'href'];
  const norm = (s) => (s || '').replace(/\s+/g, ' ').trim().slice(0, 120);
  function visible(el) {
    const r = el.getBoundingClientRect();
    const st = getComputedStyle(el);
    return r.width > 0 && r.height > 0 && st.visibility !== 'hidden' && st.display !== 'none' && parseFloat(st.opacity || '1') > 0;
  }
  function role(el) {
    const r = el.getAttribute('role');
    if (r) return r;
    const t = el.tagName.toLowerCase(), ty = (el.getAttribute('type') || '').toLowerCase();
    if (t === 'button') return 'button';
    if (t === 'a' && el.hasAttribute('href')) return 'link';
    if (t === 'input') {
      if (['submit', 'button', 'reset', 'image'].includes(ty)) return 'button';
      if (ty === 'checkbox' || ty === 'radio') return ty;
      if (ty === 'hidden') return '';
      return 'textbox';
    }
    if (t === 'textarea') return 'textbox';
    if (t === 'select') return el.multiple ? 'listbox' : 'combobox';
    if (/^h[1-6]$/.test(t)) return 'heading';
    if (t === 'img') return 'img';
    return '';
  }
  function label(el) {
    if (el.labels && el.labels.length) return norm(el.labels[0].innerText);
    const id = el.getAttribute('aria-labelledby');
    const l = id && document.getElementById(id);
    return l ? norm(l.innerText) : '';
  }
  function text(el) {
    if (['INPUT', 'SELECT', 'TEXTAREA'].includes(el.tagName)) return '';
    return norm(el.innerText);
  }
  function accName(el) {
    return norm(el.getAttribute('aria-label') || label(el) ||
      (el.tagName === 'INPUT' && ['submit', 'button'].includes(el.type) ? el.value : '') ||
      text(el) || el.getAttribute('title') || el.getAttribute('alt') || el.getAttribute('placeholder'));
  }
  function alternatives(el) {
    const a = [];
    for (const n of TESTIDS) { const v = el.getAttribute(n); if (v) { a.push({strategy: 'test-id', name: n, value: v}); break; } }
    if (el.id) a.push({strategy: 'id', value: el.id});
    const r = role(el);
    if (r) a.push({strategy: 'role', name: r, value: accName(el)});
    const tx = text(el); if (tx) a.push({strategy: 'text', value: tx});
    const lb = label(el); if (lb) a.push({strategy: 'label', value: lb});
    for (const n of ATTRS) { const v = el.getAttribute(n); if (v) a.push({strategy: 'attribute', name: n, value: v}); }
    a.push({strategy: 'tag', value: el.tagName.toLowerCase()});
    return a;
  }
  function satisfies(el, a) {
    switch (a.strategy) {
      case 'test-id': return el.getAttribute(a.name) === a.value;
      case 'id': return el.id === a.value;
      case 'role': return role(el) === a.name && accName(el) === a.value;
      case 'text': return text(el) === a.value;
      case 'label': return label(el) === a.value;
      case 'attribute': return el.getAttribute(a.name) === a.value;
      case 'tag': return el.tagName.toLowerCase() === a.value;
    }
    return false;
  }
  function weight(a) {
    switch (a.strategy) {
      case 'test-id': return 5;
      case 'id': case 'role': case 'text': case 'label': return 3;
      case 'attribute': return a.name === 'name' ? 3 : (a.name === 'type' ? 1 : 2);
    }
    return 1;
  }
  function unique(sel) { try { return document.querySelectorAll(sel).length === 1; } catch (e) { return false; } }
  function selectorFor(el) {
    const tag = el.tagName.toLowerCase();
    for (const n of TESTIDS) { const v = el.getAttribute(n); if (v) { const s = '[' + n + '="' + CSS.escape(v) + '"]'; if (unique(s)) return s; } }
    if (el.id) { const s = '#' + CSS.escape(el.id); if (unique(s)) return s; }
    for (const n of ['name', 'aria-label', 'placeholder']) { const v = el.getAttribute(n); if (v) { const s = tag + '[' + n + '="' + CSS.escape(v) + '"]'; if (unique(s)) return s; } }
    const parts = [];
    for (let cur = el; cur && cur.nodeType === 1 && cur !== document.documentElement; cur = cur.parentElement) {
      if (cur !== el && cur.id && unique('#' + CSS.escape(cur.id))) { parts.unshift('#' + CSS.escape(cur.id)); break; }
      let i = 1;
      for (let s = cur.previousElementSibling; s; s = s.previousElementSibling) if (s.tagName === cur.tagName) i++;
      parts.unshift(cur.tagName.toLowerCase() + ':nth-of-type(' + i + ')');
    }
    return parts.join(' > ');
  }
  if (mode === 'probe') {
    let els;
    try { els = document.querySelectorAll(arg); } catch (e) { return {invalid: String(e && e.message || e)}; }
    if (els.length === 0) return {count: 0, ready: document.readyState === 'complete'};
    return {count: els.length, visible: visible(els[0]), alternatives: alternatives(els[0]), ready: document.readyState === 'complete'};
  }
  const alts = arg.alts, rejected = arg.rejected || [];
  // Elements a reviewer rejected as this selector's replacement are never candidates.
  const refused = new Map();
  for (const sel of rejected) {
    try { for (const el of document.querySelectorAll(sel)) if (!refused.has(el)) refused.set(el, sel); } catch (e) {}
  }
  let total = 0;
  for (const a of alts) total += weight(a);
  const cands = [], skipped = [];
  for (const el of document.querySelectorAll('body *')) {
    let s = 0, best = null, bw = 0;
    for (const a of alts) {
      if (satisfies(el, a)) { s += weight(a); if (a.strategy !== 'tag' && weight(a) > bw) { bw = weight(a); best = a; } }
    }
    if (!best) continue;
    if (refused.has(el)) { skipped.push({selector: refused.get(el), score: s / total}); continue; }
    cands.push({el: el, score: s / total, best: best, vis: visible(el) ? 1 : 0});
  }
  cands.sort((x, y) => (y.score - x.score) || (y.vis - x.vis));
  skipped.sort((x, y) => y.score - x.score);
  if (!cands.length) return {found: false, best: 0, candidates: 0, skipped: skipped};
  const top = cands[0];
  // The runner-up is the best other element, not one inside the best or around it (a wrapper
  // that shows the same text is the same thing on the page).
  const ru = cands.slice(1).find((c) => !top.el.contains(c.el) && !c.el.contains(top.el));
  const runnerUp = ru ? {selector: selectorFor(ru.el), score: ru.score} : null;
  if (top.score < THRESHOLD) return {found: false, best: top.score, candidates: cands.length, skipped: skipped};
  if (ru && ru.score === top.score && ru.vis === top.vis) {
    return {found: false, ambiguous: true, best: top.score, candidates: cands.length, skipped: skipped, runnerUp: runnerUp};
  }
  return {found: true, selector: selectorFor(top.el), strategy: top.best.strategy, score: top.score,
          visible: top.vis === 1, alternatives: alternatives(top.el), runnerUp: runnerUp, skipped: skipped};
})`

type probeResult struct {
	Invalid      string        `json:"invalid"`
	Count        int           `json:"count"`
	Visible      bool          `json:"visible"`
	Ready        bool          `json:"ready"`
	Alternatives []Alternative `json:"alternatives"`
}

// healCandidate is an element heal scored: its unique selector (or, for a skipped one, the
// rejected selector it matches) and its score.
type healCandidate struct {
	Selector string  `json:"selector"`
	Score    float64 `json:"score"`
}

type healResult struct {
	Found        bool            `json:"found"`
	RunnerUp     *healCandidate  `json:"runnerUp"`
	Skipped      []healCandidate `json:"skipped"`
	Ambiguous    bool            `json:"ambiguous"`
	Selector     string          `json:"selector"`
	Strategy     string          `json:"strategy"`
	Score        float64         `json:"score"`
	Best         float64         `json:"best"`
	Candidates   int             `json:"candidates"`
	Visible      bool            `json:"visible"`
	Alternatives []Alternative   `json:"alternatives"`
}

func locatorCall(mode string, arg any) (string, error) {
	b, err := json.Marshal(arg)
	if err != nil {
		return "", err
	}
	m, _ := json.Marshal(mode)
	return strings.Replace(locatorJS, "THRESHOLD", strconv.FormatFloat(healThreshold, 'f', -1, 64), 1) + "(" + string(m) + ", " + string(b) + ")", nil
}

// locate waits for the selector to match an element (a visible one when visible is set) and
// returns the selector to use: the given one, or a healed one when it matched nothing for
// HealDelay and recorded alternatives point at an element.
func (s *Session) locate(ctx context.Context, c *call, selector string, visible bool) (string, error) {
	p, err := s.browserPage(ctx)
	if err != nil {
		return "", err
	}
	start := time.Now()
	deadline := start.Add(s.cfg.WaitTimeout)
	s.mu.Lock()
	healedSel, wasHealed := s.healed[selector]
	s.mu.Unlock()
	var (
		last     probeResult
		alts     []Alternative
		loaded   bool
		lastHeal *healResult
	)
	for {
		if wasHealed {
			// A selector healed earlier in this scenario is tried through its replacement first.
			if r, err := probe(ctx, p, healedSel); err == nil && r.Count > 0 && (r.Visible || !visible) {
				return healedSel, nil
			}
		}
		r, err := probe(ctx, p, selector)
		if err != nil && !(navigating(err) && time.Now().Before(deadline)) {
			return "", err
		}
		if err != nil { // the page is being replaced: look again in a moment
			select {
			case <-ctx.Done():
				return "", stepContextError(ctx)
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		if r.Invalid != "" {
			return "", fmt.Errorf("invalid CSS selector %q: %s", selector, r.Invalid)
		}
		last = r
		if r.Count > 0 && (r.Visible || !visible) {
			s.remember(selector, r.Alternatives)
			return selector, nil
		}
		if r.Count == 0 && r.Ready && time.Since(start) >= s.cfg.HealDelay && s.cfg.Locators != nil {
			if !loaded {
				loaded = true
				alts, err = s.cfg.Locators.Load(ctx, s.cfg.Project, selector)
				if err != nil {
					c.rep.Log("warn", fmt.Sprintf("self-healing: loading the alternatives of %q: %v", selector, err))
				}
			}
			if len(alts) > 0 {
				h, err := healOnce(ctx, p, alts, s.cfg.RejectedHeals[selector])
				if err != nil {
					return "", err
				}
				lastHeal = &h
				if h.Found && (h.Visible || !visible) {
					score := round2(h.Score)
					heal := Heal{Selector: selector, Healed: h.Selector, Strategy: h.Strategy, Score: score}
					msg := fmt.Sprintf("self-healing: %q matched nothing; using %q (strategy %s, score %.2f", selector, h.Selector, h.Strategy, score)
					if h.RunnerUp != nil {
						heal.RunnerUp = &HealCandidate{Selector: h.RunnerUp.Selector, Score: round2(h.RunnerUp.Score)}
						heal.Ambiguous = h.Score-h.RunnerUp.Score <= HealAmbiguityMargin
						msg += fmt.Sprintf("; runner-up %q, score %.2f", h.RunnerUp.Selector, heal.RunnerUp.Score)
						if heal.Ambiguous {
							msg += fmt.Sprintf(", within %.2f: ambiguous", HealAmbiguityMargin)
						}
					}
					msg += ")"
					for _, sk := range h.Skipped {
						msg += fmt.Sprintf("; skipped %q (score %.2f): %s", sk.Selector, round2(sk.Score), rejection(selector, sk.Selector, s.cfg.RejectedHeals[selector]))
					}
					c.rep.Heal(heal)
					c.rep.Log("warn", msg)
					s.mu.Lock()
					if s.healed == nil {
						s.healed = map[string]string{}
					}
					s.healed[selector] = h.Selector
					s.mu.Unlock()
					s.remember(selector, h.Alternatives)
					return h.Selector, nil
				}
			}
		}
		if time.Now().After(deadline) {
			return "", locateError(selector, visible, s.cfg.WaitTimeout, last, loaded, alts, lastHeal, s.cfg.RejectedHeals[selector])
		}
		select {
		case <-ctx.Done():
			return "", stepContextError(ctx)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func locateError(selector string, visible bool, wait time.Duration, last probeResult, loaded bool, alts []Alternative, h *healResult, rejected []RejectedHeal) error {
	if last.Count > 0 && visible {
		return fmt.Errorf("element %q exists but is not visible after %s", selector, wait)
	}
	msg := fmt.Sprintf("no element matches %q after %s", selector, wait)
	switch {
	case !loaded:
		// healing was not tried (disabled, or the page never finished loading)
	case len(alts) == 0:
		msg += "; self-healing has no alternatives recorded for it yet (they are recorded by passing runs)"
	case h != nil && h.Ambiguous:
		msg += fmt.Sprintf("; self-healing found %d equally good candidates (score %.2f) and chose none", h.Candidates, h.Best)
	case h != nil && h.Candidates == 0 && len(h.Skipped) > 0:
		msg += "; self-healing found no candidate but the rejected ones"
	case h != nil:
		msg += fmt.Sprintf("; self-healing found no candidate scoring at least %.2f (best %.2f)", healThreshold, h.Best)
	}
	if h != nil {
		for _, sk := range h.Skipped {
			msg += fmt.Sprintf("; skipped %q (score %.2f): %s", sk.Selector, round2(sk.Score), rejection(selector, sk.Selector, rejected))
		}
	}
	return fmt.Errorf("%s", msg)
}

// rejection says which review rejected replacing selector with replacement.
func rejection(selector, replacement string, rejected []RejectedHeal) string {
	for _, r := range rejected {
		if r.Selector == replacement {
			s := fmt.Sprintf("replacing %q with it was rejected in review", selector)
			if r.Proposal != "" {
				s += " (proposal " + r.Proposal + ")"
			}
			if r.Reason != "" {
				s += ": " + r.Reason
			}
			return s
		}
	}
	return "rejected in review"
}

func round2(f float64) float64 { return math.Round(f*100) / 100 }

func probe(ctx context.Context, p *page, selector string) (probeResult, error) {
	js, err := locatorCall("probe", selector)
	if err != nil {
		return probeResult{}, err
	}
	return runPage(ctx, p, chromedp.Evaluate[probeResult](js))
}

func healOnce(ctx context.Context, p *page, alts []Alternative, rejected []RejectedHeal) (healResult, error) {
	refused := make([]string, 0, len(rejected))
	for _, r := range rejected {
		refused = append(refused, r.Selector)
	}
	js, err := locatorCall("heal", map[string]any{"alts": alts, "rejected": refused})
	if err != nil {
		return healResult{}, err
	}
	return runPage(ctx, p, chromedp.Evaluate[healResult](js))
}

func (s *Session) remember(selector string, alts []Alternative) {
	if len(alts) == 0 {
		return
	}
	s.mu.Lock()
	if s.fingerprints == nil {
		s.fingerprints = map[string][]Alternative{}
	}
	s.fingerprints[selector] = alts
	s.mu.Unlock()
}
