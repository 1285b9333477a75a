package httpapi

import (
	"net/http"

	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/reports"
	"github.com/sdods/sdods/impl/server/safecontent"
)

// The responses that carry content a test brought in, or a page that shows it, are wrapped to
// add the headers that keep a browser from executing it on the API origin (nosniff, a CSP,
// CORP); the generated response types have no member for them.

// artifactHeaders returns a setter of the headers of a file a test brought in (type t, name).
func artifactHeaders(t, name string) func(http.Header) {
	return func(h http.Header) { safecontent.SetArtifactHeaders(h, t, name) }
}

// reportHeaders sets the headers of the HTML report.
func reportHeaders(h http.Header) { safecontent.SetPageHeaders(h, reports.CSP) }

// jsonDataHeaders sets the headers of JSON the server made from test data (report.json, trace.json).
func jsonDataHeaders(h http.Header) { safecontent.SetArtifactHeaders(h, "application/json", "") }

type artifactResponse struct {
	serverapi.GetArtifactResponseObject
	set func(http.Header)
}

func (r artifactResponse) VisitGetArtifactResponse(w http.ResponseWriter) error {
	r.set(w.Header())
	return r.GetArtifactResponseObject.VisitGetArtifactResponse(w)
}

type runFileResponse struct {
	serverapi.GetRunFileResponseObject
	set func(http.Header)
}

func (r runFileResponse) VisitGetRunFileResponse(w http.ResponseWriter) error {
	r.set(w.Header())
	return r.GetRunFileResponseObject.VisitGetRunFileResponse(w)
}

type htmlReportResponse struct {
	serverapi.GetRunHtmlReportResponseObject
	set func(http.Header)
}

func (r htmlReportResponse) VisitGetRunHtmlReportResponse(w http.ResponseWriter) error {
	r.set(w.Header())
	return r.GetRunHtmlReportResponseObject.VisitGetRunHtmlReportResponse(w)
}

type traceViewerResponse struct {
	serverapi.GetTraceViewerResponseObject
	set func(http.Header)
}

func (r traceViewerResponse) VisitGetTraceViewerResponse(w http.ResponseWriter) error {
	r.set(w.Header())
	return r.GetTraceViewerResponseObject.VisitGetTraceViewerResponse(w)
}
