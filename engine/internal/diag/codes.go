package diag

// Load codes: a document carrying any of these does not load. Every diagnostic of one load is
// reported together.
const (
	ExpressionInvalid  = "EXPRESSION_INVALID"   // not one of the expression forms, malformed JSON, duplicate member
	VariableInvalid    = "VARIABLE_INVALID"     // a variable path that is not a valid path
	OperatorUnknown    = "OPERATOR_UNKNOWN"     // neither a core operator nor an x- name
	OperatorArity      = "OPERATOR_ARITY"       // wrong number of arguments for an operator
	OperatorUndeclared = "OPERATOR_UNDECLARED"  // an x- operator used but not declared
	NumberOutOfRange   = "NUMBER_OUT_OF_RANGE"  // a number literal beyond the range of a double
	ExpressionTooDeep  = "EXPRESSION_TOO_DEEP"  // nesting deeper than 128
	PatternNotPortable = "PATTERN_NOT_PORTABLE" // a constant matches pattern outside the portable subset
	FunctionUnknown    = "FUNCTION_UNKNOWN"     // {fn} names no function in scope
	FunctionArity      = "FUNCTION_ARITY"       // wrong number of arguments for a function
	FunctionRecursive  = "FUNCTION_RECURSIVE"   // a function that reaches itself through calls
	FunctionRedefined  = "FUNCTION_REDEFINED"   // a function name defined twice
	FunctionInvalid    = "FUNCTION_INVALID"     // a malformed function definition
)

// Request codes: the input is refused before anything is evaluated.
const (
	BadRequest = "BAD_REQUEST"
)

// Evaluation codes: the expression was loaded but this evaluation failed; the rule layer turns
// any of them into a failed (fail-closed) rule.
const (
	EvaluationError     = "EVALUATION_ERROR"     // type mismatch, invalid date, number out of range, subject too long, ...
	EvaluationLimit     = "EVALUATION_LIMIT"     // the work budget of one evaluation was exhausted
	OperatorUnavailable = "OPERATOR_UNAVAILABLE" // a declared custom operator the host did not supply
	OperatorFailed      = "OPERATOR_FAILED"      // a custom operator returned an error or panicked
	Internal            = "INTERNAL"             // a defect in the engine, recovered at the boundary
)

// Codes lists every code above, for documentation tests.
var Codes = []string{
	ExpressionInvalid, VariableInvalid, OperatorUnknown, OperatorArity, OperatorUndeclared,
	NumberOutOfRange, ExpressionTooDeep, PatternNotPortable, FunctionUnknown, FunctionArity,
	FunctionRecursive, FunctionRedefined, FunctionInvalid, BadRequest, EvaluationError,
	EvaluationLimit, OperatorUnavailable, OperatorFailed, Internal,
}
