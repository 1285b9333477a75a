package projects

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/audit"
	"github.com/sdods/sdods/impl/server/blob"
	"github.com/sdods/sdods/impl/server/datasets"
	"github.com/sdods/sdods/impl/server/store"
)

// Datasets owns a project's datasets: content parsed into typed columns, stored once in the
// content-addressed blob store, referenced in the transaction that records the dataset, and
// dropped when nothing references it any more.
type Datasets struct {
	st    *store.Store
	blobs blob.Store
	log   *slog.Logger
}

// NewDatasets returns the dataset service; log receives content that could not be dropped.
func NewDatasets(st *store.Store, blobs blob.Store, log *slog.Logger) *Datasets {
	return &Datasets{st: st, blobs: blobs, log: log}
}

// Dataset is a dataset's description.
type Dataset struct {
	ID                   uuid.UUID
	Name, Format         string
	SizeBytes            int64
	RowCount             int
	Columns              []datasets.Column
	Sha256               string
	CreatedAt, UpdatedAt time.Time
}

func shownDataset(d db.Dataset) Dataset {
	out := Dataset{ID: d.ID, Name: d.Name, Format: d.Format, SizeBytes: d.SizeBytes, RowCount: int(d.RowCount), Sha256: d.Sha256,
		CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt}
	_ = json.Unmarshal(d.Columns, &out.Columns)
	if out.Columns == nil {
		out.Columns = []datasets.Column{}
	}
	return out
}

// Upload is uploaded content: Name and Format may be empty (from the file name, detected).
type Upload struct {
	Name, Format, Filename string
	Content                []byte
}

var resourceName = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,62}[A-Za-z0-9])?$`)

// DatasetNotFound is the error of a name with no dataset in the project.
func DatasetNotFound(name string) error {
	return apierr.New(apierr.NotFound, "dataset "+name+" not found", "list datasets with GET /api/projects/{slug}/datasets")
}

func parseUpload(u *Upload) (*datasets.Table, error) {
	if u.Format != "" && u.Format != "csv" && u.Format != "json" {
		return nil, apierr.New(apierr.ValidationFailed, "unknown format "+u.Format, "multipart part format: csv or json")
	}
	u.Format = datasets.DetectFormat(u.Format, u.Filename, u.Content)
	t, err := datasets.Parse(u.Format, u.Content)
	if err != nil {
		return nil, apierr.Wrap(err, apierr.ValidationFailed, "the file is not a valid "+strings.ToUpper(u.Format)+" dataset", "multipart part file: "+err.Error())
	}
	return t, nil
}

// put stores content and keeps it until q's transaction, which references it, ends.
func (s *Datasets) put(ctx context.Context, q *db.Queries, content []byte) (blob.Info, error) {
	info, err := s.blobs.Put(ctx, bytes.NewReader(content), 0)
	if err != nil {
		return info, apierr.Wrap(err, apierr.Unavailable, "the blob store is unavailable", "retry later")
	}
	return info, store.KeepBlob(ctx, q, s.blobs, info.Key, content)
}

func (s *Datasets) drop(ctx context.Context, key string) {
	if err := s.st.DropBlob(ctx, s.blobs, key); err != nil {
		s.log.WarnContext(ctx, "delete unreferenced blob", "key", key, "error", err.Error())
	}
}

// List lists a project's datasets by name: those after after, Limit+1 at most.
func (s *Datasets) List(ctx context.Context, projectID uuid.UUID, after *string, limit int) ([]Dataset, error) {
	rows, err := s.st.ListDatasets(ctx, db.ListDatasetsParams{ProjectID: projectID, AfterName: after, RowLimit: int32(limit + 1)})
	if err != nil {
		return nil, err
	}
	out := make([]Dataset, len(rows))
	for i, d := range rows {
		out[i] = shownDataset(d)
	}
	return out, nil
}

func (s *Datasets) row(ctx context.Context, projectID uuid.UUID, name string) (db.Dataset, error) {
	d, err := s.st.GetDataset(ctx, db.GetDatasetParams{ProjectID: projectID, Name: name})
	if store.IsNotFound(err) {
		return d, DatasetNotFound(name)
	}
	return d, err
}

// Get returns a dataset's description (DatasetNotFound when there is none).
func (s *Datasets) Get(ctx context.Context, projectID uuid.UUID, name string) (Dataset, error) {
	d, err := s.row(ctx, projectID, name)
	if err != nil {
		return Dataset{}, err
	}
	return shownDataset(d), nil
}

// Create stores a new dataset of p; without a name it is named after the file.
func (s *Datasets) Create(ctx context.Context, p Project, u Upload) (Dataset, error) {
	t, err := parseUpload(&u)
	if err != nil {
		return Dataset{}, err
	}
	if u.Name == "" {
		u.Name = strings.TrimSuffix(path.Base(u.Filename), path.Ext(u.Filename))
	}
	if !resourceName.MatchString(u.Name) {
		return Dataset{}, apierr.New(apierr.ValidationFailed, fmt.Sprintf("%q is not a dataset name", u.Name),
			"multipart part name: letters, digits, '.', '_', '-' (1 to 64), starting and ending with a letter or digit")
	}
	cols, _ := json.Marshal(t.Columns)
	var d db.Dataset
	var key string
	err = s.st.WithTx(ctx, func(q *db.Queries) error {
		info, err := s.put(ctx, q, u.Content)
		key = info.Key // dropped again if the transaction fails
		if err != nil {
			return err
		}
		d, err = q.CreateDataset(ctx, db.CreateDatasetParams{ProjectID: p.ID, Name: u.Name, Format: u.Format, SizeBytes: info.Size,
			RowCount: int32(len(t.Rows)), Columns: cols, Sha256: info.SHA256, BlobKey: info.Key})
		if store.IsUniqueViolation(err) {
			return apierr.Wrap(err, apierr.Conflict, "dataset "+u.Name+" exists", "multipart part name: choose another name, or PUT /api/projects/{slug}/datasets/{datasetName}")
		}
		if err != nil {
			return err
		}
		return audit.Record(ctx, q, audit.Target{Kind: "dataset", ID: d.ID.String(), Name: p.Slug + "/" + d.Name}, map[string]any{"sha256": info.SHA256, "rows": len(t.Rows)})
	})
	if err != nil {
		s.drop(ctx, key)
		return Dataset{}, err
	}
	return shownDataset(d), nil
}

// Replace replaces the content of the dataset name; u.Name, when set, must be name. The old
// content is dropped when nothing else references it.
func (s *Datasets) Replace(ctx context.Context, p Project, name string, u Upload) (Dataset, error) {
	old, err := s.row(ctx, p.ID, name)
	if err != nil {
		return Dataset{}, err
	}
	t, err := parseUpload(&u)
	if err != nil {
		return Dataset{}, err
	}
	if u.Name != "" && u.Name != name {
		return Dataset{}, apierr.New(apierr.ValidationFailed, "the name part differs from the path", "multipart part name: omit it or send "+name)
	}
	cols, _ := json.Marshal(t.Columns)
	var d db.Dataset
	var key string
	err = s.st.WithTx(ctx, func(q *db.Queries) error {
		info, err := s.put(ctx, q, u.Content)
		key = info.Key // dropped again if the transaction fails
		if err != nil {
			return err
		}
		d, err = q.ReplaceDataset(ctx, db.ReplaceDatasetParams{ID: old.ID, Format: u.Format, SizeBytes: info.Size, RowCount: int32(len(t.Rows)),
			Columns: cols, Sha256: info.SHA256, BlobKey: info.Key})
		if store.IsNotFound(err) {
			return DatasetNotFound(name)
		}
		if err != nil {
			return err
		}
		return audit.Record(ctx, q, audit.Target{Kind: "dataset", ID: d.ID.String(), Name: p.Slug + "/" + d.Name}, map[string]any{"sha256": info.SHA256, "rows": len(t.Rows)})
	})
	if err != nil {
		s.drop(ctx, key)
		return Dataset{}, err
	}
	if old.BlobKey != key {
		s.drop(ctx, old.BlobKey)
	}
	return shownDataset(d), nil
}

// Delete deletes a dataset and, when nothing else references it, its content.
func (s *Datasets) Delete(ctx context.Context, p Project, name string) error {
	var key string
	err := s.st.WithTx(ctx, func(q *db.Queries) error {
		var err error
		key, err = q.DeleteDataset(ctx, db.DeleteDatasetParams{ProjectID: p.ID, Name: name})
		if store.IsNotFound(err) {
			return DatasetNotFound(name)
		}
		if err != nil {
			return err
		}
		return audit.Record(ctx, q, audit.Target{Kind: "dataset", Name: p.Slug + "/" + name}, nil)
	})
	if err != nil {
		return err
	}
	s.drop(ctx, key)
	return nil
}

// Preview returns a dataset with its first n rows and its row count.
func (s *Datasets) Preview(ctx context.Context, projectID uuid.UUID, name string, n int) (Dataset, [][]any, int, error) {
	d, err := s.row(ctx, projectID, name)
	if err != nil {
		return Dataset{}, nil, 0, err
	}
	t, err := LoadDataset(ctx, s.blobs, d)
	if err != nil {
		return Dataset{}, nil, 0, apierr.Wrap(err, apierr.Unavailable, "the dataset content cannot be read", "retry later")
	}
	rows := t.Rows
	if len(rows) > n {
		rows = rows[:n]
	}
	if rows == nil {
		rows = [][]any{}
	}
	return shownDataset(d), rows, len(t.Rows), nil
}
