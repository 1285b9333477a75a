package httpapi

import (
	"bytes"
	"context"
	"embed"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"regexp"

	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/safecontent"
)

//go:embed trace
var traceFiles embed.FS

// GetRunHtmlReport serves the run's self-contained HTML report: /reports/{runId}/ (and
// index.html) is the page, report.json its data.
func (s *Server) GetRunHtmlReport(ctx context.Context, req serverapi.GetRunHtmlReportRequestObject) (serverapi.GetRunHtmlReportResponseObject, error) {
	r, err := s.runByID(ctx, req.RunId)
	if err != nil {
		return nil, err
	}
	switch req.Path {
	case "index.html":
		b, err := s.htmlReport(ctx, r)
		if err != nil {
			return nil, err
		}
		return htmlReportResponse{serverapi.GetRunHtmlReport200AsteriskResponse{Body: bytes.NewReader(b), ContentType: "text/html; charset=utf-8", ContentLength: int64(len(b))},
			reportHeaders}, nil
	case "report.json":
		run, err := s.reportRun(ctx, r)
		if err != nil {
			return nil, err
		}
		f := reportFile(run, r.Run.ID)
		return htmlReportResponse{serverapi.GetRunHtmlReport200AsteriskResponse{Body: bytes.NewReader(f.content), ContentType: f.contentType, ContentLength: int64(len(f.content))},
			jsonDataHeaders}, nil
	}
	return nil, apierr.New(apierr.NotFound, "the report has no file "+req.Path, "open /reports/"+r.Run.ID.String()+"/")
}

// GetTraceViewer serves the trace viewer, a static page that loads a run's trace.json from the
// API with the caller's own credentials (same origin): /trace/?run={runId}.
func (s *Server) GetTraceViewer(ctx context.Context, req serverapi.GetTraceViewerRequestObject) (serverapi.GetTraceViewerResponseObject, error) {
	p := path.Clean("/" + req.Path)[1:]
	if p == "" {
		p = "index.html"
	}
	b, err := fs.ReadFile(traceFiles, "trace/"+p)
	if err != nil {
		return nil, apierr.New(apierr.NotFound, "the trace viewer has no file "+req.Path, "open /trace/?run=<runId>")
	}
	ct := mime.TypeByExtension(path.Ext(p))
	if ct == "" {
		ct = "application/octet-stream"
	}
	return traceViewerResponse{serverapi.GetTraceViewer200AsteriskResponse{Body: bytes.NewReader(b), ContentType: ct, ContentLength: int64(len(b))},
		func(h http.Header) { safecontent.SetPageHeaders(h, traceViewerCSP) }}, nil
}

// traceViewerCSP lets the trace viewer run only its own inline script, fetch only from this
// origin (the trace and the run's files, with the caller's credentials) and show images from it;
// nothing in a trace can add script. Styles may be inline: a DOM snapshot is shown in a srcdoc
// frame, which inherits this policy, and renders with its own inlined styles (style cannot run
// script; the frame is sandboxed without allow-scripts or allow-same-origin, see docs/reports.md).
var traceViewerCSP = func() string {
	b, err := fs.ReadFile(traceFiles, "trace/index.html")
	if err != nil {
		panic(err)
	}
	csp := safecontent.PageCSP(string(b), "img-src 'self' data:", "connect-src 'self'", "frame-src 'self'", "frame-ancestors 'none'")
	return styleHashes.ReplaceAllString(csp, "style-src 'unsafe-inline'")
}()

var styleHashes = regexp.MustCompile(`style-src [^;]+`)
