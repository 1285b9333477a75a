// Package bundle writes and reads the compiled forms of a ruleset: a manifest (one channel's
// resolved rules with a header) and a bundle (the format version, the ruleset reference and the
// server and client manifests). Everything written goes through RFC 8785 ordering, so a bundle is
// byte-identical across compiles and machines.
package bundle

import (
	"bytes"
	"strings"

	"github.com/sdods/sdods/engine/internal/diag"
	"github.com/sdods/sdods/engine/internal/jcs"
	"github.com/sdods/sdods/engine/internal/jsonv"
	"github.com/sdods/sdods/engine/internal/ruleset"
)

// FormatVersion is the bundle and manifest format this engine writes and reads.
const FormatVersion = 1

// Channels lists the channels of a bundle, in the order they are reported.
var Channels = []string{ruleset.Client, ruleset.Server}

// Ref identifies a compiled ruleset.
type Ref struct{ ID, Version, Checksum string }

func refNode(r Ref) *jsonv.Node {
	return ruleset.Obj("id", ruleset.Str(r.ID), "version", ruleset.Str(r.Version), "checksum", ruleset.Str(r.Checksum))
}

// Manifest returns the manifest of one channel.
func Manifest(rs *ruleset.Ruleset, ref Ref, channel string) *jsonv.Node {
	n := ruleset.Obj("formatVersion", ruleset.Int(FormatVersion), "channel", ruleset.Str(channel),
		"ruleset", refNode(ref), "fieldTypes", rs.FieldTypes())
	n.Members = append(n.Members, rs.Members(channel)...)
	return n
}

// Bundle returns the bundle of a ruleset.
func Bundle(rs *ruleset.Ruleset, ref Ref) *jsonv.Node {
	return ruleset.Obj("formatVersion", ruleset.Int(FormatVersion), "ruleset", refNode(ref),
		ruleset.Server, Manifest(rs, ref, ruleset.Server), ruleset.Client, Manifest(rs, ref, ruleset.Client))
}

// Encode writes a bundle or manifest: RFC 8785 member order and numbers, indented by two spaces,
// with a final newline.
func Encode(n *jsonv.Node) ([]byte, error) { return jcs.Indented(n) }

type reader struct{ diags diag.List }

func (r *reader) errf(ptr, format string, args ...any) {
	r.diags = append(r.diags, diag.Structure(diag.BundleInvalid, ptr, format, args...))
}

// version checks formatVersion; it returns false when the rest must not be read.
func (r *reader) version(n *jsonv.Node, ptr string) bool {
	v := n.Get("formatVersion")
	if v == nil {
		r.errf(ptr, "formatVersion is missing")
		return false
	}
	if v.Kind != jsonv.Number || !isInt(v.Text) {
		r.errf(ptr+"/formatVersion", "formatVersion must be a positive integer")
		return false
	}
	if v.Text != "1" {
		r.diags = append(r.diags, diag.Unsupported(ptr+"/formatVersion", v.Text, FormatVersion))
		return false
	}
	return true
}

func isInt(s string) bool {
	if s == "" || s[0] == '0' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func (r *reader) ref(n *jsonv.Node, ptr string) (Ref, bool) {
	if n == nil || n.Kind != jsonv.Object {
		r.errf(ptr, "ruleset must be an object {id, version, checksum}")
		return Ref{}, false
	}
	var out Ref
	ok := true
	for _, m := range n.Members {
		mp := diag.Pointer(ptr, m.Key)
		var dst *string
		switch m.Key {
		case "id":
			dst = &out.ID
		case "version":
			dst = &out.Version
		case "checksum":
			dst = &out.Checksum
		default:
			r.errf(mp, "unknown member %q in the ruleset reference", m.Key)
			ok = false
			continue
		}
		if *dst != "" {
			r.errf(mp, "member %q appears more than once", m.Key)
			ok = false
			continue
		}
		if m.Value.Kind != jsonv.String || m.Value.Text == "" {
			r.errf(mp, "%s must be a non-empty string", m.Key)
			ok = false
			continue
		}
		*dst = m.Value.Text
	}
	if out.ID == "" || out.Version == "" || out.Checksum == "" {
		if ok {
			r.errf(ptr, "the ruleset reference needs id, version and checksum")
		}
		return out, false
	}
	if !validChecksum(out.Checksum) {
		r.errf(ptr+"/checksum", "checksum must be sha256: followed by 64 lower-case hex digits")
		return out, false
	}
	return out, ok
}

func validChecksum(s string) bool {
	h, ok := strings.CutPrefix(s, "sha256:")
	if !ok || len(h) != 64 {
		return false
	}
	for i := 0; i < len(h); i++ {
		if !(h[i] >= '0' && h[i] <= '9' || h[i] >= 'a' && h[i] <= 'f') {
			return false
		}
	}
	return true
}

// Loaded is one channel read from a manifest.
type Loaded struct {
	Channel string
	Ref     Ref
	Rules   *ruleset.Ruleset
}

// ReadManifest reads a manifest at ptr. Unsupported format versions are BUNDLE_UNSUPPORTED,
// every other structural problem BUNDLE_INVALID; expressions are not compiled here.
func ReadManifest(n *jsonv.Node, ptr string) (*Loaded, diag.List) {
	r := &reader{}
	l := r.manifest(n, ptr)
	return l, r.diags.Sort()
}

func (r *reader) manifest(n *jsonv.Node, ptr string) *Loaded {
	if n == nil || n.Kind != jsonv.Object {
		r.errf(ptr, "a manifest must be a JSON object")
		return nil
	}
	if !r.version(n, ptr) {
		return nil
	}
	l := &Loaded{}
	ch := n.Get("channel")
	if ch == nil || ch.Kind != jsonv.String || (ch.Text != ruleset.Server && ch.Text != ruleset.Client) {
		r.errf(ptr+"/channel", "channel must be \"server\" or \"client\"")
	} else {
		l.Channel = ch.Text
	}
	ref, refOK := r.ref(n.Get("ruleset"), ptr+"/ruleset")
	l.Ref = ref
	rs, ds := ruleset.ParseBody(n, ptr, ruleset.Mode{Code: diag.BundleInvalid, Manifest: true,
		Extra: []string{"formatVersion", "channel", "ruleset", "fieldTypes"}})
	r.diags = append(r.diags, ds...)
	if rs == nil {
		return nil
	}
	rs.ID, rs.Version = ref.ID, ref.Version
	l.Rules = rs
	ft := n.Get("fieldTypes")
	if ft == nil || ft.Kind != jsonv.Object {
		r.errf(ptr+"/fieldTypes", "fieldTypes must be an object")
	} else if dp, key, ok := duplicate(ft, ptr+"/fieldTypes"); ok {
		r.errf(dp, "member %q appears more than once", key)
	} else if len(ds) == 0 {
		a, err1 := jcs.Canonical(ft)
		b, err2 := jcs.Canonical(rs.FieldTypes())
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			r.errf(ptr+"/fieldTypes", "fieldTypes does not match the fieldTypes of the entities")
		}
	}
	if l.Channel != "" {
		for _, ru := range rs.Rules {
			if !ruleset.HasChannel(ru.Channels, l.Channel) {
				r.errf(ru.Ptr+"/channels", "the rule does not belong to channel %s", l.Channel)
			}
		}
		for _, ru := range rs.StateRules {
			if !ruleset.HasChannel(ru.Channels, l.Channel) {
				r.errf(ru.Ptr+"/channels", "the state rule does not belong to channel %s", l.Channel)
			}
		}
	}
	if !refOK || l.Channel == "" {
		return nil
	}
	return l
}

// ReadBundle reads a bundle: its format version first (an unsupported one stops there), then
// the reference and both manifests, which must carry the same reference and their own channel.
func ReadBundle(n *jsonv.Node) (Ref, []*Loaded, diag.List) {
	r := &reader{}
	if n == nil || n.Kind != jsonv.Object {
		r.errf("", "a bundle must be a JSON object")
		return Ref{}, nil, r.diags
	}
	if !r.version(n, "") {
		return Ref{}, nil, r.diags
	}
	seen := map[string]bool{}
	for _, m := range n.Members {
		if seen[m.Key] {
			r.errf(diag.Pointer("", m.Key), "member %q appears more than once", m.Key)
		}
		seen[m.Key] = true
		switch m.Key {
		case "formatVersion", "ruleset", ruleset.Server, ruleset.Client:
		default:
			r.errf(diag.Pointer("", m.Key), "unknown member %q in a bundle", m.Key)
		}
	}
	ref, _ := r.ref(n.Get("ruleset"), "/ruleset")
	var out []*Loaded
	for _, ch := range []string{ruleset.Server, ruleset.Client} {
		mn := n.Get(ch)
		if mn == nil {
			r.errf("", "the bundle lacks the %s manifest", ch)
			continue
		}
		l := r.manifest(mn, "/"+ch)
		if l == nil {
			continue
		}
		if l.Channel != ch {
			r.errf("/"+ch+"/channel", "the %s manifest says channel %s", ch, l.Channel)
		}
		if l.Ref != ref {
			r.errf("/"+ch+"/ruleset", "the %s manifest names a different ruleset than the bundle", ch)
		}
		out = append(out, l)
	}
	if len(r.diags) > 0 {
		return ref, nil, r.diags.Sort()
	}
	return ref, out, nil
}

// duplicate finds the first member named twice inside n, in document order, and returns the
// pointer of its second occurrence (spec/v1/README.md "Members named twice").
func duplicate(n *jsonv.Node, ptr string) (string, string, bool) {
	switch n.Kind {
	case jsonv.Object:
		seen := make(map[string]bool, len(n.Members))
		for _, m := range n.Members {
			mp := diag.Pointer(ptr, m.Key)
			if seen[m.Key] {
				return mp, m.Key, true
			}
			seen[m.Key] = true
			if dp, k, ok := duplicate(m.Value, mp); ok {
				return dp, k, true
			}
		}
	case jsonv.Array:
		for i, it := range n.Items {
			if dp, k, ok := duplicate(it, diag.Index(ptr, i)); ok {
				return dp, k, true
			}
		}
	}
	return "", "", false
}
