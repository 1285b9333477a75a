package httpapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"

	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/projects"
)

// readUpload reads the parts of a dataset upload, refusing a file larger than the dataset limit
// (413) and parts it does not know (400); the dataset service checks the content.
func (s *Server) readUpload(r *multipart.Reader) (*projects.Upload, error) {
	u := &projects.Upload{}
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
			u.Filename = part.FileName()
			b, err := io.ReadAll(io.LimitReader(part, s.MaxDatasetBytes+1))
			if err != nil {
				return nil, uploadError(err)
			}
			if int64(len(b)) > s.MaxDatasetBytes {
				return nil, apierr.New(apierr.PayloadTooLarge, fmt.Sprintf("the dataset exceeds the limit of %d bytes", s.MaxDatasetBytes), "multipart part file: upload a smaller file")
			}
			u.Content, gotFile = b, true
		case "name", "format":
			b, err := io.ReadAll(io.LimitReader(part, 256))
			if err != nil {
				return nil, uploadError(err)
			}
			if part.FormName() == "name" {
				u.Name = strings.TrimSpace(string(b))
			} else {
				u.Format = strings.TrimSpace(string(b))
			}
		default:
			return nil, apierr.New(apierr.ValidationFailed, "unknown part "+part.FormName(), "multipart parts: file, name, format")
		}
	}
	if !gotFile {
		return nil, apierr.New(apierr.ValidationFailed, "the upload has no file", "multipart part file: required")
	}
	return u, nil
}

func uploadError(err error) error {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return apierr.Wrap(err, apierr.PayloadTooLarge, fmt.Sprintf("the request body exceeds the limit of %d bytes", tooLarge.Limit), "upload a smaller file")
	}
	return apierr.Wrap(err, apierr.BadRequest, "the multipart body cannot be read", "send multipart/form-data with a file part")
}

func toDataset(d projects.Dataset) serverapi.Dataset {
	cols := make([]serverapi.DatasetColumn, 0, len(d.Columns))
	for _, c := range d.Columns {
		cols = append(cols, serverapi.DatasetColumn{Name: c.Name, Type: serverapi.ColumnType(c.Type)})
	}
	return serverapi.Dataset{Id: d.ID, Name: d.Name, Format: serverapi.DatasetFormat(d.Format), SizeBytes: d.SizeBytes, RowCount: d.RowCount,
		Columns: cols, Sha256: d.Sha256, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt}
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
	rows, err := s.Datasets.List(ctx, p.ID, after, limit)
	if err != nil {
		return nil, err
	}
	items, next := page(rows, limit, func(d projects.Dataset) string { return d.Name })
	out := serverapi.ListDatasets200JSONResponse{Items: []serverapi.Dataset{}, NextCursor: next}
	for _, d := range items {
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
	d, err := s.Datasets.Create(ctx, p, *u)
	if err != nil {
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
	d, err := s.Datasets.Get(ctx, p.ID, req.DatasetName)
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
	if _, err := s.Datasets.Get(ctx, p.ID, req.DatasetName); err != nil {
		return nil, err // 404 before the body is read
	}
	u, err := s.readUpload(req.Body)
	if err != nil {
		return nil, err
	}
	d, err := s.Datasets.Replace(ctx, p, req.DatasetName, *u)
	if err != nil {
		return nil, err
	}
	return serverapi.ReplaceDataset200JSONResponse(toDataset(d)), nil
}

// DeleteDataset deletes a dataset and, when no other dataset shares it, its content.
func (s *Server) DeleteDataset(ctx context.Context, req serverapi.DeleteDatasetRequestObject) (serverapi.DeleteDatasetResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	if err := s.Datasets.Delete(ctx, p, req.DatasetName); err != nil {
		return nil, err
	}
	return serverapi.DeleteDataset204Response{}, nil
}

// PreviewDataset returns the columns and first rows of a dataset.
func (s *Server) PreviewDataset(ctx context.Context, req serverapi.PreviewDatasetRequestObject) (serverapi.PreviewDatasetResponseObject, error) {
	p, _, err := s.projectBySlug(ctx, req.Slug)
	if err != nil {
		return nil, err
	}
	n := 20
	if req.Params.Rows != nil {
		n = *req.Params.Rows
	}
	d, rows, total, err := s.Datasets.Preview(ctx, p.ID, req.DatasetName, n)
	if err != nil {
		return nil, err
	}
	return serverapi.PreviewDataset200JSONResponse{Columns: toDataset(d).Columns, Rows: rows, TotalRows: total}, nil
}
