// Package artifacts is the stored files of runs and projects: reading an artifact with the
// workspace that owns it, the artifacts of a run, and keeping a computed diff image.
package artifacts

import (
	"bytes"
	"context"
	"io"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/blob"
	"github.com/sdods/sdods/impl/server/store"
)

// Service owns the artifacts' rows; their content is in the blob store, or with the row when it is
// small and a run's (store.InlineContentMax).
type Service struct {
	st    *store.Store
	blobs blob.Store
}

// NewService returns the artifact service.
func NewService(st *store.Store, blobs blob.Store) *Service { return &Service{st: st, blobs: blobs} }

// Artifact is a stored file: a step's attachment, a run's file or a cached diff image.
type Artifact struct {
	ID          uuid.UUID
	RunID       *uuid.UUID
	ProjectID   uuid.UUID
	ScenarioKey *string
	StepIndex   *int32
	Name        string
	Kind        string
	MediaType   string
	SizeBytes   int64
	Sha256      string
	BlobKey     string
	CreatedAt   time.Time
	// WorkspaceID is the workspace of the artifact's project (set by Get).
	WorkspaceID uuid.UUID
}

func nullable(u uuid.NullUUID) *uuid.UUID {
	if !u.Valid {
		return nil
	}
	id := u.UUID
	return &id
}

func fromRow(a db.Artifact) Artifact {
	return Artifact{ID: a.ID, RunID: nullable(a.RunID), ProjectID: a.ProjectID, ScenarioKey: a.ScenarioKey, StepIndex: a.StepIndex, Name: a.Name,
		Kind: a.Kind, MediaType: a.MediaType, SizeBytes: a.SizeBytes, Sha256: a.Sha256, BlobKey: a.BlobKey, CreatedAt: a.CreatedAt}
}

// Get returns an artifact with its workspace; an unknown id is an error store.IsNotFound accepts.
func (s *Service) Get(ctx context.Context, id uuid.UUID) (Artifact, error) {
	r, err := s.st.GetArtifactWithWorkspace(ctx, id)
	if err != nil {
		return Artifact{}, err
	}
	a := fromRow(db.Artifact{ID: r.ID, RunID: r.RunID, ProjectID: r.ProjectID, ScenarioKey: r.ScenarioKey, StepIndex: r.StepIndex, Name: r.Name,
		Kind: r.Kind, MediaType: r.MediaType, SizeBytes: r.SizeBytes, Sha256: r.Sha256, BlobKey: r.BlobKey, CreatedAt: r.CreatedAt})
	a.WorkspaceID = r.WorkspaceID
	return a, nil
}

// Open returns the artifact's content; content that is missing is an error that wraps
// blob.ErrNotFound.
func (s *Service) Open(ctx context.Context, a Artifact) (io.ReadCloser, error) {
	return s.st.OpenArtifact(ctx, s.blobs, a.ID, a.BlobKey)
}

// OpenRange returns length bytes of the artifact's content from start (see Open).
func (s *Service) OpenRange(ctx context.Context, a Artifact, start, length int64) (io.ReadCloser, error) {
	return s.st.OpenArtifactRange(ctx, s.blobs, a.ID, a.BlobKey, start, length)
}

// OfRun lists a run's artifacts in the order they were made.
func (s *Service) OfRun(ctx context.Context, runID uuid.UUID) ([]Artifact, error) {
	rows, err := s.st.ListRunArtifacts(ctx, uuid.NullUUID{UUID: runID, Valid: true})
	if err != nil {
		return nil, err
	}
	out := make([]Artifact, 0, len(rows))
	for _, r := range rows {
		out = append(out, fromRow(r))
	}
	return out, nil
}

// KeepDiff keeps a computed diff image as a run-less artifact of the project under id, unless
// an artifact of that id exists already (the same comparison made it before); a concurrent
// computation of the same diff inserts nothing more. data is made only when needed.
func (s *Service) KeepDiff(ctx context.Context, id, projectID uuid.UUID, name string, data func() ([]byte, error)) error {
	if _, err := s.st.GetArtifactWithWorkspace(ctx, id); err == nil || !store.IsNotFound(err) {
		return err
	}
	b, err := data()
	if err != nil {
		return err
	}
	info, err := s.blobs.Put(ctx, bytes.NewReader(b), 0)
	if err != nil {
		return apierr.Wrap(err, apierr.Unavailable, "the diff image cannot be stored", "")
	}
	return s.st.WithTx(ctx, func(q *db.Queries) error {
		if err := store.KeepBlob(ctx, q, s.blobs, info.Key, b); err != nil {
			return err
		}
		_, err := q.InsertCachedArtifact(ctx, db.InsertCachedArtifactParams{ID: id, ProjectID: projectID, Name: name, Kind: "diff", MediaType: "image/png",
			SizeBytes: info.Size, Sha256: info.SHA256, BlobKey: info.Key})
		if store.IsNotFound(err) {
			return nil // made meanwhile by the same comparison
		}
		return err
	})
}
