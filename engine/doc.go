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
// value (runtime values, environment checks, canonical output), ruleset (the ruleset document
// read and resolved, expressions still JSON), syntax (an expression parsed once into a typed
// tree with pointers, and the one analysis pass over function definitions: call graph, cycles,
// call depth, roots read, custom operators), machine (one parsed expression: scopes, functions
// and the 45 core operators compiled into closures through named optimisation passes, and the
// Machine that runs them with its budget and memoized paths) and rules (one ruleset: its rules,
// state rules, type bindings and messages compiled into a Program over machine programs, and the
// evaluation of a request). The layers run from the bottom up: ruleset reads, syntax parses and
// analyses, machine compiles and runs expressions, rules compiles and runs rulesets, and this
// package is the public API over them. docs/engine-internals.md walks through the pipeline.
package engine
