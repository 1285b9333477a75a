// Package @sdods/rules: the sdods rule engine for browsers and Node (spec/v1), evaluator and
// compiler, with no run-time dependencies.

export { VERSION, SPEC_VERSION } from "./version.js";
export type { JSONValue, JSONObject } from "./json.js";
export { parseJSON, decodeUTF8, canonicalJSON, indentedJSON, JSONSyntaxError } from "./json.js";
export { jsonFinite } from "./finite.js";
export type { Diagnostic, CustomOperator } from "./expr.js";
export { EvaluationError, suiteOperators, CORE_OPERATORS, DEFAULT_BUDGET, NULL_RESULT, NOT_STRICT } from "./expr.js";
export { Engine } from "./engine-api.js";
export type { ExpressionOptions, LoadedExpression, PreparedEnv } from "./engine-api.js";
export { patternProblem, Pattern, PatternError } from "./pattern.js";
export type { PatternProblem } from "./pattern.js";
export {
  RuleSet, LoadError, ChannelError, RequestError, requestProblem, bundle,
} from "./rules.js";
export type {
  Channel, RulesetRef, Operators, LoadOptions, EvaluationResult, EvaluationRequest, Finding, RequestProblem, CompiledBundle,
} from "./rules.js";
export { ProtocolSession } from "./protocol.js";
export { setCodeGeneration } from "./gen.js";
