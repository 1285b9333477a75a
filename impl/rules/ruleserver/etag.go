package ruleserver

import "strings"

// noneMatch reports whether an If-None-Match field value matches etag (a strong entity tag,
// quoted) as RFC 9110 section 13.1.2 defines it: "*" matches any current representation;
// otherwise the value is a comma-separated list of entity tags, weak (W/"x") or strong ("x"),
// compared by weak comparison (the opaque tags are equal, W/ ignored). Several header lines are
// one list. A value that does not follow the grammar is ignored, as if absent: the client then
// gets the full representation, which is always safe.
func noneMatch(values []string, etag string) bool {
	want := strings.TrimPrefix(etag, "W/")
	matched := false
	for _, v := range values {
		v = strings.Trim(v, " \t")
		if v == "*" {
			matched = true
			continue
		}
		m, ok := scanTags(v, want)
		if !ok {
			return false
		}
		matched = matched || m
	}
	return matched
}

// scanTags walks one list of entity tags; ok is false when the list is malformed.
func scanTags(s, want string) (matched, ok bool) {
	elements := 0
	for {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			return matched, elements > 0
		}
		if s[0] == ',' { // empty list elements are allowed (RFC 9110 section 5.6.1)
			s = s[1:]
			continue
		}
		s = strings.TrimPrefix(s, "W/")
		if s == "" || s[0] != '"' {
			return false, false
		}
		end := 1
		for end < len(s) && s[end] != '"' {
			c := s[end]
			if c != 0x21 && (c < 0x23 || c == 0x7f) { // etagc = %x21 / %x23-7E / obs-text
				return false, false
			}
			end++
		}
		if end == len(s) {
			return false, false
		}
		if s[:end+1] == want {
			matched = true
		}
		elements++
		s = strings.TrimLeft(s[end+1:], " \t")
		if s != "" && s[0] != ',' {
			return false, false
		}
	}
}
