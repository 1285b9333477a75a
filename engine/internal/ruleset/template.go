package ruleset

import "unicode/utf8"

// Part is one piece of a parsed message template: literal text, or a placeholder when Param.
type Part struct {
	Text  string
	Param bool
}

// CheckTemplate returns the code point offset and description of the first problem of a
// template, or "" when it is well formed. Placeholders are {name} (a letter, then letters,
// digits or '_'); "{{" and "}}" stand for braces.
func CheckTemplate(s string) (int, string) {
	_, off, why := ParseTemplate(s)
	return off, why
}

// ParseTemplate splits a template into parts (see CheckTemplate).
func ParseTemplate(s string) ([]Part, int, string) {
	var parts []Part
	var text []byte
	flush := func() {
		if len(text) > 0 {
			parts = append(parts, Part{Text: string(text)})
			text = text[:0]
		}
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '{' && i+1 < len(s) && s[i+1] == '{':
			text = append(text, '{')
			i += 2
		case c == '}' && i+1 < len(s) && s[i+1] == '}':
			text = append(text, '}')
			i += 2
		case c == '}':
			return nil, utf8.RuneCountInString(s[:i]), "a lone '}' (write '}}')"
		case c == '{':
			j := i + 1
			for j < len(s) && s[j] != '}' {
				j++
			}
			if j >= len(s) {
				return nil, utf8.RuneCountInString(s[:i]), "an unclosed '{' (write '{{' for a brace)"
			}
			name := s[i+1 : j]
			if !validName(name) {
				return nil, utf8.RuneCountInString(s[:i]), "a placeholder must be {name}, a letter followed by letters, digits or '_'"
			}
			flush()
			parts = append(parts, Part{Text: name, Param: true})
			i = j + 1
		default:
			text = append(text, c)
			i++
		}
	}
	flush()
	return parts, 0, ""
}
