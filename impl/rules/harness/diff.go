package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/sdods/sdods/impl/textclip"
)

// maxDiffs bounds the lines of one case's diff.
const maxDiffs = 12

func decode(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

func sameJSON(a, b json.RawMessage) bool {
	return len(Diff(a, b)) == 0
}

// Diff compares two JSON values as JSON values (numbers by the doubles they denote, object
// members in any order) and returns one line per difference, with the JSON pointer of each.
func Diff(want, got json.RawMessage) []string { return diff(want, got, false) }

// DiffSubset is Diff ignoring object members that want does not name.
func DiffSubset(want, got json.RawMessage) []string { return diff(want, got, true) }

func diff(want, got json.RawMessage, subset bool) []string {
	w, err := decode(want)
	if err != nil {
		return []string{"the expected value is not JSON: " + err.Error()}
	}
	g, err := decode(got)
	if err != nil {
		return []string{"the response is not JSON: " + err.Error()}
	}
	var out []string
	diffValue("", w, g, subset, &out)
	if len(out) > maxDiffs {
		out = append(out[:maxDiffs], fmt.Sprintf("… and %d more differences", len(out)-maxDiffs))
	}
	return out
}

func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return textclip.Clip(string(b), 300)
}

func at(ptr string) string {
	if ptr == "" {
		return "at the top"
	}
	return "at " + ptr
}

func escape(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}

func diffValue(ptr string, w, g any, subset bool, out *[]string) {
	if len(*out) > maxDiffs {
		return
	}
	switch wv := w.(type) {
	case map[string]any:
		gv, ok := g.(map[string]any)
		if !ok {
			*out = append(*out, fmt.Sprintf("%s: expected %s, got %s", at(ptr), show(w), show(g)))
			return
		}
		keys := make([]string, 0, len(wv)+len(gv))
		for k := range wv {
			keys = append(keys, k)
		}
		for k := range gv {
			if _, ok := wv[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := ptr + "/" + escape(k)
			a, inW := wv[k]
			b, inG := gv[k]
			switch {
			case !inG:
				*out = append(*out, fmt.Sprintf("%s: missing, expected %s", at(p), show(a)))
			case !inW && subset:
			case !inW:
				*out = append(*out, fmt.Sprintf("%s: unexpected %s", at(p), show(b)))
			default:
				diffValue(p, a, b, subset, out)
			}
		}
	case []any:
		gv, ok := g.([]any)
		if !ok {
			*out = append(*out, fmt.Sprintf("%s: expected %s, got %s", at(ptr), show(w), show(g)))
			return
		}
		if len(wv) != len(gv) {
			*out = append(*out, fmt.Sprintf("%s: expected %d elements, got %d", at(ptr), len(wv), len(gv)))
		}
		for i := 0; i < len(wv) && i < len(gv); i++ {
			diffValue(ptr+"/"+strconv.Itoa(i), wv[i], gv[i], subset, out)
		}
		for i := len(gv); i < len(wv); i++ {
			*out = append(*out, fmt.Sprintf("%s/%d: missing, expected %s", at(ptr), i, show(wv[i])))
		}
		for i := len(wv); i < len(gv); i++ {
			*out = append(*out, fmt.Sprintf("%s/%d: unexpected %s", at(ptr), i, show(gv[i])))
		}
	case json.Number:
		gv, ok := g.(json.Number)
		if ok {
			a, err1 := strconv.ParseFloat(string(wv), 64)
			b, err2 := strconv.ParseFloat(string(gv), 64)
			if err1 == nil && err2 == nil && a == b {
				return
			}
		}
		*out = append(*out, fmt.Sprintf("%s: expected %s, got %s", at(ptr), show(w), show(g)))
	default:
		if w != g {
			*out = append(*out, fmt.Sprintf("%s: expected %s, got %s", at(ptr), show(w), show(g)))
		}
	}
}
