package ruleserver

// rulesetMember returns the value of the top-level "ruleset" member of a JSON object without
// decoding the rest: it reads member names and skips values. ok is false whenever the answer
// could differ from a full decode's — malformed text it notices, a member name or ruleset value
// with escapes or bytes outside printable ASCII, a ruleset that is not a string or is empty, a
// second ruleset member, or none — so that the caller takes the full path, whose answers (errors
// included) are the reference. It does not validate values; the full decode does that.
func rulesetMember(b []byte) (id string, ok bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return "", false
	}
	i = skipSpace(b, i+1)
	found := false
	for {
		name, j, ok := plainString(b, i)
		if !ok {
			return "", false
		}
		i = skipSpace(b, j)
		if i >= len(b) || b[i] != ':' {
			return "", false
		}
		i = skipSpace(b, i+1)
		if string(name) == "ruleset" {
			if found {
				return "", false
			}
			v, j, ok := plainString(b, i)
			if !ok || len(v) == 0 {
				return "", false
			}
			id, found, i = string(v), true, j
		} else if i = skipValue(b, i); i < 0 {
			return "", false
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return "", false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return id, found
		default:
			return "", false
		}
	}
}

// plainString reads the string at b[i] when it has no escapes and only printable ASCII, and
// returns its contents and the index after its closing quote.
func plainString(b []byte, i int) (s []byte, next int, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, 0, false
	}
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return b[i+1 : j], j + 1, true
		case c == '\\' || c < 0x20 || c >= 0x7f:
			return nil, 0, false
		}
	}
	return nil, 0, false
}

// skipValue returns the index after the value at b[i], or -1 when the text ends first. Nesting
// is counted, not recursed into, so depth costs nothing here.
func skipValue(b []byte, i int) int {
	depth := 0
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
			if i >= len(b) {
				return -1
			}
			if depth == 0 {
				return i + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i // a scalar ended by its container
			}
			if depth--; depth == 0 {
				return i + 1
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i
			}
		}
	}
	if depth == 0 {
		return i
	}
	return -1
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}
