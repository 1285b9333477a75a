package diag

import "fmt"

// Ruleset codes: the ruleset, bundle and manifest layer (spec/v1/ruleset.md). A document carrying
// any load code does not load.
const (
	RulesetInvalid     = "RULESET_INVALID"     // a member missing, of the wrong type, unknown or duplicated
	TypeUnknown        = "TYPE_UNKNOWN"        // a semantic type (or a type's base) that is not declared
	ScopeInvalid       = "SCOPE_INVALID"       // a scope that is not a level, or names a level the target lacks
	FieldTypeRebound   = "FIELD_TYPE_REBOUND"  // one field bound to a type more than once
	BundleUnsupported  = "BUNDLE_UNSUPPORTED"  // a bundle or manifest whose formatVersion this engine does not read
	BundleInvalid      = "BUNDLE_INVALID"      // a malformed bundle or manifest
	ChannelUnavailable = "CHANNEL_UNAVAILABLE" // a channel the loaded ruleset lacks
	RuleFailed         = "RULE_FAILED"         // reserved finding code of a rule that failed closed
)

// RulesetCodes lists the codes above, for documentation tests.
var RulesetCodes = []string{
	RulesetInvalid, TypeUnknown, ScopeInvalid, FieldTypeRebound, BundleUnsupported, BundleInvalid,
	ChannelUnavailable, RuleFailed,
}

// Structure reports a structural problem of a ruleset (RULESET_INVALID) or, when code says so,
// of a bundle or manifest (BUNDLE_INVALID).
func Structure(code, ptr, format string, args ...any) *Diagnostic {
	return newf(code, ptr, format, args...)
}

// UnknownType reports a reference to a type that is not declared.
func UnknownType(ptr, name string) *Diagnostic {
	return newf(TypeUnknown, ptr, "type %q is not declared", name)
}

// UnknownBase reports a type whose base is not one of the JSON kinds.
func UnknownBase(ptr, name string) *Diagnostic {
	return newf(TypeUnknown, ptr, "base %q is not one of string, number, integer, boolean, date, datetime, object, array", name)
}

// BadScope reports a scope that is not a level.
func BadScope(ptr, scope string) *Diagnostic {
	return newf(ScopeInvalid, ptr, "scope %q is not one of project, module, page, screen, section, component", scope)
}

// ScopeNotInTarget reports a location scope whose level the target does not name.
func ScopeNotInTarget(ptr, scope string) *Diagnostic {
	return newf(ScopeInvalid, ptr, "scope %q needs the target to name a %s", scope, scope)
}

// Rebound reports a field bound to a type more than once.
func Rebound(ptr, field, first string) *Diagnostic {
	return newf(FieldTypeRebound, ptr, "field %s is already bound to a type at %s", field, first)
}

// Unsupported reports a bundle or manifest format this engine does not read.
func Unsupported(ptr string, got string, want int) *Diagnostic {
	return newf(BundleUnsupported, ptr, "formatVersion %s is not supported (this engine reads %d)", got, want)
}

// NoChannel reports a channel the ruleset lacks.
func NoChannel(channel string, have []string) *Diagnostic {
	return newf(ChannelUnavailable, "", "channel %q is not available (the ruleset has %v)", channel, have)
}

// Request reports a request that fails the shape check.
func Request(ptr, format string, args ...any) *Diagnostic {
	return &Diagnostic{Code: BadRequest, Pointer: ptr, Message: fmt.Sprintf(format, args...)}
}
