// Package webui serves the web UI: the production build of web/ (Vite), committed under dist/
// and embedded in the binary, so that `go run ./cmd/sdods serve` on a fresh clone needs no Node.
// `make webui` rebuilds dist/ from web/ and `make check-webui` fails when the committed build
// differs from what web/ builds (the same drift check as gen/).
//
// index.html is served at / and, as the single-page application's fallback, at every client-side
// route (GET of a path outside /api, /mcp, /metrics, /reports and /trace that names no built file). Files
// under /assets/ carry a content hash in their names and are cached for a year; index.html is
// revalidated on every load, so a new binary's UI is picked up at once. Text files (the script,
// the styles) are sent gzip-compressed to a client that accepts gzip, compressed once on first
// request and kept in memory, with Vary: Accept-Encoding.
package webui

import (
	"bytes"
	"compress/gzip"
	"embed"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"
)

//go:embed all:dist
var dist embed.FS

// CSP is the page's Content-Security-Policy: script only from this origin (the build has no
// inline script), calls only to this origin (the API and its event streams), images from this
// origin and data: URLs (screenshots and the baselines' diff images), no frames, no plugins.
// Styles allow 'unsafe-inline' because the editor (CodeMirror) sets element styles at run time;
// no style can run script.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; " +
	"font-src 'self'; connect-src 'self'; object-src 'none'; frame-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

var files = func() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err)
	}
	return sub
}()

// Index returns index.html of the build (a page saying the UI is not built when dist/ holds none).
func Index() []byte {
	b, err := fs.ReadFile(files, "index.html")
	if err != nil {
		return []byte(notBuilt)
	}
	return b
}

const notBuilt = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>sdods</title></head>` +
	`<body><main><h1>sdods</h1><p>This binary was built without the web UI: run <code>make webui</code> and build again. The API answers under <a href="/api/health">/api</a>.</p></main></body></html>`

// WriteIndex answers with index.html and the page's headers; r, when given, lets it answer a
// conditional or HEAD request.
func WriteIndex(w http.ResponseWriter, r *http.Request) {
	b := Index()
	h := w.Header()
	setPageHeaders(h)
	h.Set("Content-Type", "text/html; charset=utf-8")
	// Revalidate on every load: the page names the hashed assets of this build.
	h.Set("Cache-Control", "no-cache")
	if r == nil {
		h.Set("Content-Length", strconv.Itoa(len(b)))
		_, _ = w.Write(b)
		return
	}
	http.ServeContent(w, r, "index.html", time.Time{}, bytes.NewReader(b))
}

func setPageHeaders(h http.Header) {
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
}

// reserved are the path prefixes the API document owns; the web UI never answers under them.
var reserved = []string{"/api/", "/mcp", "/metrics", "/reports/", "/trace"}

// owns reports whether a request is the web UI's: a GET or HEAD outside the reserved prefixes,
// other than GET / itself (which the API document describes as getWebUi and the API serves; the
// document has no HEAD, so HEAD / is answered here).
func owns(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	p := r.URL.Path
	if p == "/" {
		return r.Method == http.MethodHead
	}
	if p == "/api" {
		return false
	}
	for _, pre := range reserved {
		if strings.HasPrefix(p, pre) {
			return false
		}
	}
	return true
}

// Wrap returns a handler that serves the web UI's files and client-side routes and passes every
// other request to api.
func Wrap(api http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !owns(r) {
			api.ServeHTTP(w, r)
			return
		}
		serve(w, r)
	})
}

func serve(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(path.Clean(r.URL.Path), "/")
	if name != "" && name != "index.html" {
		if b, err := fs.ReadFile(files, name); err == nil {
			h := w.Header()
			h.Set("X-Content-Type-Options", "nosniff")
			if strings.HasPrefix(name, "assets/") {
				// Content-hashed names: a changed file has a new name.
				h.Set("Cache-Control", "public, max-age=31536000, immutable")
			} else {
				h.Set("Cache-Control", "public, max-age=3600")
			}
			ct := mime.TypeByExtension(path.Ext(name))
			if ct == "" {
				ct = "application/octet-stream"
			}
			h.Set("Content-Type", ct)
			if compressible(ct) {
				h.Add("Vary", "Accept-Encoding")
				if acceptsGzip(r) {
					if gz := gzipped(name, b); gz != nil {
						h.Set("Content-Encoding", "gzip")
						b = gz
					}
				}
			}
			http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(b))
			return
		}
		if strings.HasPrefix(name, "assets/") {
			// A missing asset (an old page after an upgrade) is a plain 404, not the page.
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":{"code":"not_found","message":"the web UI has no file ` + jsonSafe(name) + `","hint":"reload the page: the server may have been upgraded"}}` + "\n"))
			return
		}
	}
	WriteIndex(w, r)
}

func jsonSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '"' || r == '\\' || r < 0x20 {
			return '_'
		}
		return r
	}, s)
}

// gzipCache holds the gzip encoding of each built text file, compressed once on first request
// (the files are embedded and never change while the binary runs). A nil entry marks a file
// whose encoding is no smaller.
var gzipCache sync.Map // name → []byte

func compressible(ct string) bool {
	return strings.HasPrefix(ct, "text/") || strings.Contains(ct, "javascript") ||
		strings.Contains(ct, "json") || strings.Contains(ct, "svg") || strings.Contains(ct, "xml")
}

// acceptsGzip reports whether the request's Accept-Encoding lists gzip with a non-zero weight.
func acceptsGzip(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept-Encoding") {
		for _, part := range strings.Split(v, ",") {
			enc, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			enc = strings.ToLower(strings.TrimSpace(enc))
			if enc != "gzip" && enc != "*" {
				continue
			}
			q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
			if q == "q=0" || q == "q=0.0" || q == "q=0.00" || q == "q=0.000" {
				return false
			}
			return true
		}
	}
	return false
}

// gzipped returns the gzip encoding of the file name with contents b, or nil when it would not be smaller.
func gzipped(name string, b []byte) []byte {
	if v, ok := gzipCache.Load(name); ok {
		return v.([]byte)
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	_, _ = zw.Write(b)
	_ = zw.Close()
	var out []byte
	if buf.Len() < len(b) {
		out = buf.Bytes()
	}
	v, _ := gzipCache.LoadOrStore(name, out)
	return v.([]byte)
}
