package httpapi

import (
	"errors"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/sdods/sdods/gen/serverapi"
)

// The route finder answers every request as kin-openapi's gorillamux router over the whole
// document does: the same route (path, operation, path item, method, document), the same path
// parameters, the same error; over every template of the document filled in several ways, each
// changed (a segment more or less, a trailing or doubled slash, another case), with every method,
// and over random paths made of the document's own segments.
func TestRouteFinderMatchesGorillaMux(t *testing.T) {
	spec, err := serverapi.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	doc := *spec
	doc.Servers = nil
	want, err := gorillamux.NewRouter(&doc)
	if err != nil {
		t.Fatal(err)
	}
	got, err := newRouteFinder(&doc)
	if err != nil {
		t.Fatal(err)
	}
	values := []string{"x", "shop", "00000000-0000-0000-0000-000000000001", "42", "a%2Fb", "%7Bid%7D", "caf%C3%A9", "a.b", "-"}
	var paths []string
	segments := map[string]bool{}
	for _, tmpl := range doc.Paths.InMatchingOrder() {
		for i, v := range values {
			p := tmpl
			for strings.Contains(p, "{") {
				a := strings.IndexByte(p, '{')
				b := strings.IndexByte(p[a:], '}') + a
				p = p[:a] + values[(i+a)%len(values)] + p[b+1:]
				if i == 0 {
					p = strings.Replace(p, values[(i+a)%len(values)], v, 1)
				}
			}
			paths = append(paths, p, p+"/", p+"/extra", strings.ToUpper(p), strings.Replace(p, "/", "//", 2), path0(p))
		}
		for _, s := range strings.Split(tmpl, "/") {
			segments[s] = true
		}
	}
	segs := slices.Sorted(maps.Keys(segments))
	rnd := rand.New(rand.NewPCG(31, 3))
	for range 3000 {
		var b strings.Builder
		for range 1 + rnd.IntN(6) {
			b.WriteString("/")
			s := segs[rnd.IntN(len(segs))]
			if strings.Contains(s, "{") {
				s = values[rnd.IntN(len(values))]
			}
			b.WriteString(s)
		}
		paths = append(paths, b.String())
	}
	paths = append(paths, "/", "", "/api", "/api/", "//", "/api//runs", "/nothing/here")
	methods := []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodHead, http.MethodOptions, "get", "PROPFIND"}
	found := 0
	for _, p := range paths {
		for _, m := range methods {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.Method = m
			r.URL.Path = ""
			r.URL.RawPath = ""
			if err := setEscapedPath(r, p); err != nil {
				continue
			}
			wr, wp, werr := want.FindRoute(r)
			gr, gp, gerr := got.FindRoute(r)
			if !errors.Is(gerr, werr) || (werr == nil) != (gerr == nil) {
				t.Fatalf("%s %q: error %v, gorillamux %v", m, p, gerr, werr)
			}
			if (wr == nil) != (gr == nil) {
				t.Fatalf("%s %q: route %v, gorillamux %v", m, p, gr, wr)
			}
			if wr == nil {
				continue
			}
			found++
			if gr.Path != wr.Path || gr.Operation != wr.Operation || gr.PathItem != wr.PathItem || gr.Method != wr.Method || gr.Spec != wr.Spec || gr.Server != wr.Server {
				t.Fatalf("%s %q: route %s %s, gorillamux %s %s", m, p, gr.Method, gr.Path, wr.Method, wr.Path)
			}
			if !maps.Equal(gp, wp) {
				t.Fatalf("%s %q: parameters %v, gorillamux %v", m, p, gp, wp)
			}
		}
	}
	t.Logf("%d requests, %d found a route", len(paths)*len(methods), found)
	if found < doc.Paths.Len() {
		t.Fatalf("only %d requests found a route over %d paths: the test's paths are wrong", found, doc.Paths.Len())
	}
}

// path0 drops a path's last segment.
func path0(p string) string {
	if i := strings.LastIndexByte(p, '/'); i > 0 {
		return p[:i]
	}
	return p
}

func setEscapedPath(r *http.Request, escaped string) error {
	u, err := r.URL.Parse(escaped)
	if err != nil {
		return err
	}
	if escaped == "" {
		u.Path, u.RawPath = "", ""
	}
	r.URL = u
	return nil
}

func BenchmarkFindRoute(b *testing.B) {
	spec, err := serverapi.GetSpec()
	if err != nil {
		b.Fatal(err)
	}
	doc := *spec
	doc.Servers = nil
	gm, err := gorillamux.NewRouter(&doc)
	if err != nil {
		b.Fatal(err)
	}
	rf, err := newRouteFinder(&doc)
	if err != nil {
		b.Fatal(err)
	}
	for _, p := range []string{"/api/runs?project=shop&limit=50", "/api/projects/shop/features?tag=%40smoke&limit=50", "/api/audit?targetKind=run"} {
		r := httptest.NewRequest(http.MethodGet, p, nil)
		b.Run("gorillamux"+p, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := gm.FindRoute(r); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("finder"+p, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := rf.FindRoute(r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkNewRouteFinder(b *testing.B) {
	spec, err := serverapi.GetSpec()
	if err != nil {
		b.Fatal(err)
	}
	doc := *spec
	doc.Servers = nil
	for b.Loop() {
		if _, err := newRouteFinder(&doc); err != nil {
			b.Fatal(err)
		}
	}
}
