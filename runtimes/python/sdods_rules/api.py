"""The library entry points: load, evaluate, evaluate_expression (and RuleSet, compile_source)."""

from __future__ import annotations

from typing import Any, Callable, Mapping, Optional, Union

from .expr import DEFAULT_WORK_LIMIT, Compiler, Context, Diagnostic, EvalError, LoadError, finish
from .jsonio import DupDict, JSONError, find_problem, from_host, parse, pointer_token
from .ruleset import RequestError, RuleSet

__all__ = ["load", "evaluate", "evaluate_expression", "EvalError"]

CustomOperator = Callable[[list[Any]], Any]
JSONText = Union[str, bytes]


def _doc(source: Any, code: str) -> Any:
    if isinstance(source, (bytes, bytearray)):
        source = bytes(source).decode("utf-8", "replace")
    if isinstance(source, str):
        try:
            return parse(source)
        except JSONError as e:
            raise LoadError([Diagnostic(code, "", f"malformed JSON: {e}")]) from None
    return from_host(source)


def load(source: Any, operators: Optional[Mapping[str, CustomOperator]] = None) -> RuleSet:
    """Load a bundle or a manifest: JSON text (str or bytes) or an already parsed document.
    A document with `server` and `client` members is a bundle, anything else a manifest."""
    doc = _doc(source, "BUNDLE_INVALID")
    if isinstance(doc, dict) and ("server" in doc or "client" in doc):
        return RuleSet.from_bundle(doc, operators)
    return RuleSet.from_manifest(doc, operators)


def evaluate(ruleset: RuleSet, request: Any, channel: Optional[str] = None) -> dict[str, Any]:
    """Evaluate one request (a dict or JSON text) against a loaded ruleset."""
    if isinstance(request, (str, bytes, bytearray)):
        try:
            request = parse(request.decode("utf-8", "replace") if not isinstance(request, str) else request)
        except JSONError as e:
            raise RequestError("", f"malformed JSON: {e}") from None
    else:
        request = from_host(request)
    return ruleset.evaluate(request, channel)


def evaluate_expression(
    expression: Any,
    env: Optional[Mapping[str, Any]] = None,
    functions: Optional[Mapping[str, Any]] = None,
    operators: Optional[Mapping[str, CustomOperator]] = None,
    work_limit: int = DEFAULT_WORK_LIMIT,
) -> Any:
    """Load and evaluate one expression (JSON text or a parsed value) in an environment.

    `operators` declares and supplies custom operators. Raises LoadError (every diagnostic),
    RequestError (an environment root nested more than 64 deep or holding a bad number) or
    EvalError (one error)."""
    expr = _doc(expression, "EXPRESSION_INVALID")
    roots = from_host(dict(env or {}))
    if type(env) is DupDict:
        raise RequestError("/" + pointer_token(env.dup), "the environment names a root twice")
    for name in sorted(roots):
        p = find_problem(roots[name], "/" + pointer_token(name), 64)
        if p is not None:
            raise RequestError(p[1], f"environment root {name}: {p[0]}")
    ops = dict(operators or {})
    comp = Compiler(ops.keys(), ops)
    comp.load_functions(from_host(dict(functions)) if functions else None, "/functions", allow_description=False)
    fn, _ = comp.compile(expr, "")
    if comp.diags:
        raise LoadError(comp.diags)
    ctx = Context(roots, work_limit)
    return finish(fn(ctx), ctx)

