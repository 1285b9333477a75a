package httpapi

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/sdods/sdods/gen/serverapi"
)

// countingBody counts what is read of a request's body.
type countingBody struct {
	r    io.Reader
	read int
}

func (c *countingBody) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.read += n
	return n, err
}

func (c *countingBody) Close() error { return nil }

func testDoc(t *testing.T) *openapi3.T {
	t.Helper()
	spec, err := serverapi.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	doc := *spec
	doc.Servers = nil
	return &doc
}

// Validation leaves a binary body unread, so that ingest streams it: kin-openapi's check of the
// security requirements used to read every body whole into memory first.
func TestValidationLeavesABinaryBodyUnread(t *testing.T) {
	doc := testDoc(t)
	finder, err := newRouteFinder(doc)
	if err != nil {
		t.Fatal(err)
	}
	v, err := newValidator(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		contentType string
		read        bool
	}{{"application/xml", false}, {"application/x-ndjson", false}, {"application/json", true}} {
		body := &countingBody{r: strings.NewReader(`[]` + strings.Repeat(" ", 64<<10))}
		r := httptest.NewRequest(http.MethodPost, "/api/runs/00000000-0000-0000-0000-000000000001/ingest?format=junit", nil)
		r.Body = body
		r.ContentLength = -1
		r.Header.Set("Content-Type", c.contentType)
		route, params, err := finder.FindRoute(r)
		if err != nil {
			t.Fatal(err)
		}
		if err := v.validate(r.Context(), r, route, params); err != nil {
			t.Fatalf("%s: %v", c.contentType, err)
		}
		if (body.read > 0) != c.read {
			t.Errorf("%s: validation read %d bytes of the body", c.contentType, body.read)
		}
		// The route given to the handler is the document's, security requirements included.
		if route.Spec != doc || len(route.Spec.Security) == 0 {
			t.Errorf("%s: the route's document lost its security requirements", c.contentType)
		}
	}
	// Parameters are still validated.
	r := httptest.NewRequest(http.MethodPost, "/api/runs/not-a-uuid/ingest?format=csv", strings.NewReader("<x/>"))
	r.Header.Set("Content-Type", "application/xml")
	route, params, err := finder.FindRoute(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.validate(r.Context(), r, route, params); err == nil {
		t.Fatal("a malformed run id and an unknown format passed validation")
	}
}

// A security requirement that names an undeclared scheme is refused when the pipeline is built
// (kin-openapi refused every request of such an operation).
func TestUndeclaredSecuritySchemeRefused(t *testing.T) {
	doc := testDoc(t)
	if _, err := newValidator(doc); err != nil {
		t.Fatalf("the document: %v", err)
	}
	global := *doc
	global.Security = openapi3.SecurityRequirements{{"nope": {}}}
	if _, err := newValidator(&global); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Fatalf("undeclared in the document's requirements: %v", err)
	}
	op := *doc
	op.Paths = openapi3.NewPaths()
	for path, item := range doc.Paths.Map() {
		op.Paths.Set(path, item)
	}
	item := *doc.Paths.Value("/api/runs")
	get := *item.Get
	get.Security = &openapi3.SecurityRequirements{{"bearerAuth": {}}, {"nope": {}}}
	item.Get = &get
	op.Paths.Set("/api/runs", &item)
	if _, err := newValidator(&op); err == nil || !strings.Contains(err.Error(), "GET /api/runs") {
		t.Fatalf("undeclared in an operation's requirements: %v", err)
	}
}
