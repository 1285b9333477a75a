package httpapi

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// routeFinder answers as kin-openapi's gorillamux router built from the whole document does, for
// less: that router tries every path's regular expression in turn (15 to 65 allocations and 7 to
// 27 µs a request with this document), whereas a request can only match a template with as many
// segments as its path, whose second and last segments, where they are literal
// ("/api/projects/{slug}/features"), are the request's. The templates are grouped so once, and
// each group gets its own gorillamux router over those paths alone: the same matcher, tried in
// the same order (the document's matching order sorts all paths by a total order, so a subset
// keeps its relative order), over the candidates only. TestRouteFinderMatchesGorillaMux compares
// the two.
type routeFinder struct {
	doc *openapi3.T
	// bySegments[n] holds the routers of the templates of n segments ("" has one).
	bySegments map[int]*segmentRoutes
}

// segmentRoutes are the routers of the templates of one segment count, by the request's second
// and last segments: a segment that no template has literally in that place is looked up as "".
type segmentRoutes struct {
	second, last map[string]bool
	routers      map[[2]string]routers.Router
}

// pathSegments splits an escaped path as the templates are split (the leading slash dropped):
// the number of segments, the second and the last.
func pathSegments(p string) (n int, second, last string) {
	p = strings.TrimPrefix(p, "/")
	n = strings.Count(p, "/") + 1
	if i := strings.IndexByte(p, '/'); i >= 0 {
		rest := p[i+1:]
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			rest = rest[:j]
		}
		second = rest
	}
	last = p[strings.LastIndexByte(p, '/')+1:]
	return n, second, last
}

func newRouteFinder(doc *openapi3.T) (*routeFinder, error) {
	type template struct{ path, second, last string } // "" for a segment that is not literal
	literal := func(seg string) string {
		if strings.ContainsAny(seg, "{}") {
			return ""
		}
		return seg
	}
	groups := map[int][]template{}
	for _, path := range doc.Paths.InMatchingOrder() {
		n, second, last := pathSegments(path)
		t := template{path: path, last: literal(last)}
		if n >= 2 {
			t.second = literal(second)
		}
		groups[n] = append(groups[n], t)
	}
	built := map[string]routers.Router{} // by the candidates' paths: groups share routers
	build := func(paths []string) (routers.Router, error) {
		key := strings.Join(paths, "\n")
		if r, ok := built[key]; ok {
			return r, nil
		}
		sub := *doc
		sub.Paths = openapi3.NewPaths()
		for _, p := range paths {
			sub.Paths.Set(p, doc.Paths.Value(p))
		}
		r, err := gorillamux.NewRouter(&sub)
		if err != nil {
			return nil, fmt.Errorf("build OpenAPI router: %w", err)
		}
		built[key] = r
		return r, nil
	}
	f := &routeFinder{doc: doc, bySegments: map[int]*segmentRoutes{}}
	for n, ts := range groups {
		sr := &segmentRoutes{second: map[string]bool{"": true}, last: map[string]bool{"": true}, routers: map[[2]string]routers.Router{}}
		for _, t := range ts {
			sr.second[t.second] = true
			sr.last[t.last] = true
		}
		for second := range sr.second {
			for last := range sr.last {
				var paths []string
				for _, t := range ts {
					if (t.second == "" || t.second == second) && (t.last == "" || t.last == last) {
						paths = append(paths, t.path)
					}
				}
				if len(paths) == 0 {
					continue
				}
				r, err := build(paths)
				if err != nil {
					return nil, err
				}
				sr.routers[[2]string{second, last}] = r
			}
		}
		f.bySegments[n] = sr
	}
	return f, nil
}

// FindRoute finds the request's route as gorillamux.Router.FindRoute would on the whole document.
func (f *routeFinder) FindRoute(r *http.Request) (*routers.Route, map[string]string, error) {
	n, second, last := pathSegments(r.URL.EscapedPath())
	sr := f.bySegments[n]
	if sr == nil {
		return nil, nil, routers.ErrPathNotFound
	}
	if n < 2 || !sr.second[second] {
		second = ""
	}
	if !sr.last[last] {
		last = ""
	}
	router := sr.routers[[2]string{second, last}]
	if router == nil {
		return nil, nil, routers.ErrPathNotFound
	}
	route, params, err := router.FindRoute(r)
	if route != nil {
		route.Spec = f.doc // the route is a copy; the group's document shares the paths but not the whole
	}
	return route, params, err
}
