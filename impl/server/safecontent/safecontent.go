// Package safecontent decides how content a test brings in (attachments, ingested embeddings,
// response bodies, page snapshots) is stored and served on the API origin: the media type from a
// closed allow-list, and the response headers that keep a browser from executing it.
//
// Everything here is pure: no I/O, so the same rules apply when content is written and again
// when it is served (data stored before the rules existed is served safely too).
package safecontent

import (
	"crypto/sha256"
	"encoding/base64"
	"mime"
	"net/http"
	"regexp"
	"strings"
)

// OctetStream is the type of anything outside the allow-list; it is served as a download.
const OctetStream = "application/octet-stream"

// allowed maps a parsed, lower-cased media type to the type stored and served for it. A type
// absent here becomes OctetStream; textual types a browser would render or execute (HTML, XML,
// SVG, script, CSS) become text/plain, so that a page snapshot stays readable but inert.
var allowed = map[string]string{
	"image/png":            "image/png",
	"image/jpeg":           "image/jpeg",
	"image/jpg":            "image/jpeg",
	"image/pjpeg":          "image/jpeg",
	"image/gif":            "image/gif",
	"image/webp":           "image/webp",
	"video/webm":           "video/webm",
	"video/mp4":            "video/mp4",
	"application/json":     "application/json",
	"application/x-ndjson": "application/x-ndjson",
	"text/plain":           "text/plain",
	"application/zip":      "application/zip",
	"application/gzip":     "application/gzip",
	"application/x-gzip":   "application/gzip",
	OctetStream:            OctetStream,

	"text/html":              "text/plain",
	"application/xhtml+xml":  "text/plain",
	"text/xml":               "text/plain",
	"application/xml":        "text/plain",
	"image/svg+xml":          "text/plain",
	"text/csv":               "text/plain",
	"text/markdown":          "text/plain",
	"text/css":               "text/plain",
	"text/javascript":        "text/plain",
	"application/javascript": "text/plain",
	"application/x-yaml":     "text/plain",
	"application/yaml":       "text/plain",
	"text/yaml":              "text/plain",
	"text/x-log":             "text/plain",
}

// Parse returns the lower-cased type/subtype of a media type, or "" when it does not parse as
// exactly one media type ("video/x,text/html" does not).
func Parse(raw string) string {
	mt, _, err := mime.ParseMediaType(raw)
	if err != nil || strings.Count(mt, "/") != 1 {
		return ""
	}
	return mt
}

// MediaType returns the media type to store and serve for raw: a member of the allow-list, or
// OctetStream. It is idempotent, so stored types can be passed through it again when served.
func MediaType(raw string) string {
	mt := Parse(raw)
	if t, ok := allowed[mt]; ok {
		return t
	}
	switch {
	case strings.HasSuffix(mt, "+json"):
		return "application/json"
	case strings.HasSuffix(mt, "+xml"), strings.HasPrefix(mt, "text/"):
		return "text/plain"
	}
	return OctetStream
}

// IsHTML reports whether raw names HTML (before MediaType made it text/plain): such an
// attachment is a page snapshot.
func IsHTML(raw string) bool {
	mt := Parse(raw)
	return mt == "text/html" || mt == "application/xhtml+xml"
}

// IsImage reports whether the stored type t is a raster image a page may show inline.
func IsImage(t string) bool {
	switch MediaType(t) {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return true
	}
	return false
}

// ContentType is the Content-Type header for content stored with media type t.
func ContentType(t string) string {
	mt := MediaType(t)
	if mt == "text/plain" {
		return "text/plain; charset=utf-8"
	}
	return mt
}

// Download reports whether content of type t is served with Content-Disposition: attachment.
func Download(t string) bool {
	switch MediaType(t) {
	case OctetStream, "application/zip", "application/gzip":
		return true
	}
	return false
}

// ArtifactCSP sandboxes a file a test brought in, should a browser open it: no script, no
// plugin, no form, no style, an opaque origin; images and media may show themselves.
const ArtifactCSP = "default-src 'none'; img-src 'self'; media-src 'self'; sandbox"

// SetArtifactHeaders sets the headers of a response carrying a file a test brought in, stored
// with media type t under name (used for the download's file name).
func SetArtifactHeaders(h http.Header, t, name string) {
	setCommon(h)
	h.Set("Content-Security-Policy", ArtifactCSP)
	if Download(t) {
		h.Set("Content-Disposition", Disposition(name))
	}
}

// SetPageHeaders sets the headers of one of the server's own pages that shows test data (the
// HTML report, the trace viewer): csp allows only the page's own inline script and style.
func SetPageHeaders(h http.Header, csp string) {
	setCommon(h)
	h.Set("Content-Security-Policy", csp)
}

func setCommon(h http.Header) {
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Referrer-Policy", "no-referrer")
}

// Disposition is an attachment Content-Disposition with name as the file name when it is one.
func Disposition(name string) string {
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '/' || r == '\\' || r == '"' {
			return '_'
		}
		return r
	}, name)
	if name == "" {
		return "attachment"
	}
	if v := mime.FormatMediaType("attachment", map[string]string{"filename": name}); v != "" {
		return v
	}
	return "attachment"
}

var inlineBlock = regexp.MustCompile(`(?s)<(script|style)>(.*?)</(?:script|style)>`)

// PageCSP returns a Content-Security-Policy for a page whose only script and style are the
// inline blocks of the static source src (an embedded file or template, never rendered output,
// so that nothing a test wrote can be allowed by hash). extra adds directives, e.g. what the
// page may fetch.
func PageCSP(src string, extra ...string) string {
	var scripts, styles []string
	for _, m := range inlineBlock.FindAllStringSubmatch(src, -1) {
		sum := sha256.Sum256([]byte(m[2]))
		h := "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
		if m[1] == "script" {
			scripts = append(scripts, h)
		} else {
			styles = append(styles, h)
		}
	}
	d := []string{"default-src 'none'"}
	if len(scripts) > 0 {
		d = append(d, "script-src "+strings.Join(scripts, " "))
	}
	if len(styles) > 0 {
		d = append(d, "style-src "+strings.Join(styles, " "))
	}
	d = append(d, "base-uri 'none'", "form-action 'none'")
	d = append(d, extra...)
	return strings.Join(d, "; ")
}

// Kind classifies an attachment of media type raw (as given) and file name for the API's
// attachment kinds: screenshot, video, har, dom (a page snapshot), log or other.
func Kind(raw, name string) string {
	t := MediaType(raw)
	switch {
	case strings.HasPrefix(t, "image/"):
		return "screenshot"
	case strings.HasPrefix(t, "video/"):
		return "video"
	case strings.HasSuffix(name, ".har"):
		return "har"
	case IsHTML(raw):
		return "dom"
	case t == "text/plain":
		return "log"
	}
	return "other"
}
