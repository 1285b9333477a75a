package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/agents"
	"github.com/sdods/sdods/impl/server/apierr"
)

// ListAgentKinds lists the agent kinds registered in code.
func (s *Server) ListAgentKinds(ctx context.Context, _ serverapi.ListAgentKindsRequestObject) (serverapi.ListAgentKindsResponseObject, error) {
	out := serverapi.ListAgentKinds200JSONResponse{Items: []serverapi.AgentKind{}}
	for _, k := range s.Agents.Kinds().All() {
		enabled := k.Enabled == nil || k.Enabled(ctx)
		out.Items = append(out.Items, serverapi.AgentKind{Name: serverapi.AgentJobKind(k.Name), Description: k.Description, Scopes: k.Scopes,
			InputSchema: k.InputSchema, Enabled: enabled})
	}
	return out, nil
}

// CreateAgentJob queues a job of a kind on a project.
func (s *Server) CreateAgentJob(ctx context.Context, req serverapi.CreateAgentJobRequestObject) (serverapi.CreateAgentJobResponseObject, error) {
	b := req.Body
	prj, _, err := s.projectBySlug(ctx, b.Project)
	if err != nil {
		return nil, err
	}
	p, uid, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	if k, ok := s.Agents.Kinds().Get(string(b.Kind)); ok {
		for _, sc := range k.Scopes {
			if !p.HasScope(sc) {
				return nil, apierr.New(apierr.Forbidden, "the token lacks scope "+sc+" that agent kind "+k.Name+" needs", "create a token with the scopes GET /api/agents/kinds lists")
			}
		}
	}
	var input json.RawMessage
	if b.Input != nil {
		if input, err = json.Marshal(*b.Input); err != nil {
			return nil, err
		}
	}
	cp := agents.CreateParams{ProjectID: prj.ID, Kind: string(b.Kind), Input: input, CreatedBy: uuid.NullUUID{UUID: uid, Valid: true}}
	if b.MaxSeconds != nil {
		cp.MaxSeconds = *b.MaxSeconds
	}
	if b.MaxTokens != nil {
		cp.MaxTokens = *b.MaxTokens
	}
	j, err := s.Agents.Create(ctx, cp)
	if err != nil {
		return nil, err
	}
	// The job as created (queued): a worker may already have started it. It has no proposal yet;
	// its creator is the caller.
	view := agents.JobView{AgentJob: j, ProjectSlug: prj.Slug, WorkspaceID: prj.WorkspaceID, ProposalIDs: []uuid.UUID{}}
	if u, err := s.Identity.User(ctx, uid); err == nil {
		view.Creator = &agents.Creator{ID: u.ID, Email: u.Email, DisplayName: u.DisplayName}
	}
	out := agentJobOut(view)
	return serverapi.CreateAgentJob202JSONResponse{Body: out, Headers: serverapi.CreateAgentJob202ResponseHeaders{Location: ptr("/api/agents/jobs/" + j.ID.String())}}, nil
}

// jobOf loads a job the caller may act on with the current operation.
func (s *Server) jobOf(ctx context.Context, id uuid.UUID) (agents.JobView, error) {
	j, err := s.Agents.GetJob(ctx, id)
	if err != nil {
		return j, err
	}
	if _, err := s.authorizeWorkspace(ctx, j.WorkspaceID); err != nil {
		if apierr.From(err).Code == apierr.NotFound {
			return j, apierr.New(apierr.NotFound, "agent job "+id.String()+" not found", "list jobs with GET /api/agents/jobs")
		}
		return j, err
	}
	return j, nil
}

// GetAgentJob returns one job.
func (s *Server) GetAgentJob(ctx context.Context, req serverapi.GetAgentJobRequestObject) (serverapi.GetAgentJobResponseObject, error) {
	j, err := s.jobOf(ctx, req.JobId)
	if err != nil {
		return nil, err
	}
	return serverapi.GetAgentJob200JSONResponse(agentJobOut(j)), nil
}

type jobCursor struct {
	At time.Time `json:"a"`
	ID uuid.UUID `json:"i"`
}

// scope is the caller's visible workspaces.
func (s *Server) agentScope(ctx context.Context) (agents.Scope, error) {
	p, uid, err := principal(ctx)
	if err != nil {
		return agents.Scope{}, err
	}
	return s.Agents.ScopeOf(ctx, p.InstanceAdmin, uid)
}

// ListAgentJobs lists the jobs of the caller's workspaces, newest first.
func (s *Server) ListAgentJobs(ctx context.Context, req serverapi.ListAgentJobsRequestObject) (serverapi.ListAgentJobsResponseObject, error) {
	sc, err := s.agentScope(ctx)
	if err != nil {
		return nil, err
	}
	q := req.Params
	var cur *jobCursor
	if err := decodeCursor(q.Cursor, &cur); err != nil {
		return nil, err
	}
	f := agents.JobFilter{Project: q.Project, Limit: pageLimit(q.Limit)}
	if q.Status != nil {
		f.Status = ptr(string(*q.Status))
	}
	if q.Kind != nil {
		f.Kind = ptr(string(*q.Kind))
	}
	if cur != nil {
		f.BeforeAt, f.BeforeID = &cur.At, cur.ID
	}
	page, err := s.Agents.ListJobs(ctx, sc, f)
	if err != nil {
		return nil, err
	}
	out := agentJobsPage{Items: page.Items}
	if page.More {
		out.NextCursor = encodeCursor(jobCursor{At: page.LastAt, ID: page.LastID})
	}
	return out, nil
}

// StreamAgentJobEvents streams a job's events: history first, then live.
func (s *Server) StreamAgentJobEvents(ctx context.Context, req serverapi.StreamAgentJobEventsRequestObject) (serverapi.StreamAgentJobEventsResponseObject, error) {
	j, err := s.jobOf(ctx, req.JobId)
	if err != nil {
		return nil, err
	}
	var after int64
	if req.Params.LastEventID != nil {
		n, err := strconv.ParseInt(strings.TrimSpace(string(*req.Params.LastEventID)), 10, 64)
		if err != nil || n < 0 {
			return nil, apierr.New(apierr.ValidationFailed, "Last-Event-ID is not an event id", "header parameter \"Last-Event-ID\": send the id of the last event received")
		}
		after = n
	}
	return sseStream{ctx: ctx, stream: func(ctx context.Context, w io.Writer) error { return s.Agents.Stream(ctx, j.ID, after, w) }}, nil
}

// CancelAgentJob stops a job: at once when queued, within a second when running.
func (s *Server) CancelAgentJob(ctx context.Context, req serverapi.CancelAgentJobRequestObject) (serverapi.CancelAgentJobResponseObject, error) {
	j, err := s.jobOf(ctx, req.JobId)
	if err != nil {
		return nil, err
	}
	if agents.Terminal(j.Status) {
		return nil, apierr.New(apierr.Conflict, "the job already ended ("+j.Status+")", "only queued and running jobs can be cancelled")
	}
	if _, err := s.Agents.Cancel(ctx, j.ID); err != nil {
		return nil, err
	}
	if j, err = s.Agents.GetJob(ctx, j.ID); err != nil {
		return nil, err
	}
	return serverapi.CancelAgentJob202JSONResponse(agentJobOut(j)), nil
}

// agentJobOut is the API form of a job read with its creator and proposals.
func agentJobOut(j agents.JobView) serverapi.AgentJob {
	out := serverapi.AgentJob{Id: j.ID, Project: j.ProjectSlug, Kind: serverapi.AgentJobKind(j.Kind), Status: serverapi.JobStatus(j.Status), Input: map[string]any{},
		Progress: int(j.Progress), MaxSeconds: int(j.MaxSeconds), TokensUsed: int(j.TokensUsed), Summary: j.Summary, Error: j.Error,
		CreatedAt: j.CreatedAt, UpdatedAt: j.UpdatedAt, StartedAt: j.StartedAt, FinishedAt: j.FinishedAt, ProposalIds: []uuid.UUID{}}
	_ = json.Unmarshal(j.Input, &out.Input)
	if c := j.Creator; c != nil {
		out.CreatedBy = &serverapi.UserSummary{Id: c.ID, Email: openapi_types.Email(c.Email), DisplayName: c.DisplayName}
	}
	if j.MaxTokens != nil {
		out.MaxTokens = ptr(int(*j.MaxTokens))
	}
	out.ProposalIds = append(out.ProposalIds, j.ProposalIDs...)
	return out
}

type proposalCursor struct {
	At time.Time `json:"a"`
	ID uuid.UUID `json:"i"`
}

// ListProposals is the review inbox: proposals of the caller's workspaces, newest first.
func (s *Server) ListProposals(ctx context.Context, req serverapi.ListProposalsRequestObject) (serverapi.ListProposalsResponseObject, error) {
	sc, err := s.agentScope(ctx)
	if err != nil {
		return nil, err
	}
	q := req.Params
	var cur *proposalCursor
	if err := decodeCursor(q.Cursor, &cur); err != nil {
		return nil, err
	}
	limit := pageLimit(q.Limit)
	f := agents.ProposalFilter{Project: q.Project, Limit: limit + 1}
	if q.Status != nil {
		f.Status = ptr(string(*q.Status))
	}
	if q.Kind != nil {
		f.Kind = ptr(string(*q.Kind))
	}
	if q.MinConfidence != nil {
		f.MinConfidence = *q.MinConfidence
	}
	if q.JobId != nil {
		f.JobID = uuid.NullUUID{UUID: *q.JobId, Valid: true}
	}
	if cur != nil {
		f.BeforeAt, f.BeforeID = &cur.At, cur.ID
	}
	rows, err := s.Agents.ListProposals(ctx, sc, f)
	if err != nil {
		return nil, err
	}
	out := proposalsPage{Items: rows}
	if len(rows) > limit {
		out.Items = rows[:limit]
		out.NextCursor = encodeCursor(proposalCursor{At: rows[limit-1].CreatedAt, ID: rows[limit-1].ID})
	}
	return out, nil
}

func (s *Server) proposalOf(ctx context.Context, id uuid.UUID) (agents.ProposalView, error) {
	p, err := s.Agents.GetProposal(ctx, id)
	if err != nil {
		return p, err
	}
	if _, err := s.authorizeWorkspace(ctx, p.WorkspaceID); err != nil {
		if apierr.From(err).Code == apierr.NotFound {
			return p, apierr.New(apierr.NotFound, "proposal "+id.String()+" not found", "list proposals with GET /api/proposals")
		}
		return p, err
	}
	return p, nil
}

// GetProposal returns one proposal.
func (s *Server) GetProposal(ctx context.Context, req serverapi.GetProposalRequestObject) (serverapi.GetProposalResponseObject, error) {
	p, err := s.proposalOf(ctx, req.ProposalId)
	if err != nil {
		return nil, err
	}
	return serverapi.GetProposal200JSONResponse(s.proposalOut(ctx, p)), nil
}

func (s *Server) decision(ctx context.Context, body *serverapi.ProposalDecision) (agents.Decision, error) {
	p, uid, err := principal(ctx)
	if err != nil {
		return agents.Decision{}, err
	}
	d := agents.Decision{By: uuid.NullUUID{UUID: uid, Valid: true}, Admin: p.InstanceAdmin}
	if body != nil {
		if body.Reason != nil {
			d.Reason = *body.Reason
		}
		if body.Force != nil {
			d.Force = *body.Force
		}
	}
	return d, nil
}

// AcceptProposal applies a proposal.
func (s *Server) AcceptProposal(ctx context.Context, req serverapi.AcceptProposalRequestObject) (serverapi.AcceptProposalResponseObject, error) {
	p, err := s.proposalOf(ctx, req.ProposalId)
	if err != nil {
		return nil, err
	}
	d, err := s.decision(ctx, req.Body)
	if err != nil {
		return nil, err
	}
	out, err := s.Agents.Accept(ctx, p.ID, d)
	if err != nil {
		return nil, err
	}
	return serverapi.AcceptProposal200JSONResponse(s.proposalOut(ctx, out)), nil
}

// RejectProposal records a rejection and its reason.
func (s *Server) RejectProposal(ctx context.Context, req serverapi.RejectProposalRequestObject) (serverapi.RejectProposalResponseObject, error) {
	p, err := s.proposalOf(ctx, req.ProposalId)
	if err != nil {
		return nil, err
	}
	d, err := s.decision(ctx, req.Body)
	if err != nil {
		return nil, err
	}
	out, err := s.Agents.Reject(ctx, p.ID, d)
	if err != nil {
		return nil, err
	}
	return serverapi.RejectProposal200JSONResponse(s.proposalOut(ctx, out)), nil
}

func (s *Server) proposalOut(ctx context.Context, p agents.ProposalView) serverapi.Proposal {
	out := serverapi.Proposal{Id: p.ID, Project: p.ProjectSlug, Kind: serverapi.ProposalKind(p.Kind), Status: serverapi.ProposalStatus(p.Status), Title: p.Title,
		Diff: p.Diff, Evidence: map[string]any{}, Confidence: p.Confidence, DecidedAt: p.DecidedAt, Reason: p.Reason, CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}
	if p.JobID.Valid {
		out.JobId = &p.JobID.UUID
	}
	_ = json.Unmarshal(p.Evidence, &out.Evidence)
	_ = json.Unmarshal(p.Target, &out.Target)
	switch {
	case p.DeciderRead:
		if c := p.Decider; c != nil {
			out.DecidedBy = &serverapi.UserSummary{Id: c.ID, Email: openapi_types.Email(c.Email), DisplayName: c.DisplayName}
		}
	case p.DecidedBy.Valid:
		if u, err := s.Identity.User(ctx, p.DecidedBy.UUID); err == nil {
			out.DecidedBy = ptr(toUserSummary(u))
		}
	}
	return out
}

// GetAgentLlmConfig shows the llm kind's configuration (never the key).
func (s *Server) GetAgentLlmConfig(ctx context.Context, _ serverapi.GetAgentLlmConfigRequestObject) (serverapi.GetAgentLlmConfigResponseObject, error) {
	c, err := s.Agents.GetLLMConfig(ctx)
	if err != nil {
		return nil, err
	}
	return serverapi.GetAgentLlmConfig200JSONResponse(llmConfigOut(c)), nil
}

// PutAgentLlmConfig configures the llm kind; the key is sealed at rest.
func (s *Server) PutAgentLlmConfig(ctx context.Context, req serverapi.PutAgentLlmConfigRequestObject) (serverapi.PutAgentLlmConfigResponseObject, error) {
	_, uid, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	b := req.Body
	in := agents.LLMConfigInput{Enabled: b.Enabled, Endpoint: b.Endpoint, Model: b.Model, By: uuid.NullUUID{UUID: uid, Valid: true}}
	if b.Key != nil {
		in.Key = *b.Key
	}
	if b.Include != nil {
		in.Include = []string{}
		for _, i := range *b.Include {
			in.Include = append(in.Include, string(i))
		}
	}
	c, err := s.Agents.PutLLMConfig(ctx, in)
	if err != nil {
		return nil, err
	}
	return serverapi.PutAgentLlmConfig200JSONResponse(llmConfigOut(c)), nil
}

func llmConfigOut(c agents.LLMConfig) serverapi.AgentLlmConfig {
	out := serverapi.AgentLlmConfig{Enabled: c.Enabled, HasKey: c.HasKey, Include: []serverapi.AgentLlmInclude{}, UpdatedAt: c.UpdatedAt,
		Endpoint: nonEmpty(c.Endpoint), Model: nonEmpty(c.Model)}
	for _, i := range c.Include {
		out.Include = append(out.Include, serverapi.AgentLlmInclude(i))
	}
	return out
}
