package diag

import (
	"fmt"
	"strings"
)

// Every message the engine writes is built here, so wording stays consistent and reviewable in
// one file. Messages name the offending value or operator; they never echo host data at length.

func newf(code, ptr, format string, args ...any) *Diagnostic {
	return &Diagnostic{Code: code, Pointer: ptr, Message: fmt.Sprintf(format, args...)}
}

// --- load: JSON and forms ---

// MalformedJSON reports JSON text that does not parse.
func MalformedJSON(ptr string, err error) *Diagnostic {
	return newf(ExpressionInvalid, ptr, "malformed JSON: %v", err)
}

// DuplicateMember reports an object that names a member twice.
func DuplicateMember(ptr, key string) *Diagnostic {
	return newf(ExpressionInvalid, ptr, "member %q appears more than once", key)
}

// NotAnExpression reports an object that is none of {var}, {op, args}, {fn, args}.
func NotAnExpression(ptr string, keys []string) *Diagnostic {
	return newf(ExpressionInvalid, ptr, "an object expression must be exactly {var}, {op, args} or {fn, args}; found members [%s]", strings.Join(keys, ", "))
}

// MemberType reports a form member of the wrong JSON type.
func MemberType(ptr, member, want string) *Diagnostic {
	return newf(ExpressionInvalid, ptr, "member %q must be %s", member, want)
}

// LiteralRequired reports an operator argument that must be a literal of a given kind.
func LiteralRequired(ptr, op string, i int, want string) *Diagnostic {
	return newf(ExpressionInvalid, ptr, "argument %d of %s must be %s", i+1, op, want)
}

// BadVariable reports a malformed variable path.
func BadVariable(ptr, path, why string) *Diagnostic {
	return newf(VariableInvalid, ptr, "variable path %q: %s", path, why)
}

// UnknownOperator reports an op name that is neither core nor custom.
func UnknownOperator(ptr, name string) *Diagnostic {
	return newf(OperatorUnknown, ptr, "unknown operator %q (custom operators are named x-...)", name)
}

// Arity reports a wrong argument count for an operator.
func Arity(ptr, name string, got int, want string) *Diagnostic {
	return newf(OperatorArity, ptr, "operator %s takes %s, got %d", name, want, got)
}

// Undeclared reports a custom operator used without a declaration.
func Undeclared(ptr, name string) *Diagnostic {
	return newf(OperatorUndeclared, ptr, "custom operator %q is not declared", name)
}

// LiteralOutOfRange reports a number literal beyond the range of a double.
func LiteralOutOfRange(ptr, text string) *Diagnostic {
	return newf(NumberOutOfRange, ptr, "number %s is beyond the range of a double", clip(text))
}

// TooDeep reports nesting beyond the limit.
func TooDeep(ptr string, limit int) *Diagnostic {
	return newf(ExpressionTooDeep, ptr, "expression nested deeper than %d", limit)
}

// CallsTooDeep reports a chain of nested function calls beyond the limit.
func CallsTooDeep(ptr string, limit int) *Diagnostic {
	return newf(ExpressionTooDeep, ptr, "function calls nested more than %d deep", limit)
}

// PatternRefused reports a constant pattern outside the portable subset; offset is the code
// point offset in the pattern where the problem is.
func PatternRefused(ptr string, offset int, msg string) *Diagnostic {
	return newf(PatternNotPortable, ptr, "pattern not portable at offset %d: %s", offset, msg)
}

// DynamicPatternRefused reports a computed pattern outside the portable subset.
func DynamicPatternRefused(ptr string, offset int, msg string) *Diagnostic {
	return newf(EvaluationError, ptr, "matches: pattern not portable at offset %d: %s", offset, msg)
}

// --- load: functions ---

// UnknownFunction reports a call of a function that is not defined.
func UnknownFunction(ptr, name string) *Diagnostic {
	return newf(FunctionUnknown, ptr, "unknown function %q", name)
}

// FunctionArgs reports a call with the wrong number of arguments.
func FunctionArgs(ptr, name string, got, want int) *Diagnostic {
	return newf(FunctionArity, ptr, "function %s takes %d argument(s), got %d", name, want, got)
}

// Recursive reports a function that reaches itself.
func Recursive(ptr string, cycle []string) *Diagnostic {
	return newf(FunctionRecursive, ptr, "recursive function: %s", strings.Join(cycle, " -> "))
}

// Redefined reports a function defined twice.
func Redefined(ptr, name string) *Diagnostic {
	return newf(FunctionRedefined, ptr, "function %q is defined more than once", name)
}

// BadFunction reports a malformed function definition.
func BadFunction(ptr, name, why string) *Diagnostic {
	return newf(FunctionInvalid, ptr, "function %q: %s", name, why)
}

// --- request ---

// EnvTooDeep reports an environment root nested beyond the limit.
func EnvTooDeep(root string, limit int) *Diagnostic {
	return newf(BadRequest, Pointer("", root), "%s is nested more than %d deep", root, limit)
}

// EnvValue reports a value that is not JSON (or a number beyond double range) in the environment.
func EnvValue(ptr, why string) *Diagnostic {
	return newf(BadRequest, ptr, "%s", why)
}

// --- evaluation ---

// TypeMismatch reports an operand of the wrong type. The diagnostic may be one made before for
// the same arguments, shared (see shared).
func TypeMismatch(ptr, op string, i int, want, got string) *Diagnostic {
	return shared(sharedKey{kind: kindType, ptr: ptr, op: op, i: i, a: want, b: got})
}

// ArgumentInvalid reports an argument that has the right type but is not valid: "op: argument
// i+1: why". The diagnostic may be one made before for the same arguments, shared (see shared).
func ArgumentInvalid(ptr, op string, i int, why string) *Diagnostic {
	return shared(sharedKey{kind: kindArgument, ptr: ptr, op: op, i: i, a: why})
}

// Eval reports any other evaluation failure of a core operator.
func Eval(ptr, op, why string) *Diagnostic {
	return &Diagnostic{Code: EvaluationError, Pointer: ptr, Message: op + ": " + why}
}

// ResultOutOfRange reports a number beyond the range of a double on its way out.
func ResultOutOfRange(ptr string) *Diagnostic {
	return &Diagnostic{Code: EvaluationError, Pointer: ptr, Message: "number result is beyond the range of a double"}
}

// Budget reports an evaluation that exceeded its work budget. The diagnostic may be one made
// before for the same arguments, shared (see shared).
func Budget(ptr string, limit int64) *Diagnostic {
	return shared(sharedKey{kind: kindBudget, ptr: ptr, n: limit})
}

// Unavailable reports a declared custom operator the host did not supply.
func Unavailable(ptr, name string) *Diagnostic {
	return newf(OperatorUnavailable, ptr, "custom operator %q is not supplied by the host", name)
}

// Failed reports a custom operator that failed.
func Failed(ptr, name string, err any) *Diagnostic {
	return newf(OperatorFailed, ptr, "custom operator %q failed: %v", name, err)
}

// FailedAt reports a custom operator that failed without saying why: the diagnostic an
// evaluation whose errors are read for their codes only shares (see machine.Machine.CodesOnly).
func FailedAt(ptr, name string) *Diagnostic {
	return newf(OperatorFailed, ptr, "custom operator %q failed", name)
}

// Panic reports a defect recovered at the engine boundary.
func Panic(ptr string, v any) *Diagnostic {
	return newf(Internal, ptr, "internal error: %v", v)
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}
