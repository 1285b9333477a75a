package harness

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sdods/sdods/impl/textclip"
)

// Options configure a run.
type Options struct {
	Engine   []string       // the engine command and its arguments
	Level    string         // evaluator or compiler (default compiler: every case)
	Filter   *regexp.Regexp // run only cases whose id matches
	Timeout  time.Duration  // per case (default 10 s)
	Progress io.Writer      // progress lines (stderr); nil for none
	Dir      string         // working directory of the engine
}

// Outcome of one case.
const (
	Passed  = "passed"
	Failed  = "failed"
	Skipped = "skipped"
)

// CaseResult is the outcome of one case; Diff explains a failure, Reason a skip.
type CaseResult struct {
	ID       string `json:"id"`
	Category string `json:"category"`
	Outcome  string `json:"outcome"`
	Diff     string `json:"diff,omitempty"`
	Reason   string `json:"reason,omitempty"`
}

// Tally counts outcomes.
type Tally struct {
	Total   int `json:"total"`
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
}

func (t *Tally) add(outcome string) {
	t.Total++
	switch outcome {
	case Passed:
		t.Passed++
	case Failed:
		t.Failed++
	case Skipped:
		t.Skipped++
	}
}

// Report is the outcome of a run, written by --json.
type Report struct {
	Engine     json.RawMessage  `json:"engine"` // the engine's answer to version
	Command    string           `json:"command"`
	Level      string           `json:"level"`
	Filter     string           `json:"filter,omitempty"`
	DurationMS int64            `json:"durationMs"`
	Totals     Tally            `json:"totals"`
	Categories map[string]Tally `json:"categories"`
	Failures   []CaseResult     `json:"failures"`
	Skips      []CaseResult     `json:"skipped"`
}

// OK reports whether no case failed.
func (r *Report) OK() bool { return r.Totals.Failed == 0 }

// proc is a running engine.
type proc struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan []byte
	done  chan struct{}
}

func start(o Options) (*proc, error) {
	if len(o.Engine) == 0 {
		return nil, errors.New("no engine command")
	}
	cmd := exec.Command(o.Engine[0], o.Engine[1:]...)
	cmd.Dir = o.Dir
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start engine %q: %w", strings.Join(o.Engine, " "), err)
	}
	p := &proc{cmd: cmd, in: in, lines: make(chan []byte, 16), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		br := bufio.NewReaderSize(out, 1<<16)
		for {
			line, err := br.ReadBytes('\n')
			if len(bytes.TrimSpace(line)) > 0 {
				p.lines <- line
			}
			if err != nil {
				return
			}
		}
	}()
	return p, nil
}

func (p *proc) stop() {
	_ = p.in.Close()
	select {
	case <-p.done:
	case <-time.After(2 * time.Second):
		_ = p.cmd.Process.Kill()
	}
	_ = p.cmd.Wait()
}

func (p *proc) kill() {
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
}

var errTimeout = errors.New("no response within the timeout")

// roundTrip writes one line and reads one line.
func (p *proc) roundTrip(line []byte, timeout time.Duration) ([]byte, error) {
	if _, err := p.in.Write(append(line, '\n')); err != nil {
		return nil, fmt.Errorf("write to the engine: %w", err)
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case l := <-p.lines:
		return l, nil
	case <-p.done:
		select {
		case l := <-p.lines:
			return l, nil
		default:
		}
		return nil, errors.New("the engine exited")
	case <-t.C:
		return nil, errTimeout
	}
}

// response is one protocol response.
type response struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code        string       `json:"code"`
		Message     string       `json:"message"`
		Pointer     *string      `json:"pointer"`
		Diagnostics []Diagnostic `json:"diagnostics"`
	} `json:"error"`
	Skipped *struct {
		Reason string `json:"reason"`
	} `json:"skipped"`
}

// Run certifies the engine with the suite and returns the report. An error means the run itself
// could not be made (the engine does not start, the suite is malformed).
func Run(ctx context.Context, suite fs.FS, o Options) (*Report, error) {
	if o.Level == "" {
		o.Level = LevelCompiler
	}
	if o.Level != LevelEvaluator && o.Level != LevelCompiler {
		return nil, fmt.Errorf("level %q: want evaluator or compiler", o.Level)
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	files, err := Load(suite)
	if err != nil {
		return nil, err
	}
	began := time.Now()
	rep := &Report{Command: strings.Join(o.Engine, " "), Level: o.Level, Categories: map[string]Tally{},
		Failures: []CaseResult{}, Skips: []CaseResult{}}
	if o.Filter != nil {
		rep.Filter = o.Filter.String()
	}
	r := &runner{suite: suite, o: o}
	defer r.close()
	if err := r.ensure(); err != nil {
		return nil, err
	}
	if line, err := r.p.roundTrip([]byte(`{"id":"version","cmd":"version"}`), o.Timeout); err == nil {
		var resp response
		if json.Unmarshal(line, &resp) == nil && resp.Result != nil {
			rep.Engine = resp.Result
		}
	}
	if rep.Engine == nil {
		return nil, errors.New("the engine does not answer the version command")
	}
	for _, f := range files {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		r.file = f
		r.setupDone = false
		var tally Tally
		for _, c := range f.Cases {
			if o.Filter != nil && !o.Filter.MatchString(c.ID) {
				continue
			}
			cr := r.run(c)
			cr.ID, cr.Category = c.ID, f.Category
			tally.add(cr.Outcome)
			rep.Totals.add(cr.Outcome)
			t := rep.Categories[f.Category]
			t.add(cr.Outcome)
			rep.Categories[f.Category] = t
			switch cr.Outcome {
			case Failed:
				rep.Failures = append(rep.Failures, cr)
			case Skipped:
				rep.Skips = append(rep.Skips, cr)
			}
		}
		if o.Progress != nil && tally.Total > 0 {
			fmt.Fprintf(o.Progress, "%-40s %4d passed %4d failed %4d skipped\n", f.Path, tally.Passed, tally.Failed, tally.Skipped)
		}
	}
	rep.DurationMS = time.Since(began).Milliseconds()
	return rep, nil
}

type runner struct {
	suite     fs.FS
	o         Options
	p         *proc
	file      *File
	setupDone bool
	seq       int
}

func (r *runner) close() {
	if r.p != nil {
		r.p.stop()
	}
}

func (r *runner) ensure() error {
	if r.p != nil {
		return nil
	}
	p, err := start(r.o)
	if err != nil {
		return err
	}
	r.p = p
	r.setupDone = false
	return nil
}

// restart replaces a hung or dead engine.
func (r *runner) restart() {
	if r.p != nil {
		r.p.kill()
		r.p = nil
	}
}

// send sends one request (an object without id, or a raw line) and returns the response.
func (r *runner) send(input json.RawMessage) (sentID json.RawMessage, resp *response, line []byte, err error) {
	return r.sendLine(input, nil)
}

// sendLine is send, or, when rawBytes is not nil, sends those bytes as the line.
func (r *runner) sendLine(input json.RawMessage, rawBytes []byte) (sentID json.RawMessage, resp *response, line []byte, err error) {
	if err := r.ensure(); err != nil {
		return nil, nil, nil, err
	}
	var out []byte
	t := bytes.TrimSpace(input)
	if rawBytes != nil {
		out = rawBytes // bytes that are not UTF-8, which no JSON string can hold
	} else if len(t) > 0 && t[0] == '"' {
		var s string
		if err := json.Unmarshal(t, &s); err != nil {
			return nil, nil, nil, err
		}
		out = []byte(s)
	} else {
		req, err := Resolve(r.suite, input)
		if err != nil {
			return nil, nil, nil, err
		}
		ms, err := members(req)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("input: %w", err)
		}
		for _, m := range ms {
			if m.key == "id" {
				sentID = m.raw
			}
		}
		if sentID == nil {
			r.seq++
			sentID = json.RawMessage(strconv.Quote("c" + strconv.Itoa(r.seq)))
			out = append(append(append([]byte(`{"id":`), sentID...), ','), bytes.TrimPrefix(bytes.TrimSpace(req), []byte("{"))...)
			if bytes.Equal(bytes.TrimSpace(req), []byte("{}")) {
				out = append(append([]byte(`{"id":`), sentID...), '}')
			}
		} else {
			out = req
		}
	}
	if bytes.ContainsAny(out, "\n\r") {
		var c bytes.Buffer
		if json.Compact(&c, out) == nil {
			out = c.Bytes()
		}
	}
	line, err = r.p.roundTrip(out, r.o.Timeout)
	if err != nil {
		r.restart()
		return sentID, nil, nil, err
	}
	resp = &response{}
	if err := json.Unmarshal(line, resp); err != nil {
		return sentID, nil, line, fmt.Errorf("the engine wrote a line that is not a protocol response: %s", textclip.Clip(string(line), 300))
	}
	return sentID, resp, line, nil
}

func (r *runner) setup(reqs []json.RawMessage) error {
	for _, s := range reqs {
		_, resp, line, err := r.send(s)
		if err != nil {
			return err
		}
		if resp.Skipped != nil {
			return &skip{resp.Skipped.Reason}
		}
		if resp.Error != nil {
			return fmt.Errorf("setup request failed: %s", textclip.Clip(string(line), 300))
		}
	}
	return nil
}

type skip struct{ reason string }

func (s *skip) Error() string { return "skipped: " + s.reason }

func (r *runner) run(c Case) CaseResult {
	if r.o.Level == LevelEvaluator && c.Level == LevelCompiler {
		return CaseResult{Outcome: Skipped, Reason: "compiler-level case; the run is at the evaluator level"}
	}
	if !r.setupDone || r.p == nil {
		if err := r.setup(r.file.Setup); err != nil {
			return failOrSkip(err)
		}
		r.setupDone = true
	}
	if err := r.setup(c.Setup); err != nil {
		return failOrSkip(err)
	}
	sentID, resp, _, err := r.sendLine(c.Input, c.InputBase64)
	if err != nil {
		if errors.Is(err, errTimeout) {
			return CaseResult{Outcome: Failed, Diff: fmt.Sprintf("timeout: no response within %s", r.o.Timeout)}
		}
		return CaseResult{Outcome: Failed, Diff: err.Error()}
	}
	if resp.Skipped != nil {
		return CaseResult{Outcome: Skipped, Reason: resp.Skipped.Reason}
	}
	want := c.Expected
	wantID := want.ID
	if wantID == nil {
		wantID = sentID
	}
	if wantID != nil && !sameJSON(wantID, resp.ID) {
		return CaseResult{Outcome: Failed, Diff: fmt.Sprintf("response id: expected %s, got %s", compactText(wantID), compactText(resp.ID))}
	}
	var diffs []string
	switch {
	case want.Result != nil && resp.Error != nil:
		diffs = append(diffs, fmt.Sprintf("expected result %s\n     got error %s: %s", textclip.Clip(compactText(want.Result), 300), resp.Error.Code, textclip.Clip(resp.Error.Message, 300)))
	case want.Result != nil:
		if resp.Result == nil {
			diffs = append(diffs, "expected a result, the response has none")
			break
		}
		if want.Subset {
			diffs = DiffSubset(want.Result, resp.Result)
		} else {
			diffs = Diff(want.Result, resp.Result)
		}
	case resp.Error == nil:
		diffs = append(diffs, fmt.Sprintf("expected error %s\n     got result %s", want.Error.Code, textclip.Clip(compactText(resp.Result), 300)))
	default:
		e := want.Error
		if resp.Error.Code != e.Code {
			diffs = append(diffs, fmt.Sprintf("error code: expected %s, got %s (%s)", e.Code, resp.Error.Code, textclip.Clip(resp.Error.Message, 300)))
		}
		if e.Pointer != nil {
			got := "(none)"
			if resp.Error.Pointer != nil {
				got = strconv.Quote(*resp.Error.Pointer)
			}
			if resp.Error.Pointer == nil || *resp.Error.Pointer != *e.Pointer {
				diffs = append(diffs, fmt.Sprintf("error pointer: expected %q, got %s", *e.Pointer, got))
			}
		}
		if e.Diagnostics != nil {
			diffs = append(diffs, diagDiff(e.Diagnostics, resp.Error.Diagnostics)...)
		}
	}
	if len(diffs) > 0 {
		return CaseResult{Outcome: Failed, Diff: strings.Join(diffs, "\n")}
	}
	return CaseResult{Outcome: Passed}
}

func failOrSkip(err error) CaseResult {
	var s *skip
	if errors.As(err, &s) {
		return CaseResult{Outcome: Skipped, Reason: s.reason}
	}
	return CaseResult{Outcome: Failed, Diff: "setup: " + err.Error()}
}

func diagDiff(want, got []Diagnostic) []string {
	key := func(d Diagnostic) string { return d.Code + " at " + strconv.Quote(d.Pointer) }
	w, g := map[string]bool{}, map[string]bool{}
	for _, d := range want {
		w[key(d)] = true
	}
	for _, d := range got {
		g[key(d)] = true
	}
	var out []string
	for k := range w {
		if !g[k] {
			out = append(out, "missing diagnostic "+k)
		}
	}
	for k := range g {
		if !w[k] {
			out = append(out, "unexpected diagnostic "+k)
		}
	}
	sort.Strings(out)
	return out
}

func compactText(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}
