package features

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/audit"
	"github.com/sdods/sdods/impl/server/store"
)

// Process is a project's reusable sequence of steps, called from features by
// `When I run the process "<name>"`.
type Process struct {
	ID                         uuid.UUID
	Name, Description, Content string
	Parameters                 []string
	CreatedAt, UpdatedAt       time.Time
}

func fromProcess(p db.Process) Process {
	params := p.Parameters
	if params == nil {
		params = []string{}
	}
	return Process{ID: p.ID, Name: p.Name, Description: p.Description, Content: p.Content, Parameters: params, CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}
}

// ProcessNotFound is the error of a name with no process in the project.
func ProcessNotFound(name string) error {
	return apierr.New(apierr.NotFound, "process "+name+" not found", "list processes with GET /api/projects/{slug}/processes")
}

// StepUsage counts, over the project's features, the steps matching each step definition id
// (processes as process:<name>). Files that do not parse count nothing.
func (s *Service) StepUsage(ctx context.Context, p Project) (map[string]int, error) {
	return s.stepUsage(ctx, s.st.Queries, p)
}

func (s *Service) stepUsage(ctx context.Context, q *db.Queries, p Project) (map[string]int, error) {
	rows, err := q.AllFeatures(ctx, p.ID)
	if err != nil {
		return nil, err
	}
	cfg, err := s.LintConfigIn(ctx, q, p)
	if err != nil {
		return nil, err
	}
	matcher := cfg.Steps
	if matcher == nil {
		matcher = Catalog{Processes: map[string]bool{}}
	}
	usage := map[string]int{}
	for _, f := range rows {
		doc, _ := Parse(f.Content)
		if doc == nil {
			continue
		}
		for _, st := range doc.Steps {
			if name, ok := ProcessCalled(st.Text); ok {
				usage["process:"+name]++
				continue
			}
			for _, id := range matcher.Match(st.Text) {
				usage[id]++
			}
		}
	}
	return usage, nil
}

// AllProcesses returns every process of a project, by name.
func (s *Service) AllProcesses(ctx context.Context, projectID uuid.UUID) ([]Process, error) {
	rows, err := s.st.AllProcesses(ctx, projectID)
	if err != nil {
		return nil, err
	}
	out := make([]Process, len(rows))
	for i, p := range rows {
		out[i] = fromProcess(p)
	}
	return out, nil
}

// ListProcesses lists a project's processes by name: those after after, Limit+1 at most.
func (s *Service) ListProcesses(ctx context.Context, projectID uuid.UUID, after *string, limit int) ([]Process, error) {
	rows, err := s.st.ListProcesses(ctx, db.ListProcessesParams{ProjectID: projectID, AfterName: after, RowLimit: int32(limit + 1)})
	if err != nil {
		return nil, err
	}
	out := make([]Process, len(rows))
	for i, p := range rows {
		out[i] = fromProcess(p)
	}
	return out, nil
}

// GetProcess returns a process (ProcessNotFound when there is none).
func (s *Service) GetProcess(ctx context.Context, projectID uuid.UUID, name string) (Process, error) {
	p, err := s.st.GetProcess(ctx, db.GetProcessParams{ProjectID: projectID, Name: name})
	if store.IsNotFound(err) {
		return Process{}, ProcessNotFound(name)
	}
	if err != nil {
		return Process{}, err
	}
	return fromProcess(p), nil
}

// CreateProcess creates a process of content (parsed already into its parameters).
func (s *Service) CreateProcess(ctx context.Context, p Project, name, description, content string, params []string) (Process, error) {
	if params == nil {
		params = []string{}
	}
	var out Process
	err := s.st.WithTx(ctx, func(q *db.Queries) error {
		pr, err := q.CreateProcess(ctx, db.CreateProcessParams{ProjectID: p.ID, Name: name, Description: description, Content: content, Parameters: params})
		if store.IsUniqueViolation(err) {
			return apierr.Wrap(err, apierr.Conflict, "process "+name+" exists", "body member /name: choose another name, or PUT /api/projects/{slug}/processes/{processName}")
		}
		if err != nil {
			return err
		}
		out = fromProcess(pr)
		return audit.Record(ctx, q, audit.Target{Kind: "process", ID: pr.ID.String(), Name: p.Slug + "/" + pr.Name}, nil)
	})
	return out, err
}

// UpdateProcess replaces a process's steps and description.
func (s *Service) UpdateProcess(ctx context.Context, p Project, name, description, content string, params []string) (Process, error) {
	if params == nil {
		params = []string{}
	}
	var out Process
	err := s.st.WithTx(ctx, func(q *db.Queries) error {
		pr, err := q.UpdateProcess(ctx, db.UpdateProcessParams{ProjectID: p.ID, Name: name, Description: description, Content: content, Parameters: params})
		if store.IsNotFound(err) {
			return ProcessNotFound(name)
		}
		if err != nil {
			return err
		}
		out = fromProcess(pr)
		return audit.Record(ctx, q, audit.Target{Kind: "process", ID: pr.ID.String(), Name: p.Slug + "/" + pr.Name}, nil)
	})
	return out, err
}

// DeleteProcess deletes a process that no feature calls (conflict otherwise), deciding on the
// features as they are in its transaction.
func (s *Service) DeleteProcess(ctx context.Context, p Project, name string) error {
	return s.st.WithTx(ctx, func(q *db.Queries) error {
		usage, err := s.stepUsage(ctx, q, p)
		if err != nil {
			return err
		}
		if n := usage["process:"+name]; n > 0 {
			return apierr.New(apierr.Conflict, fmt.Sprintf("process %s is called by %d step(s)", name, n),
				"remove the steps `"+ProcessStepText(name)+"` from the features first")
		}
		n, err := q.DeleteProcess(ctx, db.DeleteProcessParams{ProjectID: p.ID, Name: name})
		if err != nil {
			return err
		}
		if n == 0 {
			return ProcessNotFound(name)
		}
		return audit.Record(ctx, q, audit.Target{Kind: "process", Name: p.Slug + "/" + name}, nil)
	})
}
