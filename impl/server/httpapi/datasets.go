package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"path"
	"regexp"
	"strings"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/audit"
	"github.com/sdods/sdods/impl/server/datasets"
	"github.com/sdods/sdods/impl/server/projects"
	"github.com/sdods/sdods/impl/server/store"
)

var resourceName = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,62}[A-Za-z0-9])?$`)

func datasetNotFound(name string) error {
	return apierr.New(apierr.NotFound, "dataset "+name+" not found", "list datasets with GET /api/projects/{slug}/datasets")
}

// upload is a read multipart dataset upload.
type upload struct {
	name, format, filename string
	content                []byte
	table                  *datasets.Table
}

// readUpload reads the parts of a dataset upload, refusing a file larger than the dataset limit
// (413) and content that is not a dataset (400).
func (s *Server) readUpload(r *multipart.Reader) (*upload, error) {
	u := &upload{}
	gotFile := false
	for {
		part, err := r.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, uploadError(err)
		}
		switch part.FormName() {
		case "file":
			u.filename = part.FileName()
			b, err := io.ReadAll(io.LimitReader(part, s.MaxDatasetBytes+1))
			if err != nil {
				return nil, uploadError(err)
			}
			if int64(len(b)) > s.MaxDatasetBytes {
				return nil, apierr.New(apierr.PayloadTooLarge, fmt.Sprintf("the dataset exceeds the limit of %d bytes", s.MaxDatasetBytes), "multipart part file: upload a smaller file")
			}
			u.content, gotFile = b, true
		case "name", "format":
			b, err := io.ReadAll(io.LimitReader(part, 256))
			if err != nil {
				return nil, uploadError(err)
			}
			if part.FormName() == "name" {
				u.name = strings.TrimSpace(string(b))
			} else {
				u.format = strings.TrimSpace(string(b))
			}
		default:
			return nil, apierr.New(apierr.ValidationFailed, "unknown part "+part.FormName(), "multipart parts: file, name, format")
		}
	}
	if !gotFile {
		return nil, apierr.New(apierr.ValidationFailed, "the upload has no file", "multipart part file: required")
	}
	if u.format != "" && u.format != "csv" && u.format != "json" {
		return nil, apierr.New(apierr.ValidationFailed, "unknown format "+u.format, "multipart part format: csv or json")
	}
	u.format = datasets.DetectFormat(u.format, u.filename, u.content)
	t, err := datasets.Parse(u.format, u.content)
	if err != nil {
		return nil, apierr.Wrap(err, apierr.ValidationFailed, "the file is not a valid "+strings.ToUpper(u.format)+" dataset", "multipart part file: "+err.Error())
	}
	u.table = t
	return u, nil
}

func uploadError(err error) error {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return apierr.Wrap(err, apierr.PayloadTooLarge, fmt.Sprintf("the request body exceeds the limit of %d bytes", tooLarge.Limit), "upload a smaller file")
	}
	return apierr.Wrap(err, apierr.BadRequest, "the multipart body cannot be read", "send multipart/form-data with a file part")
}

func toDataset(d db.Dataset) serverapi.Dataset {
	var cols []serverapi.DatasetColumn
	_ = json.Unmarshal(d.Columns, &cols)
	if cols == nil {
		cols = []serverapi.DatasetColumn{}
	}
	return serverapi.Dataset{Id: d.ID, Name: d.Name, Format: serverapi.DatasetFormat(d.Format), SizeBytes: d.SizeBytes, RowCount: int(d.RowCount),
		Columns: cols, Sha256: d.Sha256, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt}
}

// storeBlob puts an upload's content in the blob store and keeps it there until the
// transaction of q, which will reference it, ends (store.KeepBlob, as every blob writer does).
func (s *Server) storeBlob(ctx context.Context, q *db.Queries, u *upload) (string, string, int64, error) {
	info, err := s.Blobs.Put(ctx, bytes.NewReader(u.content), 0)
	if err != nil {
		return "", "", 0, apierr.Wrap(err, apierr.Unavailable, "the blob store is unavailable", "retry later")
	}
	if err := store.KeepBlob(ctx, q, s.Blobs, info.Key, u.content); err != nil {
		return "", "", 0, err
	}
	return info.Key, info.SHA256, info.Size, nil
}

// dropBlob removes content nothing references any more (after a refused, replaced or deleted
// dataset). The blob store is shared: datasets, artifacts and visual baselines are all counted,
// under the key's lock, so that a dataset written at the same moment keeps its content.
func (s *Server) dropBlob(ctx context.Context, key string) {
	if key == "" {
		return
	}
	err := s.Store.WithTx(ctx, func(q *db.Queries) error {
		if err := q.LockBlob(ctx, key); err != nil {
			return err
		}
		if n, err := q.CountBlobReferences(ctx, key); err != nil || n > 0 {
			return err
		}
		return s.Blobs.Delete(ctx, key)
	})
	if err != nil {
		s.Log.WarnContext(ctx, "delete unreferenced blob", "key", key, "error", err.Error())
	}
}

// ListDatasets lists a project's datasets by name.
func (s *Server) ListDatasets(ctx context.Context, req serverapi.ListDatasetsRequestObject) (serverapi.ListDatasetsResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	var after *string
	if err := decodeCursor(req.Params.Cursor, &after); err != nil {
		return nil, err
	}
	limit := pageLimit(req.Params.Limit)
	rows, err := s.Store.ListDatasets(ctx, db.ListDatasetsParams{ProjectID: p.ID, AfterName: after, RowLimit: int32(limit + 1)})
	if err != nil {
		return nil, err
	}
	out := serverapi.ListDatasets200JSONResponse{Items: []serverapi.Dataset{}}
	for i, d := range rows {
		if i == limit {
			out.NextCursor = encodeCursor(rows[i-1].Name)
			break
		}
		out.Items = append(out.Items, toDataset(d))
	}
	return out, nil
}

// UploadDataset stores a CSV or JSON dataset with its typed columns.
func (s *Server) UploadDataset(ctx context.Context, req serverapi.UploadDatasetRequestObject) (serverapi.UploadDatasetResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	u, err := s.readUpload(req.Body)
	if err != nil {
		return nil, err
	}
	if u.name == "" {
		u.name = strings.TrimSuffix(path.Base(u.filename), path.Ext(u.filename))
	}
	if !resourceName.MatchString(u.name) {
		return nil, apierr.New(apierr.ValidationFailed, fmt.Sprintf("%q is not a dataset name", u.name),
			"multipart part name: letters, digits, '.', '_', '-' (1 to 64), starting and ending with a letter or digit")
	}
	cols, _ := json.Marshal(u.table.Columns)
	var d db.Dataset
	var key string
	err = s.Store.WithTx(ctx, func(q *db.Queries) error {
		var sum string
		var size int64
		if key, sum, size, err = s.storeBlob(ctx, q, u); err != nil {
			return err
		}
		d, err = q.CreateDataset(ctx, db.CreateDatasetParams{ProjectID: p.ID, Name: u.name, Format: u.format, SizeBytes: size,
			RowCount: int32(len(u.table.Rows)), Columns: cols, Sha256: sum, BlobKey: key})
		if store.IsUniqueViolation(err) {
			return apierr.Wrap(err, apierr.Conflict, "dataset "+u.name+" exists", "multipart part name: choose another name, or PUT /api/projects/{slug}/datasets/{datasetName}")
		}
		if err != nil {
			return err
		}
		return audit.Record(ctx, q, audit.Target{Kind: "dataset", ID: d.ID.String(), Name: p.Slug + "/" + d.Name}, map[string]any{"sha256": sum, "rows": len(u.table.Rows)})
	})
	if err != nil {
		s.dropBlob(ctx, key)
		return nil, err
	}
	return serverapi.UploadDataset201JSONResponse(toDataset(d)), nil
}

// GetDataset returns a dataset's description.
func (s *Server) GetDataset(ctx context.Context, req serverapi.GetDatasetRequestObject) (serverapi.GetDatasetResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	d, err := s.Store.GetDataset(ctx, db.GetDatasetParams{ProjectID: p.ID, Name: req.DatasetName})
	if store.IsNotFound(err) {
		return nil, datasetNotFound(req.DatasetName)
	}
	if err != nil {
		return nil, err
	}
	return serverapi.GetDataset200JSONResponse(toDataset(d)), nil
}

// ReplaceDataset replaces a dataset's content.
func (s *Server) ReplaceDataset(ctx context.Context, req serverapi.ReplaceDatasetRequestObject) (serverapi.ReplaceDatasetResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	old, err := s.Store.GetDataset(ctx, db.GetDatasetParams{ProjectID: p.ID, Name: req.DatasetName})
	if store.IsNotFound(err) {
		return nil, datasetNotFound(req.DatasetName)
	}
	if err != nil {
		return nil, err
	}
	u, err := s.readUpload(req.Body)
	if err != nil {
		return nil, err
	}
	if u.name != "" && u.name != req.DatasetName {
		return nil, apierr.New(apierr.ValidationFailed, "the name part differs from the path", "multipart part name: omit it or send "+req.DatasetName)
	}
	cols, _ := json.Marshal(u.table.Columns)
	var d db.Dataset
	var key string
	err = s.Store.WithTx(ctx, func(q *db.Queries) error {
		var sum string
		var size int64
		if key, sum, size, err = s.storeBlob(ctx, q, u); err != nil {
			return err
		}
		d, err = q.ReplaceDataset(ctx, db.ReplaceDatasetParams{ID: old.ID, Format: u.format, SizeBytes: size, RowCount: int32(len(u.table.Rows)),
			Columns: cols, Sha256: sum, BlobKey: key})
		if store.IsNotFound(err) {
			return datasetNotFound(req.DatasetName)
		}
		if err != nil {
			return err
		}
		return audit.Record(ctx, q, audit.Target{Kind: "dataset", ID: d.ID.String(), Name: p.Slug + "/" + d.Name}, map[string]any{"sha256": sum, "rows": len(u.table.Rows)})
	})
	if err != nil {
		s.dropBlob(ctx, key)
		return nil, err
	}
	if old.BlobKey != key {
		s.dropBlob(ctx, old.BlobKey)
	}
	return serverapi.ReplaceDataset200JSONResponse(toDataset(d)), nil
}

// DeleteDataset deletes a dataset and, when no other dataset shares it, its content.
func (s *Server) DeleteDataset(ctx context.Context, req serverapi.DeleteDatasetRequestObject) (serverapi.DeleteDatasetResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	var key string
	err = s.Store.WithTx(ctx, func(q *db.Queries) error {
		key, err = q.DeleteDataset(ctx, db.DeleteDatasetParams{ProjectID: p.ID, Name: req.DatasetName})
		if store.IsNotFound(err) {
			return datasetNotFound(req.DatasetName)
		}
		if err != nil {
			return err
		}
		return audit.Record(ctx, q, audit.Target{Kind: "dataset", Name: p.Slug + "/" + req.DatasetName}, nil)
	})
	if err != nil {
		return nil, err
	}
	s.dropBlob(ctx, key)
	return serverapi.DeleteDataset204Response{}, nil
}

// PreviewDataset returns the columns and first rows of a dataset.
func (s *Server) PreviewDataset(ctx context.Context, req serverapi.PreviewDatasetRequestObject) (serverapi.PreviewDatasetResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	d, err := s.Store.GetDataset(ctx, db.GetDatasetParams{ProjectID: p.ID, Name: req.DatasetName})
	if store.IsNotFound(err) {
		return nil, datasetNotFound(req.DatasetName)
	}
	if err != nil {
		return nil, err
	}
	t, err := projects.LoadDataset(ctx, s.Blobs, d)
	if err != nil {
		return nil, apierr.Wrap(err, apierr.Unavailable, "the dataset content cannot be read", "retry later")
	}
	n := 20
	if req.Params.Rows != nil {
		n = *req.Params.Rows
	}
	rows := t.Rows
	if len(rows) > n {
		rows = rows[:n]
	}
	out := serverapi.PreviewDataset200JSONResponse{Columns: toDataset(d).Columns, Rows: rows, TotalRows: len(t.Rows)}
	if out.Rows == nil {
		out.Rows = [][]any{}
	}
	return out, nil
}
