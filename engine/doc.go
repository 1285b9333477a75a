// Package engine is the sdods rule engine: rulesets compiled once into bundles and a portable
// expression language, evaluated with the standard library only.
//
// The expression language (spec/v1/expressions.md) is compiled once by CompileExpression or a
// Compiler into an Expression, a tree of closures that is safe for concurrent use; Evaluate runs
// it against an environment of roots (data, original, actor, ctx, ...). Every load problem is a
// Diagnostic with a stable code and a JSON pointer, and a load reports all of them (Diagnostics);
// an evaluation fails with one *Diagnostic.
//
// The pipeline lives in internal packages: diag (the diagnostic type, codes and all wording),
// jsonv (JSON with member order and duplicates kept), num (the number model), date (dates),
// value (runtime values, environment checks, canonical output) and compile (forms, scopes,
// functions and the 45 core operators).
package engine
