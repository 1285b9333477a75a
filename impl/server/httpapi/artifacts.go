package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"io"
	"net/http"
	"strconv"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/artifacts"
	"github.com/sdods/sdods/impl/server/pixeldiff"
	"github.com/sdods/sdods/impl/server/safecontent"
	"github.com/sdods/sdods/impl/server/store"
)

// maxCompareBytes bounds each image compareArtifacts reads.
const maxCompareBytes = 64 << 20

// artifactOf loads an artifact the caller may act on with the current operation; one in a
// workspace where the caller has no role does not exist for them.
func (s *Server) artifactOf(ctx context.Context, id uuid.UUID) (artifacts.Artifact, error) {
	a, err := s.Artifacts.Get(ctx, id)
	notFound := apierr.New(apierr.NotFound, "artifact "+id.String()+" not found", "artifact ids are in a run's steps (attachments, visual checks)")
	if store.IsNotFound(err) {
		return a, notFound
	}
	if err != nil {
		return a, err
	}
	if _, err := s.authorizeWorkspace(ctx, a.WorkspaceID); err != nil {
		if apierr.From(err).Code == apierr.NotFound {
			return a, notFound
		}
		return a, err
	}
	return a, nil
}

// GetArtifact returns an artifact's content with its media type (from the allow-list of
// impl/server/safecontent, whatever was stored: anything else is a download) and an ETag (its SHA-256):
// 304 when If-None-Match matches, 206 for a satisfiable single byte range, 416 with
// Content-Range for another. Every answer carries nosniff, a sandboxing CSP and CORP.
func (s *Server) GetArtifact(ctx context.Context, req serverapi.GetArtifactRequestObject) (serverapi.GetArtifactResponseObject, error) {
	a, err := s.artifactOf(ctx, req.ArtifactId)
	if err != nil {
		return nil, err
	}
	resp, err := s.getArtifact(ctx, req, a)
	if err != nil {
		return nil, err
	}
	return artifactResponse{GetArtifactResponseObject: resp, set: artifactHeaders(a.MediaType, a.Name)}, nil
}

func (s *Server) getArtifact(ctx context.Context, req serverapi.GetArtifactRequestObject, a artifacts.Artifact) (serverapi.GetArtifactResponseObject, error) {
	etag := `"` + a.Sha256 + `"`
	if req.Params.IfNoneMatch != nil && etagMatches(*req.Params.IfNoneMatch, etag) {
		return serverapi.GetArtifact304Response{}, nil
	}
	size := a.SizeBytes
	start, length, partial, err := byteRange(req.Params.Range, size)
	if err != nil {
		if apierr.From(err).Code == apierr.RangeNotSatisfiable {
			return rangeNotSatisfiable{size: size, err: apierr.From(err)}, nil
		}
		return nil, err
	}
	body, err := s.openArtifact(ctx, a, start, length)
	if err != nil {
		return nil, err
	}
	accept, contentType := "bytes", safecontent.ContentType(a.MediaType)
	if partial {
		cr := fmt.Sprintf("bytes %d-%d/%d", start, start+length-1, size)
		return serverapi.GetArtifact206AsteriskResponse{Body: body, ContentType: contentType, ContentLength: length,
			Headers: serverapi.GetArtifact206ResponseHeaders{AcceptRanges: &accept, ContentRange: &cr, ETag: &etag}}, nil
	}
	return serverapi.GetArtifact200AsteriskResponse{Body: body, ContentType: contentType, ContentLength: length,
		Headers: serverapi.GetArtifact200ResponseHeaders{AcceptRanges: &accept, ETag: &etag}}, nil
}

// openArtifact returns length bytes of an artifact's content from start.
func (s *Server) openArtifact(ctx context.Context, a artifacts.Artifact, start, length int64) (io.ReadCloser, error) {
	rc, err := s.Artifacts.OpenRange(ctx, a, start, length)
	if err != nil {
		if isBlobNotFound(err) {
			return nil, apierr.Wrap(err, apierr.NotFound, "the artifact's content is missing from the blob store", "its run may have been purged")
		}
		return nil, apierr.Wrap(err, apierr.Unavailable, "the blob store is unavailable", "try again later")
	}
	return rc, nil
}

// rangeNotSatisfiable is the 416 answer with the Content-Range the generated response lacks.
type rangeNotSatisfiable struct {
	size int64
	err  *apierr.Error
}

func (r rangeNotSatisfiable) VisitGetArtifactResponse(w http.ResponseWriter) error {
	w.Header().Set("Content-Range", fmt.Sprintf("bytes */%d", r.size))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusRequestedRangeNotSatisfiable)
	return json.NewEncoder(w).Encode(serverapi.Error{Error: serverapi.ErrorBody{Code: serverapi.ErrorCode(r.err.Code),
		Message: r.err.Message, Hint: r.err.Hint}})
}

// CompareArtifacts computes the pixel diff of two PNG artifacts by pixelmatch's method and
// returns it with the figures. Images of different sizes are padded to the larger width and
// height with transparent pixels. The diff image is a cached, content-addressed result, not a
// change a GET makes: its artifact (in the project of after) has an id derived from the two
// images' contents and the options, so the same comparison again returns the same artifact and
// adds no row.
func (s *Server) CompareArtifacts(ctx context.Context, req serverapi.CompareArtifactsRequestObject) (serverapi.CompareArtifactsResponseObject, error) {
	p := req.Params
	before, err := s.artifactOf(ctx, p.Before)
	if err != nil {
		return nil, err
	}
	after, err := s.artifactOf(ctx, p.After)
	if err != nil {
		return nil, err
	}
	opt := pixeldiff.Defaults()
	if p.Threshold != nil {
		// The query carries a decimal; float32 → float64 would add binary noise (0.1 → 0.10000000149).
		opt.Threshold, _ = strconv.ParseFloat(strconv.FormatFloat(float64(*p.Threshold), 'g', -1, 32), 64)
	}
	if p.IncludeAA != nil {
		opt.IncludeAA = *p.IncludeAA
	}
	a, err := s.readImage(ctx, before, "before")
	if err != nil {
		return nil, err
	}
	b, err := s.readImage(ctx, after, "after")
	if err != nil {
		return nil, err
	}
	res, err := pixeldiff.Diff(a, b, opt)
	if err != nil {
		return nil, err
	}
	diffID := diffArtifactID(after.ProjectID, before.Sha256, after.Sha256, opt)
	name := fmt.Sprintf("diff-%.12s-%.12s.png", before.Sha256, after.Sha256)
	err = s.Artifacts.KeepDiff(ctx, diffID, after.ProjectID, name, func() ([]byte, error) {
		var buf bytes.Buffer
		err := pixeldiff.EncodePNG(&buf, res.Diff)
		return buf.Bytes(), err
	})
	if err != nil {
		return nil, err
	}
	return serverapi.CompareArtifacts200JSONResponse{Before: before.ID, After: after.ID, Threshold: float32(opt.Threshold), IncludeAA: opt.IncludeAA,
		Width: res.Width, Height: res.Height, MismatchPixels: int64(res.Mismatch), MismatchRatio: float32(res.Ratio), SizeMismatch: res.SizeMismatch,
		DiffArtifactId: diffID}, nil
}

// diffNamespace names the UUIDs of cached diff images (version 5, from their inputs).
var diffNamespace = uuid.MustParse("6f1d6a52-3f55-4d0c-9d0e-6a1c3b2f8e71")

// diffArtifactID is the id of the diff of two images (by content) with opt, in a project.
func diffArtifactID(projectID uuid.UUID, beforeSHA, afterSHA string, opt pixeldiff.Options) uuid.UUID {
	key := fmt.Sprintf("diff\x00%s\x00%s\x00%s\x00%s\x00%t", projectID, beforeSHA, afterSHA, strconv.FormatFloat(opt.Threshold, 'g', -1, 64), opt.IncludeAA)
	return uuid.NewSHA1(diffNamespace, []byte(key))
}

// readImage reads and decodes a PNG artifact; anything else is 422.
func (s *Server) readImage(ctx context.Context, a artifacts.Artifact, which string) (*image.NRGBA, error) {
	if a.SizeBytes > maxCompareBytes {
		return nil, apierr.New(apierr.Unprocessable, which+" is too large to compare", fmt.Sprintf("at most %d bytes", maxCompareBytes))
	}
	rc, err := s.Artifacts.Open(ctx, a)
	if err != nil {
		return nil, apierr.Wrap(err, apierr.Unavailable, "the artifact's content cannot be read", "")
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, maxCompareBytes+1))
	if err != nil {
		return nil, apierr.Wrap(err, apierr.Unavailable, "the artifact's content cannot be read", "")
	}
	img, err := pixeldiff.DecodePNG(data)
	if errors.Is(err, pixeldiff.ErrNotPNG) {
		return nil, apierr.Wrap(err, apierr.Unprocessable, which+" ("+a.ID.String()+", "+a.MediaType+") is not a PNG image", err.Error())
	}
	return img, err
}
