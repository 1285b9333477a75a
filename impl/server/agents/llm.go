package agents

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/audit"
	"github.com/sdods/sdods/impl/server/egress"
	"github.com/sdods/sdods/impl/server/pool"
	"github.com/sdods/sdods/impl/server/projects"
	"github.com/sdods/sdods/impl/server/redact"
	"github.com/sdods/sdods/impl/server/results"
	"github.com/sdods/sdods/impl/server/store"
)

// llmKeyAD binds the sealed key to its use.
const llmKeyAD = "agents:llm:key"

// LLMConfig is the llm kind's configuration as shown (never the key).
type LLMConfig struct {
	Enabled   bool
	Endpoint  string
	Model     string
	HasKey    bool
	Include   []string
	UpdatedAt *time.Time
}

// LLMConfigInput is what an instance admin sets; an empty Key keeps the stored one.
type LLMConfigInput struct {
	Enabled         bool
	Endpoint, Model string
	Key             string
	Include         []string
	By              uuid.NullUUID
}

// GetLLMConfig returns the configuration (disabled when none was ever set).
func (s *Service) GetLLMConfig(ctx context.Context) (LLMConfig, error) {
	c, err := s.st.GetLlmConfig(ctx)
	if store.IsNotFound(err) {
		return LLMConfig{Include: []string{"failingStep", "message"}}, nil
	}
	if err != nil {
		return LLMConfig{}, err
	}
	return LLMConfig{Enabled: c.Enabled, Endpoint: c.Endpoint, Model: c.Model, HasKey: c.KeySealed != nil, Include: c.Include, UpdatedAt: &c.UpdatedAt}, nil
}

// PutLLMConfig stores the configuration, the key sealed, and audits it (without the key).
func (s *Service) PutLLMConfig(ctx context.Context, in LLMConfigInput) (LLMConfig, error) {
	if !strings.HasPrefix(in.Endpoint, "http://") && !strings.HasPrefix(in.Endpoint, "https://") {
		return LLMConfig{}, apierr.New(apierr.ValidationFailed, "the endpoint is not an http(s) URL", "body member /endpoint: for example https://api.example.com/v1")
	}
	var sealed *string
	if in.Key != "" {
		k, err := s.box.SealString(in.Key, llmKeyAD)
		if err != nil {
			return LLMConfig{}, err
		}
		sealed = &k
	}
	if in.Include == nil {
		in.Include = []string{"failingStep", "message"}
	}
	err := s.st.WithTx(ctx, func(q *db.Queries) error {
		c, err := q.PutLlmConfig(ctx, db.PutLlmConfigParams{Enabled: in.Enabled, Endpoint: strings.TrimRight(in.Endpoint, "/"), Model: in.Model, KeySealed: sealed,
			Include: in.Include, UpdatedBy: in.By})
		if err != nil {
			return err
		}
		if c.Enabled && c.KeySealed == nil {
			return apierr.New(apierr.ValidationFailed, "the llm agent needs a key to be enabled", "body member /key")
		}
		return audit.Record(ctx, q, audit.Target{Kind: "agent_llm_config", Name: c.Model}, map[string]any{"enabled": c.Enabled, "endpoint": c.Endpoint,
			"model": c.Model, "include": c.Include, "keyChanged": sealed != nil})
	})
	if err != nil {
		return LLMConfig{}, err
	}
	return s.GetLLMConfig(ctx)
}

// LLM summarises a failed run through the configured OpenAI-compatible endpoint.
func LLM(s *Service) *Kind {
	return &Kind{
		Name: "llm",
		Description: "Summarises a failed run with an OpenAI-compatible model an instance admin configured (PUT /api/agents/llm); the prompt holds only what the admin allows, " +
			"redacted of the project's secrets; step rewrites the model proposes become feature_patch proposals verified by a verification run; " +
			"time and token budgets per job. Off until configured.",
		Scopes: []string{"agents:write", "runs:read"},
		InputSchema: map[string]any{"type": "object", "required": []string{"runId"}, "additionalProperties": false,
			"properties": map[string]any{"runId": map[string]any{"type": "string", "format": "uuid", "description": "the failed run"}}},
		Enabled: func(ctx context.Context) bool {
			c, err := s.GetLLMConfig(ctx)
			return err == nil && c.Enabled && c.HasKey
		},
		Run: func(ctx context.Context, j *Job) error { return runLLM(ctx, s, j) },
	}
}

func runLLM(ctx context.Context, s *Service, j *Job) error {
	cfg, err := s.st.GetLlmConfig(ctx)
	if err != nil || !cfg.Enabled || cfg.KeySealed == nil {
		return fmt.Errorf("the llm agent is not configured")
	}
	key, err := s.box.OpenString(*cfg.KeySealed, llmKeyAD)
	if err != nil {
		return fmt.Errorf("the llm key cannot be opened (was the server key changed?)")
	}
	runID, err := uuid.Parse(j.Input.RunID)
	if err != nil {
		return fmt.Errorf("input.runId is not a run id")
	}
	q := j.Queries()
	run, err := q.GetRun(ctx, runID)
	if store.IsNotFound(err) || (err == nil && run.Run.ProjectID != j.Row.ProjectID) {
		return fmt.Errorf("run %s not found in the job's project", runID)
	}
	if err != nil {
		return err
	}
	red, err := s.projectRedactor(ctx, j.Row.ProjectID, key)
	if err != nil {
		return err
	}
	failures, err := q.TriageFailures(ctx, runID)
	if err != nil {
		return err
	}
	var b strings.Builder
	// What the prompt shows of each step, with its line: the steps a model may rewrite.
	shown := shownSteps{}
	fmt.Fprintf(&b, "Run %s of project %s ended %s with %d failing scenario(s).\n", runID, run.ProjectSlug, run.Run.Status, len(failures))
	for _, f := range failures {
		fmt.Fprintf(&b, "\nScenario %q (%s):\n", f.Name, f.FeaturePath)
		if slices.Contains(cfg.Include, "failingStep") {
			step := f.StepKeyword + f.StepText
			if f.StepLine > 0 {
				fmt.Fprintf(&b, "failing step (line %d): %s\n", f.StepLine, step)
				shown.add(f.FeaturePath, int(f.StepLine), strings.TrimSpace(red.String(step)), f.Identity, f.Name)
			} else {
				fmt.Fprintf(&b, "failing step: %s\n", step)
			}
		}
		if slices.Contains(cfg.Include, "message") {
			fmt.Fprintf(&b, "error: %s\n", f.Message)
		}
		if slices.Contains(cfg.Include, "steps") {
			steps, err := q.GetRunScenario(ctx, db.GetRunScenarioParams{RunID: runID, ID: f.ID})
			if err == nil {
				var list []results.Step
				_ = json.Unmarshal(steps.Steps, &list)
				for _, st := range list {
					if st.Line != nil && *st.Line > 0 {
						fmt.Fprintf(&b, "  [%s] line %d: %s%s\n", st.Status, *st.Line, st.Keyword, st.Text)
						shown.add(f.FeaturePath, *st.Line, strings.TrimSpace(red.String(st.Keyword+st.Text)), f.Identity, f.Name)
					} else {
						fmt.Fprintf(&b, "  [%s] %s%s\n", st.Status, st.Keyword, st.Text)
					}
				}
			}
		}
	}
	prompt := red.String(b.String())
	sum := sha256.Sum256([]byte(prompt))
	promptHash := hex.EncodeToString(sum[:])
	remaining := 0
	if j.Row.MaxTokens != nil {
		remaining = int(*j.Row.MaxTokens) - j.tokens()
	}
	if remaining <= 0 {
		return fmt.Errorf("%w: the token budget is spent before the first call", ErrBudget)
	}
	if err := j.Log(ctx, "asking %s (prompt sha256 %s, %d bytes)", cfg.Model, promptHash, len(prompt)); err != nil {
		return err
	}
	body, _ := json.Marshal(map[string]any{"model": cfg.Model, "max_tokens": remaining, "messages": []map[string]string{
		{"role": "system", "content": "You triage failed end-to-end test runs. Summarise why the run failed and what to change, in a few sentences. " + rewritesInstruction},
		{"role": "user", "content": prompt}}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cfg.Endpoint+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := s.llmClient().Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(err, egress.ErrRefused) {
			var refused *egress.RefusedError
			if errors.As(err, &refused) {
				return fmt.Errorf("the llm endpoint is refused: %s", red.String(refused.Error()))
			}
			return fmt.Errorf("the llm endpoint is refused by the server's egress policy")
		}
		return fmt.Errorf("the llm endpoint did not answer: %s", red.String(err.Error()))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the llm endpoint answered %d", resp.StatusCode)
	}
	var out struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
		Usage struct {
			TotalTokens int `json:"total_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || len(out.Choices) == 0 {
		return fmt.Errorf("the llm endpoint's answer is not a chat completion")
	}
	if err := j.UseTokens(out.Usage.TotalTokens); err != nil {
		return err
	}
	summary, rewrites, rwErr := splitRewrites(out.Choices[0].Message.Content)
	summary = red.String(summary)
	if len(summary) > 4000 {
		summary = summary[:4000]
	}
	if rwErr != nil {
		if err := j.Log(ctx, "the model's rewrites are left out: %s", red.String(rwErr.Error())); err != nil {
			return err
		}
	}
	if _, err := j.Propose(ctx, Draft{Kind: "classification", Title: "llm summary of run " + runID.String(),
		Target: map[string]any{"runId": runID}, Evidence: map[string]any{"model": cfg.Model, "promptSha256": promptHash, "summary": summary,
			"tokens": out.Usage.TotalTokens, "include": cfg.Include, "rewritesProposed": len(rewrites)}, Confidence: 0.5}); err != nil {
		return err
	}
	patches, err := applyRewrites(ctx, j, q, red, shown, rewrites)
	if err != nil {
		return err
	}
	env := ""
	if run.Run.Environment != nil {
		env = *run.Run.Environment
	}
	verified := 0
	for _, d := range patches {
		diff := UnifiedDiff(d.path, d.before, d.after)
		id, err := j.propose(ctx, Draft{Kind: "feature_patch", Title: fmt.Sprintf("%s: %d step rewrite(s) proposed by %s", d.path, len(d.applied), cfg.Model),
			Target: map[string]any{"featurePath": d.path, "etag": d.etag, "scenario": d.identity, "scenarioName": d.scenarioName}, Diff: &diff,
			Evidence:   map[string]any{"source": "llm", "model": cfg.Model, "promptSha256": promptHash, "runId": runID, "rewrites": d.applied, "summary": summary},
			Confidence: 0.5}, &d.after)
		if err != nil {
			return err
		}
		ok, err := j.verify(ctx, id, d.path, d.after, env)
		if err != nil {
			return err
		}
		if ok {
			verified++
		}
	}
	if len(patches) > 0 {
		summary = strings.TrimSpace(summary + fmt.Sprintf("\n\n%d step rewrite patch(es) proposed, %d verified.", len(patches), verified))
	}
	j.Summarize(summary)
	return nil
}

// llmClient is the HTTP client of the llm kind: it dials through the egress policy, like steps and
// Git integrations, so an endpoint on a denied address (the server itself, its database, cloud
// metadata, an operator's deny) is refused on every dial, redirects included; no proxy, which
// would dial out of the policy's reach.
func (s *Service) llmClient() *http.Client {
	s.llmOnce.Do(func() {
		pol := s.cfg.Egress
		if pol == nil {
			pol, _ = egress.New(egress.Config{})
		}
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.Proxy = nil
		t.DialContext = pol.DialContext
		s.llmHTTP = &http.Client{Transport: t}
	})
	return s.llmHTTP
}

// projectRedactor hides the project's secret variables (every environment), its users-pool
// passwords (with their usernames, for the basic-auth forms) and the llm key.
func (s *Service) projectRedactor(ctx context.Context, project uuid.UUID, key string) (*redact.Redactor, error) {
	envs, err := s.st.ProjectEnvironments(ctx, project)
	if err != nil {
		return nil, err
	}
	vals := []string{key}
	for _, e := range envs {
		vars, err := projects.DecodeVariables(e.Variables)
		if err != nil {
			return nil, err
		}
		for _, v := range vars {
			if !v.Secret {
				continue
			}
			pt, err := s.box.OpenString(v.Value, projects.VariableAD(e.ProjectID, e.Name, v.Name))
			if err != nil {
				return nil, fmt.Errorf("environment %s variable %s cannot be opened", e.Name, v.Name)
			}
			vals = append(vals, pt)
		}
	}
	var users []string
	for after := (*string)(nil); ; {
		page, err := s.st.ListPoolAccounts(ctx, db.ListPoolAccountsParams{ProjectID: project, AfterUsername: after, RowLimit: 500})
		if err != nil {
			return nil, err
		}
		for _, a := range page {
			if len(a.PasswordEnc) == 0 {
				continue
			}
			pw, err := s.box.Open(a.PasswordEnc, pool.PasswordAD(project))
			if err != nil {
				return nil, fmt.Errorf("pool account %s cannot be opened", a.Username)
			}
			vals, users = append(vals, string(pw)), append(users, a.Username)
		}
		if len(page) < 500 {
			break
		}
		after = &page[len(page)-1].Username
	}
	return redact.New(vals, users), nil
}
