// Package redact removes secrets from text before it is stored: not only the plain value, but
// every form a target or a tool commonly echoes it back in: percent-encoded (query and path
// escaping, upper- and lower-case hex), JSON-escaped (with and without HTML escaping, ASCII-only,
// escaped slashes, twice), HTML-escaped, and base64 (of the value, of "user:value", and any
// 3-byte-aligned run inside a longer base64 text such as an Authorization header).
package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"
)

// Mask is what a secret is replaced with.
const Mask = "***"

// minFragmentSecret is the shortest secret whose base64 fragments are searched for inside longer
// base64 text; below it a fragment is too short to tell from chance.
const minFragmentSecret = 6

// Redactor replaces secrets in text. The zero value and nil redact nothing.
type Redactor struct {
	replacer  *strings.Replacer
	fragments []string
}

// New returns a redactor of secrets; users are names a secret may be paired with as
// "user:secret" in HTTP basic authentication (their base64 is redacted too). Empty values are
// ignored.
func New(secrets, users []string) *Redactor {
	seen := map[string]bool{}
	var forms []string
	add := func(f string) {
		if f != "" && !seen[f] {
			seen[f] = true
			forms = append(forms, f)
		}
	}
	var frags []string
	for _, s := range secrets {
		if s == "" {
			continue
		}
		for _, f := range Forms(s) {
			add(f)
		}
		for _, u := range append(slices.Clone(users), secrets...) {
			for _, f := range base64Forms(u + ":" + s) {
				add(f)
			}
		}
		if len(s) >= minFragmentSecret {
			frags = append(frags, fragments(s)...)
		}
	}
	if len(forms) == 0 {
		return &Redactor{}
	}
	// Longest first: at one position the replacer takes the first form that matches.
	slices.SortStableFunc(forms, func(a, b string) int { return len(b) - len(a) })
	pairs := make([]string, 0, 2*len(forms))
	for _, f := range forms {
		pairs = append(pairs, f, Mask)
	}
	slices.SortStableFunc(frags, func(a, b string) int { return len(b) - len(a) })
	return &Redactor{replacer: strings.NewReplacer(pairs...), fragments: slices.Compact(frags)}
}

// String returns s with every form of every secret replaced by Mask.
func (r *Redactor) String(s string) string {
	if r == nil || r.replacer == nil || s == "" {
		return s
	}
	s = r.replacer.Replace(s)
	for _, f := range r.fragments {
		s = maskFragment(s, f)
	}
	return s
}

// Bytes is String for bytes (an attachment); it returns b itself when nothing was replaced.
func (r *Redactor) Bytes(b []byte) []byte {
	if r == nil || r.replacer == nil || len(b) == 0 {
		return b
	}
	out := r.String(string(b))
	if len(out) == len(b) && out == string(b) {
		return b
	}
	return []byte(out)
}

// Forms returns the forms of one secret that are redacted: the value itself and its encodings.
func Forms(s string) []string {
	out := []string{s}
	pct := []string{url.QueryEscape(s), url.PathEscape(s), escapeURIComponent(s, false), escapeURIComponent(s, true)}
	for _, p := range pct {
		out = append(out, p, lowerHex(p), strings.ReplaceAll(p, "+", "%20"))
	}
	for _, j := range jsonForms(s) {
		out = append(out, j, strings.ReplaceAll(j, "/", `\/`))
		out = append(out, jsonForms(j)...)
	}
	h := html.EscapeString(s)
	out = append(out, h, strings.NewReplacer("&#34;", "&quot;", "&#39;", "&#x27;").Replace(h))
	out = append(out, base64Forms(s)...)
	return out
}

func base64Forms(s string) []string {
	b := []byte(s)
	return []string{base64.StdEncoding.EncodeToString(b), base64.RawStdEncoding.EncodeToString(b),
		base64.URLEncoding.EncodeToString(b), base64.RawURLEncoding.EncodeToString(b)}
}

// jsonForms returns s as the inside of a JSON string: as Go writes it (HTML-escaped and not)
// and ASCII-only, as Python writes it (\u00e9, lower- and upper-case hex).
func jsonForms(s string) []string {
	var out []string
	quoted, _ := json.Marshal(s)
	out = append(out, string(quoted[1:len(quoted)-1]))
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	raw := strings.TrimSuffix(buf.String(), "\n")
	raw = raw[1 : len(raw)-1]
	out = append(out, raw)
	for _, f := range []string{out[0], raw} {
		if ascii := asciiJSON(f, "%04x"); ascii != f {
			out = append(out, ascii, asciiJSON(f, "%04X"))
		}
	}
	return out
}

func asciiJSON(s, hexFormat string) string {
	var b strings.Builder
	for _, r := range s {
		if r < utf8.RuneSelf {
			b.WriteRune(r)
			continue
		}
		if r > 0xffff {
			r -= 0x10000
			fmt.Fprintf(&b, `\u`+hexFormat+`\u`+hexFormat, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
			continue
		}
		fmt.Fprintf(&b, `\u`+hexFormat, r)
	}
	return b.String()
}

// escapeURIComponent escapes as JavaScript's encodeURIComponent does (strict: also !'()*).
func escapeURIComponent(s string, strict bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		keep := c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.IndexByte("-_.~", c) >= 0
		if !strict && strings.IndexByte("!'()*", c) >= 0 {
			keep = true
		}
		if keep {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// lowerHex lower-cases the hex digits of each %XX.
func lowerHex(s string) string {
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1], b[i+2] = lower(b[i+1]), lower(b[i+2])
		}
	}
	return string(b)
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'F' {
		return c + 'a' - 'A'
	}
	return c
}

// fragments returns, for each of the three alignments the secret may have inside longer data,
// the base64 of its bytes that fill whole 3-byte groups, in both alphabets: a text holding
// base64 of anything containing the secret holds one of them.
func fragments(s string) []string {
	var out []string
	for skip := 0; skip < 3; skip++ {
		rest := s[skip:]
		rest = rest[:len(rest)/3*3]
		if len(rest) < 3 {
			continue
		}
		out = append(out, base64.RawStdEncoding.EncodeToString([]byte(rest)), base64.RawURLEncoding.EncodeToString([]byte(rest)))
	}
	return out
}

// maskFragment replaces each occurrence of the base64 fragment f with Mask, together with the
// base64 characters of the partial groups on either side, which carry bits of the secret too.
func maskFragment(s, f string) string {
	if !strings.Contains(s, f) {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, f)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		start, end := i, i+len(f)
		for n := 0; n < 4 && start > 0 && isBase64(s[start-1]); n++ {
			start--
		}
		for n := 0; n < 4 && end < len(s) && (isBase64(s[end]) || s[end] == '='); n++ {
			end++
		}
		for end < len(s) && s[end] == '=' {
			end++
		}
		b.WriteString(s[:start])
		b.WriteString(Mask)
		s = s[end:]
	}
}

func isBase64(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_'
}
