package features

import (
	"context"
	"errors"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/audit"
	"github.com/sdods/sdods/impl/server/store"
)

// Service owns a project's stored features: saving (parsed, linted, under If-Match), deleting,
// recording and the reconcile with a Git snapshot, each change audited in its transaction.
type Service struct {
	st    *store.Store
	steps Library
}

// NewService returns the feature service on st; steps is the built-in step library (nil
// disables the unknown-step and ambiguous-step rules).
func NewService(st *store.Store, steps Library) *Service { return &Service{st: st, steps: steps} }

// Project is what the service needs of a project.
type Project struct {
	ID   uuid.UUID
	Slug string
	// DisabledRules and TagPattern are the project's lint settings.
	DisabledRules []string
	TagPattern    string
}

// Stored is a stored feature; Content is empty in lists.
type Stored struct {
	ID                   uuid.UUID
	Path, Module         string
	Name                 *string
	Tags                 []string
	Content, Etag        string
	ScenarioCount        int
	SizeBytes            int
	CreatedAt, UpdatedAt time.Time
}

func fromRow(f db.Feature) Stored {
	return Stored{ID: f.ID, Path: f.Path, Module: f.Module, Name: f.Name, Tags: f.Tags, Content: f.Content, Etag: f.Etag,
		ScenarioCount: int(f.ScenarioCount), SizeBytes: int(f.SizeBytes), CreatedAt: f.CreatedAt, UpdatedAt: f.UpdatedAt}
}

// NotFound is the error of a path with no feature.
func NotFound(path string) error {
	return apierr.New(apierr.NotFound, "feature "+path+" not found", "list features with GET /api/projects/{slug}/features")
}

// ETagMatches reports whether an If-Match / If-None-Match list names etag (weak comparison; *
// matches).
func ETagMatches(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == etag {
			return true
		}
	}
	return false
}

// LintConfig returns the lint configuration of p: its settings, the step library and its
// processes.
func (s *Service) LintConfig(ctx context.Context, p Project) (Config, error) {
	return s.LintConfigIn(ctx, s.st.Queries, p)
}

// LintConfigIn is LintConfig read through q (a transaction's queries).
func (s *Service) LintConfigIn(ctx context.Context, q *db.Queries, p Project) (Config, error) {
	cfg := Config{Disabled: map[string]bool{}}
	for _, r := range p.DisabledRules {
		cfg.Disabled[r] = true
	}
	if p.TagPattern != "" {
		cfg.TagPattern, _ = regexp.Compile(p.TagPattern)
	}
	if s.steps == nil {
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
	cfg.Steps = Catalog{Builtin: s.steps, Processes: names}
	return cfg, nil
}

// ListFilter selects a page of List.
type ListFilter struct {
	// Prefix is a folder: "checkout" lists checkout/…, never checkout-old/….
	Prefix string
	// Tag, with or without its @.
	Tag string
	// After is the path the page starts after; Limit+1 rows are returned at most.
	After *string
	Limit int
}

// List lists a project's features by path, without their content.
func (s *Service) List(ctx context.Context, projectID uuid.UUID, f ListFilter) ([]Stored, error) {
	params := db.ListFeaturesParams{ProjectID: projectID, AfterPath: f.After, RowLimit: int32(f.Limit + 1)}
	if f.Prefix != "" {
		pre := strings.TrimSuffix(f.Prefix, "/") + "/"
		pre = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(pre)
		params.Prefix = &pre
	}
	if f.Tag != "" {
		tag := f.Tag
		if !strings.HasPrefix(tag, "@") {
			tag = "@" + tag
		}
		params.Tag = &tag
	}
	return s.list(ctx, params)
}

// All returns every feature of a project with its content, by path.
func (s *Service) All(ctx context.Context, projectID uuid.UUID) ([]Stored, error) {
	rows, err := s.st.AllFeatures(ctx, projectID)
	if err != nil {
		return nil, err
	}
	out := make([]Stored, len(rows))
	for i, f := range rows {
		out[i] = fromRow(f)
	}
	return out, nil
}

// Get returns the feature at path (NotFound when there is none).
func (s *Service) Get(ctx context.Context, projectID uuid.UUID, path string) (Stored, error) {
	f, err := s.st.GetFeature(ctx, db.GetFeatureParams{ProjectID: projectID, Path: path})
	if store.IsNotFound(err) {
		return Stored{}, NotFound(path)
	}
	if err != nil {
		return Stored{}, err
	}
	return fromRow(f), nil
}

// row is what is stored of a feature's content.
type row struct {
	name    *string
	tags    []string
	count   int32
	etag    string
	size    int32
	module  string
	synced  *string
	content string
}

func rowOf(path, content string, doc *Document) row {
	r := row{tags: []string{}, etag: ETag(content), size: int32(len(content)), module: Module(path), content: content}
	if doc != nil {
		if doc.AST.Feature != nil {
			name := doc.Name
			r.name = &name
		}
		r.tags = doc.Tags
		r.count = int32(len(doc.Scenarios))
	}
	return r
}

// save inserts or replaces a feature inside q's transaction.
func save(ctx context.Context, q *db.Queries, projectID uuid.UUID, path string, r row, exists bool) (db.Feature, error) {
	if exists {
		return q.UpdateFeature(ctx, db.UpdateFeatureParams{ProjectID: projectID, Path: path, Content: r.content, Etag: r.etag, Name: r.name,
			Tags: r.tags, ScenarioCount: r.count, SizeBytes: r.size, SyncedEtag: r.synced})
	}
	return q.InsertFeature(ctx, db.InsertFeatureParams{ProjectID: projectID, Path: path, Module: r.module, Content: r.content, Etag: r.etag, Name: r.name,
		Tags: r.tags, ScenarioCount: r.count, SizeBytes: r.size, SyncedEtag: r.synced})
}

// Saved is the outcome of Save: the feature saved and whether it was created, or (Refused) the
// diagnostics with errors for which nothing was saved. Diagnostics holds the warnings otherwise.
type Saved struct {
	Feature     Stored
	Created     bool
	Refused     bool
	Diagnostics []Diagnostic
}

// errRefused rolls back a transaction whose outcome the caller already holds.
var errRefused = errors.New("refused")

// Save creates or replaces the feature at path after parsing and linting content; any error
// diagnostic refuses it and nothing is saved. Replacing needs ifMatch naming the current ETag;
// creating takes none or *.
func (s *Service) Save(ctx context.Context, p Project, path, content string, ifMatch *string) (Saved, error) {
	var out Saved
	err := s.st.WithTx(ctx, func(q *db.Queries) error {
		existed := false
		cur, err := q.GetFeatureForUpdate(ctx, db.GetFeatureForUpdateParams{ProjectID: p.ID, Path: path})
		switch {
		case store.IsNotFound(err):
		case err != nil:
			return err
		default:
			existed = true
		}
		if existed && (ifMatch == nil || *ifMatch == "*" || !ETagMatches(*ifMatch, cur.Etag)) {
			return apierr.New(apierr.PreconditionFailed, "feature "+path+" exists and If-Match does not name its current ETag",
				"header If-Match: send the ETag of GET /api/projects/{slug}/features/"+path+" (it is "+cur.Etag+")")
		}
		if !existed && ifMatch != nil && *ifMatch != "*" {
			return apierr.New(apierr.PreconditionFailed, "feature "+path+" does not exist", "header If-Match: omit it or send * to create the feature")
		}
		cfg, err := s.LintConfigIn(ctx, q, p)
		if err != nil {
			return err
		}
		doc, diags := Check(path, content, cfg)
		out.Diagnostics = diags
		if HasErrors(diags) {
			out.Refused = true
			return errRefused
		}
		saved, err := save(ctx, q, p.ID, path, rowOf(path, content, doc), existed)
		if err != nil {
			return err
		}
		out.Feature, out.Created = fromRow(saved), !existed
		return audit.Record(ctx, q, audit.Target{Kind: "feature", ID: saved.ID.String(), Name: p.Slug + "/" + path}, map[string]any{"etag": saved.Etag})
	})
	if out.Refused {
		return out, nil
	}
	return out, err
}

// Delete deletes the feature at path; ifMatch, when given, must name its ETag.
func (s *Service) Delete(ctx context.Context, p Project, path string, ifMatch *string) error {
	return s.st.WithTx(ctx, func(q *db.Queries) error {
		cur, err := q.GetFeatureForUpdate(ctx, db.GetFeatureForUpdateParams{ProjectID: p.ID, Path: path})
		if store.IsNotFound(err) {
			return NotFound(path)
		}
		if err != nil {
			return err
		}
		if ifMatch != nil && !ETagMatches(*ifMatch, cur.Etag) {
			return apierr.New(apierr.PreconditionFailed, "If-Match does not name the current ETag of "+path, "header If-Match: the current ETag is "+cur.Etag)
		}
		if _, err := q.DeleteFeature(ctx, db.DeleteFeatureParams{ProjectID: p.ID, Path: path}); err != nil {
			return err
		}
		return audit.Record(ctx, q, audit.Target{Kind: "feature", ID: cur.ID.String(), Name: p.Slug + "/" + path}, nil)
	})
}

// SaveNew saves a feature that must not exist yet (a recording never overwrites one); doc is
// content parsed, source names where it came from in the audit entry.
func (s *Service) SaveNew(ctx context.Context, p Project, path, content string, doc *Document, source string) (Stored, error) {
	var out Stored
	err := s.st.WithTx(ctx, func(q *db.Queries) error {
		_, err := q.GetFeatureForUpdate(ctx, db.GetFeatureForUpdateParams{ProjectID: p.ID, Path: path})
		if err == nil {
			return apierr.New(apierr.Conflict, "feature "+path+" exists", "body member /path: choose a new path; a recording never overwrites a feature")
		}
		if !store.IsNotFound(err) {
			return err
		}
		f, err := save(ctx, q, p.ID, path, rowOf(path, content, doc), false)
		if err != nil {
			return err
		}
		out = fromRow(f)
		return audit.Record(ctx, q, audit.Target{Kind: "feature", ID: f.ID.String(), Name: p.Slug + "/" + path}, map[string]any{"recorded": source})
	})
	return out, err
}

// FileChange is one change of a reconcile: added, modified or deleted.
type FileChange struct {
	Path   string `json:"path"`
	Change string `json:"change"`
}

// Reconcile brings the project's features in line with files (a repository snapshot, path →
// content) inside q's transaction: files added or changed there are written (local edits are
// overwritten), files a previous reconcile wrote and files no longer has are deleted; features
// created in sdods are left alone. A dry run only reports. Paths that are not feature paths are
// skipped.
func Reconcile(ctx context.Context, q *db.Queries, projectID uuid.UUID, files map[string]string, dryRun bool) ([]FileChange, error) {
	changes := []FileChange{}
	current, err := q.AllFeatures(ctx, projectID)
	if err != nil {
		return nil, err
	}
	byPath := map[string]db.Feature{}
	for _, f := range current {
		byPath[f.Path] = f
	}
	paths := make([]string, 0, len(files))
	for path := range files {
		if _, err := CleanPath(path); err == nil {
			paths = append(paths, path)
		}
	}
	sort.Strings(paths)
	for _, path := range paths {
		content := files[path]
		cur, exists := byPath[path]
		delete(byPath, path)
		if exists && cur.Content == content && cur.SyncedEtag != nil && *cur.SyncedEtag == cur.Etag {
			continue
		}
		change := "added"
		if exists {
			if cur.Content == content {
				// Same content, now owned by the repository.
				change = ""
			} else {
				change = "modified"
			}
		}
		if change != "" {
			changes = append(changes, FileChange{Path: path, Change: change})
		}
		if dryRun {
			continue
		}
		doc, _ := Parse(content)
		r := rowOf(path, content, doc)
		r.synced = &r.etag
		if _, err := save(ctx, q, projectID, path, r, exists); err != nil {
			return nil, err
		}
	}
	gone := make([]string, 0, len(byPath))
	for path, f := range byPath {
		if f.SyncedEtag != nil {
			gone = append(gone, path)
		}
	}
	sort.Strings(gone)
	for _, path := range gone {
		changes = append(changes, FileChange{Path: path, Change: "deleted"})
		if !dryRun {
			if _, err := q.DeleteFeature(ctx, db.DeleteFeatureParams{ProjectID: projectID, Path: path}); err != nil {
				return nil, err
			}
		}
	}
	return changes, nil
}
