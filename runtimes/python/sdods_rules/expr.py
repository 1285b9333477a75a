"""The expression language of expressions.md and operators.md: load (check and compile into
closures) and evaluation.

A loaded expression is a tree of Python closures, each `f(ctx) -> value`; evaluation never looks
at the JSON again. Values are plain JSON values (None, bool, float, str, list, dict).
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Iterable, Mapping, NamedTuple, Optional

from . import dates, numbers
from .jsonio import DupDict, OutOfRange, pointer_token
from .numbers import NumberRangeError, canonical_text
from .pattern import MAX_SUBJECT, PatternError, compile_pattern

__all__ = [
    "Diagnostic",
    "LoadError",
    "EvalError",
    "Context",
    "Compiler",
    "CORE_ARITY",
    "sort_diagnostics",
    "DEFAULT_WORK_LIMIT",
]

MAX_DEPTH = 128
MAX_CALL_CHAIN = 32
DEFAULT_WORK_LIMIT = 10_000_000

CustomOperator = Callable[[list[Any]], Any]


class Diagnostic(NamedTuple):
    code: str
    pointer: str
    message: str

    def as_json(self) -> dict[str, str]:
        return {"code": self.code, "pointer": self.pointer, "message": self.message}


class LoadError(Exception):
    """A failed load, with every diagnostic sorted by pointer (errors.md)."""

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        self.diagnostics = sort_diagnostics(diagnostics)
        first = self.diagnostics[0]
        super().__init__(f"{first.code} at {first.pointer!r}: {first.message}")
        self.code = first.code
        self.pointer = first.pointer


class EvalError(Exception):
    """An evaluation error: one code, the pointer of the failing application, a message."""

    def __init__(self, code: str, pointer: str, message: str) -> None:
        super().__init__(f"{code} at {pointer!r}: {message}")
        self.code = code
        self.pointer = pointer
        self.message = message


class _OpError(Exception):
    """Raised by an operator body; the application turns it into an EvalError at its pointer."""

    def __init__(self, message: str, code: str = "EVALUATION_ERROR") -> None:
        super().__init__(message)
        self.code = code


def _ptr_key(p: str) -> list[tuple[int, Any]]:
    return [(0, int(t)) if t.isdigit() and t.isascii() else (1, t) for t in p.split("/")[1:]]


def _cmp_ptr(a: Diagnostic, b: Diagnostic) -> int:
    ta = a.pointer.split("/")[1:] if a.pointer else []
    tb = b.pointer.split("/")[1:] if b.pointer else []
    for x, y in zip(ta, tb):
        if x == y:
            continue
        if _is_index(x) and _is_index(y):
            return -1 if int(x) < int(y) else 1
        return -1 if x < y else 1
    return (len(ta) > len(tb)) - (len(ta) < len(tb))


def _is_index(t: str) -> bool:
    return t.isascii() and t.isdigit() and (t == "0" or t[0] != "0")


def sort_diagnostics(ds: Iterable[Diagnostic]) -> list[Diagnostic]:
    """Sorted by pointer, tokens as numbers when both are indexes; stable (errors.md)."""
    return sorted(ds, key=functools.cmp_to_key(_cmp_ptr))


class Context:
    """The state of one evaluation: visible names, the roots (for function bodies), the work
    budget and the custom operators the host supplied."""

    __slots__ = ("vars", "roots", "work", "limit")

    def __init__(self, roots: dict[str, Any], limit: int = DEFAULT_WORK_LIMIT) -> None:
        self.roots = roots
        self.vars = dict(roots)
        self.work = 0
        self.limit = limit


def _limit(ptr: str) -> EvalError:
    return EvalError("EVALUATION_LIMIT", ptr, "the evaluation exceeded its work budget")


# ---- values -------------------------------------------------------------------------------------

_TYPE_NAMES = {type(None): "null", bool: "boolean", float: "number", str: "string", list: "array", dict: "object"}


def type_name(v: Any) -> str:
    return _TYPE_NAMES.get(type(v), "object")


def deep_equal(a: Any, b: Any, ctx: Optional[Context] = None) -> bool:
    """Same JSON type and equal value; numbers by their doubles (operators.md `==`)."""
    ta = type(a)
    if ta is not type(b):
        return False
    if ta is list:
        if len(a) != len(b):
            return False
        if ctx is not None:
            ctx.work += len(a)
        for x, y in zip(a, b):
            if not deep_equal(x, y, ctx):
                return False
        return True
    if ta is dict:
        if len(a) != len(b):
            return False
        if ctx is not None:
            ctx.work += len(a)
        for k, x in a.items():
            if k not in b or not deep_equal(x, b[k], ctx):
                return False
        return True
    return bool(a == b)


def tree_size(v: Any, cap: int) -> int:
    """Values in v counted as a tree, strings one per 64 bytes; stops counting past cap."""
    t = type(v)
    if t is str:
        return 1 + (len(v) >> 6)
    if t is list:
        n = 1
        for e in v:
            n += tree_size(e, cap - n)
            if n > cap:
                return n
        return n
    if t is dict:
        n = 1
        for k, e in v.items():
            n += tree_size(e, cap - n) + (len(k) >> 6)
            if n > cap:
                return n
        return n
    return 1


def to_json_value(v: Any) -> Any:
    """A host value as a JSON value of this engine; ValueError when it is not one."""
    t = type(v)
    if v is None or t is bool or t is str:
        return v
    if t is float:
        if v != v or v in (float("inf"), float("-inf")):
            raise ValueError("not a finite number")
        return v + 0.0
    if t is int:
        f = float(v)
        if f in (float("inf"), float("-inf")):
            raise ValueError("number beyond double range")
        return f + 0.0
    if t is list or t is tuple:
        return [to_json_value(e) for e in v]
    if isinstance(v, dict):
        out = {}
        for k, e in v.items():
            if type(k) is not str:
                raise ValueError("object member names must be strings")
            out[k] = to_json_value(e)
        return out
    raise ValueError(f"{t.__name__} is not a JSON value")


# ---- operators ----------------------------------------------------------------------------------
#
# The null rule lives here and nowhere else. For an operator listed in NULL_RULE, when an
# argument value is null the result is NULL_RULE[op] (every argument having been evaluated, left
# to right). Which wins when one argument is null and another has the wrong type is
# NULL_PRECEDENCE[op]:
#   NULL_FIRST  null wins: the other arguments are not checked (operators.md's wording);
#   TYPE_FIRST  the first non-null argument of the wrong type (or an invalid date) is a type
#               mismatch; only when there is none is the result null. This is what the reference
#               engine and the conformance suite do for these operators (see the README's gaps).
# Operators absent from NULL_RULE see null themselves (==, typeOf, isEmpty, isDate, contains/in,
# logic, iteration; matches reads its pattern first, see _matches).

_NULL = object()  # marks "no null rule"
NULL_FIRST, TYPE_FIRST = "null-first", "type-first"
NULL_RULE: dict[str, Any] = {
    "<": False, "<=": False, ">": False, ">=": False, "between": False,
    "+": None, "-": None, "*": None, "/": None, "mod": None, "abs": None, "round": None,
    "min": None, "max": None, "sum": None,
    "upper": None, "lower": None, "trim": None, "concat": None, "substring": None, "text": None,
    "startsWith": False, "endsWith": False, "matches": False, "length": None,
    "yearsBetween": None, "daysBetween": None, "dateAdd": None,
}  # fmt: skip
# The operators where a type mismatch would win over null: none. spec/v1/operators.md, "Null
# arguments", makes null decide before types are checked for every strict operator; the switch
# stays so that the precedence is one place, should the spec ever name an exception.
TYPE_FIRST_OPS: tuple[str, ...] = ()
NULL_PRECEDENCE: dict[str, str] = {op: NULL_FIRST for op in list(NULL_RULE) + ["contains", "in"]}
NULL_PRECEDENCE.update({op: TYPE_FIRST for op in TYPE_FIRST_OPS})
# Under TYPE_FIRST, matches reads its pattern first (a null pattern is false whatever the subject,
# a mistyped or non-portable pattern an error whatever the subject), and contains/in refuse a
# container that is neither a string nor an array even when the item is null. Under NULL_FIRST,
# a null subject or pattern is false, and a null item in anything but an array is false.


def _check_numbers(op: str, vals: list[Any]) -> None:
    for v in vals:
        if v is not None and type(v) is not float:
            raise _mismatch(op, *vals)


def _check_operands(op: str, vals: list[Any]) -> None:
    _check_numbers(op, vals[0] if len(vals) == 1 and type(vals[0]) is list else vals)


def _check_sum(op: str, vals: list[Any]) -> None:
    a = vals[0]
    if a is not None and type(a) is not list:
        raise _mismatch(op, a)
    if a is not None:
        _check_numbers(op, a)


def _check_strings(op: str, vals: list[Any]) -> None:
    for v in vals:
        if v is not None and type(v) is not str:
            raise _mismatch(op, *vals)


def _check_dates(op: str, vals: list[Any]) -> None:
    for v in vals:
        if v is not None:
            _date(op, v)


# What TYPE_FIRST checks on the non-null arguments before answering null.
_TYPE_CHECK: dict[str, Callable[[str, list[Any]], None]] = {
    "+": _check_numbers, "-": _check_numbers, "*": _check_numbers, "/": _check_numbers,
    "mod": _check_numbers, "abs": _check_numbers, "min": _check_operands, "max": _check_operands,
    "sum": _check_sum, "startsWith": _check_strings, "endsWith": _check_strings,
    "yearsBetween": _check_dates, "daysBetween": _check_dates,
}  # fmt: skip


def _null_answer(op: str, vals: list[Any]) -> Any:
    """The null rule: _NULL when it does not apply to these values, else the result."""
    if op not in NULL_RULE:
        return _NULL
    if op in _NESTED_NULL:
        if not _NESTED_NULL[op](vals):
            return _NULL
    elif None not in vals:
        return _NULL
    if NULL_PRECEDENCE[op] == TYPE_FIRST:
        _TYPE_CHECK[op](op, vals)
    return NULL_RULE[op]


# min, max and sum also answer null for a null operand inside their array.
_NESTED_NULL: dict[str, Callable[[list[Any]], bool]] = {
    "min": lambda v: any(x is None for x in (v[0] if len(v) == 1 and type(v[0]) is list else v)),
    "max": lambda v: any(x is None for x in (v[0] if len(v) == 1 and type(v[0]) is list else v)),
    "sum": lambda v: v[0] is None or (type(v[0]) is list and any(x is None for x in v[0])),
}


def _mismatch(op: str, *vals: Any) -> _OpError:
    return _OpError(f"{op}: type mismatch ({', '.join(type_name(v) for v in vals)})")


def _num(op: str, v: Any) -> float:
    if type(v) is not float:
        raise _mismatch(op, v)
    return v


def _integer(op: str, what: str, v: Any, lo: float, hi: float) -> int:
    if type(v) is not float:
        raise _mismatch(op, v)
    if not v.is_integer():
        raise _OpError(f"{op}: {what} must be an integer, got {canonical_text(v)}")
    if not lo <= v <= hi:
        raise _OpError(f"{op}: {what} out of range")
    return int(v)


def _order(op: str, a: Any, b: Any) -> tuple[Any, Any]:
    ta = type(a)
    if (ta is float or ta is str) and type(b) is ta:
        return a, b
    raise _mismatch(op, a, b)


def op_lt(v: list[Any]) -> bool:
    a, b = _order("<", v[0], v[1])
    return bool(a < b)


def op_le(v: list[Any]) -> bool:
    a, b = _order("<=", v[0], v[1])
    return bool(a <= b)


def op_gt(v: list[Any]) -> bool:
    a, b = _order(">", v[0], v[1])
    return bool(a > b)


def op_ge(v: list[Any]) -> bool:
    a, b = _order(">=", v[0], v[1])
    return bool(a >= b)


def op_between(v: list[Any]) -> bool:
    x, lo, hi = v
    t = type(x)
    if not ((t is float or t is str) and type(lo) is t and type(hi) is t):
        raise _mismatch("between", x, lo, hi)
    return bool(lo <= x <= hi)


def _nums(op: str, v: list[Any]) -> list[float]:
    for x in v:
        if type(x) is not float:
            raise _mismatch(op, *v)
    return v


def op_add(v: list[Any]) -> float:
    return numbers.add(_nums("+", v))


def op_sub(v: list[Any]) -> float:
    _nums("-", v)
    if len(v) == 1:
        return numbers.neg(v[0])
    return numbers.sub(v[0], v[1])


def op_mul(v: list[Any]) -> float:
    return numbers.mul(_nums("*", v))


def op_div(v: list[Any]) -> Optional[float]:
    _nums("/", v)
    return numbers.div(v[0], v[1])


def op_mod(v: list[Any]) -> Optional[float]:
    _nums("mod", v)
    return numbers.mod(v[0], v[1])


def op_abs(v: list[Any]) -> float:
    return abs(_num("abs", v[0])) + 0.0


def _operands(op: str, v: list[Any]) -> list[float]:
    return _nums(op, v[0] if len(v) == 1 and type(v[0]) is list else v)


def op_min(v: list[Any]) -> Optional[float]:
    xs = _operands("min", v)
    return min(xs) if xs else None


def op_max(v: list[Any]) -> Optional[float]:
    xs = _operands("max", v)
    return max(xs) if xs else None


def op_round(v: list[Any]) -> float:
    x = _num("round", v[0])
    places = _integer("round", "places", v[1], -15, 15) if len(v) == 2 else 0
    return numbers.round_places(x, places)


def op_sum(v: list[Any]) -> Optional[float]:
    arr = v[0]
    if type(arr) is not list:
        raise _mismatch("sum", arr)
    return numbers.add(_nums("sum", arr))


_UP = {c: c - 32 for c in range(ord("a"), ord("z") + 1)}
_LOW = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


def _str(op: str, x: Any) -> str:
    if type(x) is not str:
        raise _mismatch(op, x)
    return x


def op_upper(v: list[Any]) -> str:
    s = _str("upper", v[0])
    return s.upper() if s.isascii() else s.translate(_UP)


def op_lower(v: list[Any]) -> str:
    s = _str("lower", v[0])
    return s.lower() if s.isascii() else s.translate(_LOW)


def op_trim(v: list[Any]) -> str:
    return _str("trim", v[0]).strip("\t\n\x0b\x0c\r ")


def op_concat(v: list[Any]) -> Any:
    t = type(v[0])
    if t is str:
        for x in v:
            if type(x) is not str:
                raise _mismatch("concat", *v)
        return "".join(v)
    if t is list:
        out: list[Any] = []
        for x in v:
            if type(x) is not list:
                raise _mismatch("concat", *v)
            out.extend(x)
        return out
    raise _mismatch("concat", *v)


def op_substring(v: list[Any]) -> str:
    s = _str("substring", v[0])
    # The spec bounds neither; the reference engine takes integers up to 1e15 in magnitude.
    start = _integer("substring", "start", v[1], -1e15, 1e15)
    n = len(s)
    if start < 0:
        start = max(n + start, 0)
    if len(v) == 3:
        length = _integer("substring", "length", v[2], 0, 1e15)
        return s[start : start + length]
    return s[start:]


def op_text(v: list[Any]) -> str:
    x = v[0]
    t = type(x)
    if t is str:
        return x
    if t is float:
        return canonical_text(x)
    if t is bool:
        return "true" if x else "false"
    raise _mismatch("text", x)


def op_starts(v: list[Any]) -> bool:
    return _str("startsWith", v[0]).startswith(_str("startsWith", v[1]))


def op_ends(v: list[Any]) -> bool:
    return _str("endsWith", v[0]).endswith(_str("endsWith", v[1]))


def op_length(v: list[Any]) -> float:
    x = v[0]
    t = type(x)
    if t is str or t is list or t is dict:
        return float(len(x))
    raise _mismatch("length", x)


def _contains(op: str, container: Any, item: Any, ctx: Context) -> bool:
    t = type(container)
    if container is None:
        return False
    if item is None and t is not list and NULL_PRECEDENCE[op] == NULL_FIRST:
        return False
    if t is str:
        if item is None:
            return False
        if type(item) is not str:
            raise _mismatch(op, container, item)
        return item in container
    if t is list:
        ti = type(item)
        if ti is float or ti is str or ti is bool:
            for e in container:
                if type(e) is ti and e == item:
                    return True
            ctx.work += len(container)
            return False
        for e in container:
            if deep_equal(e, item, ctx):
                return True
        return False
    raise _mismatch(op, container, item)


def op_typeof(v: list[Any]) -> str:
    return type_name(v[0])


def op_isempty(v: list[Any]) -> bool:
    x = v[0]
    return x is None or ((type(x) is str or type(x) is list or type(x) is dict) and len(x) == 0)


def op_isdate(v: list[Any]) -> bool:
    x = v[0]
    return type(x) is str and dates.parse_date(x) is not None


def _date(op: str, x: Any) -> dates.Instant:
    d = dates.parse_date(_str(op, x))
    if d is None:
        raise _OpError(f"{op}: {x!r} is not a valid date or date-time")
    return d


def op_years(v: list[Any]) -> float:
    _str("yearsBetween", v[0]), _str("yearsBetween", v[1])
    return float(dates.years_between(_date("yearsBetween", v[0]), _date("yearsBetween", v[1])))


def op_days(v: list[Any]) -> float:
    _str("daysBetween", v[0]), _str("daysBetween", v[1])
    return float(dates.days_between(_date("daysBetween", v[0]), _date("daysBetween", v[1])))


def op_dateadd(v: list[Any]) -> str:
    d0, n0, unit = v
    _str("dateAdd", d0)
    if type(n0) is not float or type(unit) is not str:
        raise _mismatch("dateAdd", d0, n0, unit)
    d = _date("dateAdd", d0)
    n = _integer("dateAdd", "amount", n0, -10_000_000, 10_000_000)
    if unit not in ("days", "months", "years"):
        raise _OpError(f"dateAdd: unit must be days, months or years, got {unit!r}")
    r = dates.date_add(d, n, unit)
    if r is None:
        raise _OpError("dateAdd: the result is outside the years 0001-9999")
    return r


# Strict operators: every argument evaluated, the null rule applied, then the body.
_STRICT: dict[str, Callable[[list[Any]], Any]] = {
    "<": op_lt, "<=": op_le, ">": op_gt, ">=": op_ge, "between": op_between,
    "+": op_add, "-": op_sub, "*": op_mul, "/": op_div, "mod": op_mod, "abs": op_abs,
    "min": op_min, "max": op_max, "round": op_round, "sum": op_sum,
    "upper": op_upper, "lower": op_lower, "trim": op_trim, "concat": op_concat,
    "substring": op_substring, "text": op_text, "startsWith": op_starts, "endsWith": op_ends,
    "length": op_length, "typeOf": op_typeof, "isEmpty": op_isempty, "isDate": op_isdate,
    "yearsBetween": op_years, "daysBetween": op_days, "dateAdd": op_dateadd,
}  # fmt: skip

# Arity: (min, max or None for unbounded); `if` is also odd.
CORE_ARITY: dict[str, tuple[int, Optional[int]]] = {
    "==": (2, 2), "!=": (2, 2), "<": (2, 2), "<=": (2, 2), ">": (2, 2), ">=": (2, 2),
    "between": (3, 3), "and": (1, None), "or": (1, None), "not": (1, 1), "if": (3, None),
    "coalesce": (1, None), "+": (2, None), "-": (1, 2), "*": (2, None), "/": (2, 2),
    "mod": (2, 2), "abs": (1, 1), "min": (1, None), "max": (1, None), "round": (1, 2),
    "sum": (1, 1), "upper": (1, 1), "lower": (1, 1), "trim": (1, 1), "concat": (1, None),
    "substring": (2, 3), "text": (1, 1), "startsWith": (2, 2), "endsWith": (2, 2),
    "matches": (2, 2), "length": (1, 1), "contains": (2, 2), "in": (2, 2), "map": (2, 3),
    "filter": (2, 3), "some": (2, 3), "all": (2, 3), "typeOf": (1, 1), "isEmpty": (1, 1),
    "literal": (1, 1), "isDate": (1, 1), "yearsBetween": (2, 2), "daysBetween": (2, 2),
    "dateAdd": (3, 3),
}  # fmt: skip
assert len(CORE_ARITY) == 45

# String arguments cost one unit per 64 bytes (expressions.md §8).
_STRING_COST = {"upper", "lower", "trim", "concat", "startsWith", "endsWith", "substring"}
_ITER = {"map", "filter", "some", "all"}

Fn = Callable[[Context], Any]


def _const(v: Any) -> Fn:
    return lambda ctx: v


class _Compiled(NamedTuple):
    fn: Fn
    const: bool
    value: Any


class _FuncDef:
    __slots__ = ("name", "params", "body", "ptr", "calls", "ops", "valid")

    def __init__(self, name: str, ptr: str) -> None:
        self.name = name
        self.ptr = ptr
        self.params: list[str] = []
        self.body: Optional[Fn] = None
        self.calls: set[str] = set()
        self.ops: set[str] = set()
        self.valid = True


def _valid_name(s: Any) -> bool:
    return type(s) is str and s != "" and "." not in s


class Compiler:
    """Loads expressions and function definitions against declared and supplied operators.

    `declared`: the custom operators the ruleset (or the host) declares; `supplied`: their
    implementations. A declared operator without an implementation fails the evaluation that
    reaches it with OPERATOR_UNAVAILABLE."""

    def __init__(self, declared: Iterable[str] = (), supplied: Optional[Mapping[str, CustomOperator]] = None) -> None:
        self.declared = set(declared)
        self.supplied = dict(supplied or {})
        self.diags: list[Diagnostic] = []
        self.funcs: dict[str, _FuncDef] = {}
        # What the expression being compiled reaches: custom operators and functions.
        self._ops: set[str] = set()
        self._calls: set[str] = set()
        self._consts: list[tuple[bool, Any]] = []

    def error(self, code: str, ptr: str, msg: str) -> None:
        self.diags.append(Diagnostic(code, ptr, msg))

    # ---- functions ----

    def load_functions(self, defs: Any, base: str, allow_description: bool = True) -> None:
        """Check and compile function definitions; `base` is their pointer (`/functions`)."""
        if defs is None:
            return
        if type(defs) is DupDict:
            self.error("FUNCTION_REDEFINED", f"{base}/{pointer_token(defs.dup)}", f"function {defs.dup} defined twice")
        # First declare every name and its parameters, so that bodies may call functions
        # defined after them.
        bodies = []
        for name, d in defs.items():
            fd = self.funcs[name] = _FuncDef(name, f"{base}/{pointer_token(name)}")
            ptr = fd.ptr
            # A malformed definition (any FUNCTION_INVALID below) still defines its name, and
            # calls to it are not checked against it (expressions.md §5): fd.valid is False.
            if not isinstance(d, dict):
                self.error("FUNCTION_INVALID", ptr, "a function definition is an object {params, body}")
                fd.valid = False
                continue
            if type(d) is DupDict:
                # at the second occurrence (spec/v1/README.md "Members named twice")
                self.error("FUNCTION_INVALID", f"{ptr}/{pointer_token(d.dup)}", f"member {d.dup} named twice")
                fd.valid = False
            allowed = ("params", "body", "description") if allow_description else ("params", "body")
            for k in d:
                if k not in allowed:
                    self.error("FUNCTION_INVALID", f"{ptr}/{pointer_token(k)}", f"unknown member {k}")
                    fd.valid = False
            if "params" not in d:  # a function of no parameters writes "params": [] (expressions.md §5)
                self.error("FUNCTION_INVALID", ptr, "params is missing (write [] for none)")
                fd.valid = False
            params = d.get("params", [])
            if type(params) is not list:
                self.error("FUNCTION_INVALID", f"{ptr}/params", "params must be an array of distinct names")
                fd.valid = False
                params = []
            seen: set[str] = set()
            for i, p in enumerate(params):
                if not _valid_name(p) or p in seen:
                    self.error("FUNCTION_INVALID", f"{ptr}/params/{i}", "params must be distinct names without '.'")
                    fd.valid = False
                else:
                    seen.add(p)
            fd.params = [p for p in params if type(p) is str]
            if "body" not in d:
                self.error("FUNCTION_INVALID", ptr, "body missing")
                fd.valid = False
            if "body" in d:
                bodies.append((fd, d["body"]))
        for fd, body in bodies:
            saved = (self._ops, self._calls)
            self._ops, self._calls = set(), set()
            fd.body = self.expr(body, f"{fd.ptr}/body", 1).fn
            fd.ops, fd.calls = self._ops, self._calls
            self._ops, self._calls = saved
        self._check_graph()

    def _check_graph(self) -> None:
        funcs = self.funcs
        # Cycles: a function is recursive when it reaches itself.
        recursive: set[str] = set()
        for name in funcs:
            seen: set[str] = set()
            stack = list(funcs[name].calls)
            while stack:
                g = stack.pop()
                if g == name:
                    recursive.add(name)
                    break
                if g in seen or g not in funcs:
                    continue
                seen.add(g)
                stack.extend(funcs[g].calls)
        for name in recursive:
            self.error("FUNCTION_RECURSIVE", funcs[name].ptr, f"function {name} reaches itself through calls")
        # Chains of nested calls: longest number of functions from each function.
        chain: dict[str, int] = {}

        def length(f: str) -> int:
            if f in chain:
                return chain[f]
            chain[f] = 1  # provisional; cycles are already refused
            best = 0
            for g in funcs[f].calls:
                if g in funcs and g not in recursive:
                    best = max(best, length(g))
            chain[f] = 1 + best
            return chain[f]

        for name in funcs:
            if name not in recursive:
                length(name)
        # Every function that starts a chain longer than 32 is the outermost function of one.
        for f in funcs:
            if f not in recursive and chain.get(f, 0) > MAX_CALL_CHAIN:
                self.error("EXPRESSION_TOO_DEEP", funcs[f].ptr, f"a chain of nested calls from {f} is longer than 32 functions")

    def reached(self, ops: set[str], calls: set[str]) -> set[str]:
        """The custom operators reached directly or through the functions called."""
        out = set(ops)
        seen: set[str] = set()
        stack = list(calls)
        while stack:
            f = stack.pop()
            if f in seen or f not in self.funcs:
                continue
            seen.add(f)
            out |= self.funcs[f].ops
            stack.extend(self.funcs[f].calls)
        return out

    # ---- expressions ----

    def compile(self, node: Any, ptr: str = "") -> tuple[Fn, set[str]]:
        """Compile one top-level expression; returns it and the custom operators it reaches."""
        self._ops, self._calls = set(), set()
        c = self.expr(node, ptr, 1)
        return c.fn, self.reached(self._ops, self._calls)

    def expr(self, node: Any, ptr: str, level: int) -> _Compiled:
        if level > MAX_DEPTH:
            self.error("EXPRESSION_TOO_DEEP", ptr, "expression nested more than 128 deep")
            return _Compiled(_const(None), True, None)
        t = type(node)
        if node is None or t is bool or t is float or t is str:
            return _Compiled(_const(node), True, node)
        if t is OutOfRange:
            self.error("NUMBER_OUT_OF_RANGE", ptr, f"number {node.text} is beyond the range of a double")
            return _Compiled(_const(None), True, None)
        if t is list:
            return self.list_(node, ptr, level)
        if t is dict or t is DupDict:
            if t is DupDict:
                self.error("EXPRESSION_INVALID", ptr, f"member {node.dup} named twice")
                return _Compiled(_const(None), True, None)
            keys = set(node)
            if keys == {"var"}:
                return self.var(node["var"], ptr)
            if keys == {"op", "args"}:
                return self.op(node, ptr, level)
            if keys == {"fn", "args"}:
                return self.call(node, ptr, level)
            self.error("EXPRESSION_INVALID", ptr, "an object expression is exactly {var}, {op, args} or {fn, args}")
            return _Compiled(_const(None), True, None)
        raise TypeError(f"not a JSON value: {t.__name__}")

    def list_(self, node: list[Any], ptr: str, level: int) -> _Compiled:
        items = [self.expr(e, f"{ptr}/{i}", level + 1) for i, e in enumerate(node)]
        if all(c.const for c in items):
            value = [c.value for c in items]
            return _Compiled(_const(value), True, value)
        fns = [c.fn for c in items]
        n = len(fns)

        def build(ctx: Context) -> Any:
            ctx.work += n
            if ctx.work > ctx.limit:
                raise _limit(ptr)
            return [f(ctx) for f in fns]

        return _Compiled(build, False, None)

    def var(self, path: Any, ptr: str) -> _Compiled:
        if type(path) is not str:
            self.error("EXPRESSION_INVALID", f"{ptr}/var", "var must be a string")
            return _Compiled(_const(None), True, None)
        segs = path.split(".")
        if any(s == "" for s in segs):
            self.error("VARIABLE_INVALID", f"{ptr}/var", f"variable path {path!r} has an empty segment")
            return _Compiled(_const(None), True, None)
        root = segs[0]
        steps = [(s, int(s) if s.isascii() and s.isdigit() else -1) for s in segs[1:]]
        if not steps:
            return _Compiled(lambda ctx: ctx.vars.get(root), False, None)
        if len(steps) == 1:
            (s1, i1) = steps[0]

            def read1(ctx: Context) -> Any:
                v: Any = ctx.vars.get(root)
                t = type(v)
                if t is dict:
                    return v.get(s1)
                if t is list and 0 <= i1 < len(v):
                    return v[i1]
                return None

            return _Compiled(read1, False, None)

        def read(ctx: Context) -> Any:
            v: Any = ctx.vars.get(root)
            for s, i in steps:
                t = type(v)
                if t is dict:
                    v = v.get(s)
                elif t is list and 0 <= i < len(v):
                    v = v[i]
                else:
                    return None
            return v

        return _Compiled(read, False, None)

    def call(self, node: dict[str, Any], ptr: str, level: int) -> _Compiled:
        name, args = node["fn"], node["args"]
        ok = True
        if type(name) is not str:
            self.error("EXPRESSION_INVALID", f"{ptr}/fn", "fn must be a string")
            ok = False
        if type(args) is not list:
            self.error("EXPRESSION_INVALID", f"{ptr}/args", "args must be an array")
            return _Compiled(_const(None), True, None)
        argc = [self.expr(a, f"{ptr}/args/{i}", level + 1) for i, a in enumerate(args)]
        if not ok:
            return _Compiled(_const(None), True, None)
        fd = self.funcs.get(name)
        if fd is None:
            self.error("FUNCTION_UNKNOWN", f"{ptr}/fn", f"no function {name}")
            return _Compiled(_const(None), True, None)
        if not fd.valid:
            # A malformed definition: its own FUNCTION_INVALID says what is wrong; the call is
            # not checked against it, but it is an edge of the call graph.
            self._calls.add(name)
            return _Compiled(_const(None), True, None)
        if len(args) != len(fd.params):
            # A call with the wrong number of arguments is not an edge of the call graph: it is
            # reported once, as FUNCTION_ARITY, not also as recursion.
            self.error("FUNCTION_ARITY", f"{ptr}/args", f"{name} takes {len(fd.params)} arguments, got {len(args)}")
            return _Compiled(_const(None), True, None)
        self._calls.add(name)
        fns = [c.fn for c in argc]
        params = fd.params

        pairs = list(zip(params, fns))
        cost = 1 + len(pairs)
        target: _FuncDef = fd

        def invoke(ctx: Context) -> Any:
            # Arguments in the caller's scope, left to right; the body sees the roots and them.
            scope = ctx.roots.copy()
            for p, f in pairs:
                scope[p] = f(ctx)
            ctx.work += cost
            if ctx.work > ctx.limit:
                raise _limit(ptr)
            saved = ctx.vars
            ctx.vars = scope
            try:
                return target.body(ctx)  # type: ignore[misc]
            finally:
                ctx.vars = saved

        return _Compiled(invoke, False, None)

    def op(self, node: dict[str, Any], ptr: str, level: int) -> _Compiled:
        name, args = node["op"], node["args"]
        if type(name) is not str:
            self.error("EXPRESSION_INVALID", f"{ptr}/op", "op must be a string")
            if type(args) is list:
                for i, a in enumerate(args):
                    self.expr(a, f"{ptr}/args/{i}", level + 1)
            return _Compiled(_const(None), True, None)
        if type(args) is not list:
            self.error("EXPRESSION_INVALID", f"{ptr}/args", "args must be an array")
            return _Compiled(_const(None), True, None)
        if name == "literal":
            if len(args) != 1:
                self.error("OPERATOR_ARITY", f"{ptr}/args", "literal takes 1 argument")
                return _Compiled(_const(None), True, None)
            self.check_literal(args[0], f"{ptr}/args/0", level + 1)
            return _Compiled(_const(args[0]), True, args[0])
        arity = CORE_ARITY.get(name)
        custom = arity is None and name.startswith("x-") and len(name) > 2
        if arity is None and not custom:
            self.error("OPERATOR_UNKNOWN", f"{ptr}/op", f"unknown operator {name!r}")
        elif custom and name not in self.declared:
            self.error("OPERATOR_UNDECLARED", f"{ptr}/op", f"custom operator {name} is not declared")
            custom = False
            arity = None
        elif arity is not None:
            lo, hi = arity
            n = len(args)
            if n < lo or (hi is not None and n > hi) or (name == "if" and n % 2 == 0):
                self.error("OPERATOR_ARITY", f"{ptr}/args", f"{name}: wrong number of arguments ({n})")
                arity = None
        bind_name = "it"
        if name in _ITER and len(args) == 3:
            if not _valid_name(args[1]):
                self.error("EXPRESSION_INVALID", f"{ptr}/args/1", f"{name}: the element name must be a string literal name")
                arity = None
            else:
                bind_name = args[1]
        pattern = None
        if name == "matches" and len(args) == 2:
            lit = _string_literal(args[1])
            if lit is not None:
                try:
                    pattern = compile_pattern(lit)
                except PatternError as e:
                    self.error("PATTERN_NOT_PORTABLE", f"{ptr}/args/1", f"pattern not portable: {e.reason} at offset {e.offset}")
                    arity = None
        comp: list[_Compiled] = []
        for i, a in enumerate(args):
            if name in _ITER and len(args) == 3 and i == 1:
                comp.append(_Compiled(_const(a), True, a))
                continue
            comp.append(self.expr(a, f"{ptr}/args/{i}", level + 1))
        if custom:
            self._ops.add(name)
            return _Compiled(self._custom(name, [c.fn for c in comp], ptr), False, None)
        if arity is None:
            return _Compiled(_const(None), True, None)
        fns = [c.fn for c in comp]
        self._consts = [(c.const, c.value) for c in comp]
        return _Compiled(self._core(name, fns, ptr, bind_name, pattern), False, None)

    def check_literal(self, v: Any, ptr: str, level: int) -> None:
        # Every value inside literal counts 1, scalars too (literal(1) has depth 2).
        if level > MAX_DEPTH:
            self.error("EXPRESSION_TOO_DEEP", ptr, "literal nested more than 128 deep")
            return
        t = type(v)
        if t is OutOfRange:
            self.error("NUMBER_OUT_OF_RANGE", ptr, f"number {v.text} is beyond the range of a double")
        elif t is list or t is dict or t is DupDict:
            if t is DupDict:
                self.error("EXPRESSION_INVALID", ptr, f"member {v.dup} named twice")
            if t is list:
                for i, e in enumerate(v):
                    self.check_literal(e, f"{ptr}/{i}", level + 1)
            else:
                for k, e in v.items():
                    self.check_literal(e, f"{ptr}/{pointer_token(k)}", level + 1)

    def _custom(self, name: str, fns: list[Fn], ptr: str) -> Fn:
        impl = self.supplied.get(name)

        def apply(ctx: Context) -> Any:
            # Reaching an operator the host did not supply fails at once, before its arguments
            # are evaluated (as the reference engine does; the text does not order the two).
            if impl is None:
                raise EvalError("OPERATOR_UNAVAILABLE", ptr, f"custom operator {name} is not available")
            vals = [f(ctx) for f in fns]
            ctx.work += 1 + tree_size(vals, ctx.limit - ctx.work)
            if ctx.work > ctx.limit:
                raise _limit(ptr)
            try:
                r = to_json_value(impl(vals))
            except Exception as e:  # the host's code: any failure fails the rule closed
                raise EvalError("OPERATOR_FAILED", ptr, f"custom operator {name} failed: {e}") from None
            ctx.work += tree_size(r, ctx.limit - ctx.work)
            if ctx.work > ctx.limit:
                raise _limit(ptr)
            return r

        return apply

    def _core(self, name: str, fns: list[Fn], ptr: str, bind: str, pattern: Any) -> Fn:
        n = len(fns)
        if name in _STRICT:
            body = _STRICT[name]
            return _strict(name, body, fns, ptr, name in _STRING_COST, self._consts)
        if name == "==" or name == "!=":
            fa, fb = fns
            want = name == "=="

            def eq(ctx: Context) -> bool:
                a = fa(ctx)
                b = fb(ctx)
                ta = type(a)
                if ta is not type(b):
                    return not want
                if ta is str or ta is float or ta is bool or a is None:
                    return (a == b) is want
                ctx.work += 2
                r = deep_equal(a, b, ctx)
                if ctx.work > ctx.limit:
                    raise _limit(ptr)
                return r if want else not r

            return eq
        if name == "contains" or name == "in":
            fa, fb = fns
            swap = name == "in"

            def cont(ctx: Context) -> bool:
                a = fa(ctx)
                b = fb(ctx)
                if swap:
                    a, b = b, a
                ctx.work += 2 + (len(a) >> 6 if type(a) is str else 0)
                try:
                    r = _contains(name, a, b, ctx)
                except _OpError as e:
                    raise EvalError(e.code, ptr, str(e)) from None
                if ctx.work > ctx.limit:
                    raise _limit(ptr)
                return r

            return cont
        if name == "matches":
            return _matches(fns, ptr, pattern)
        if name == "and" or name == "or":
            stop = name == "or"  # `or` stops at true, `and` at false or null

            def logic(ctx: Context) -> bool:
                for f in fns:
                    v = f(ctx)
                    if v is True:
                        if stop:
                            return True
                    elif v is False or v is None:
                        if not stop:
                            return False
                    else:
                        raise EvalError("EVALUATION_ERROR", ptr, f"{name}: a condition must be a boolean or null, got {type_name(v)}")
                return not stop

            return logic
        if name == "not":
            (fa,) = fns

            def not_(ctx: Context) -> bool:
                v = fa(ctx)
                if v is None:
                    return True
                if type(v) is bool:
                    return not v
                raise EvalError("EVALUATION_ERROR", ptr, f"not: a condition must be a boolean or null, got {type_name(v)}")

            return not_
        if name == "if":
            pairs = [(fns[i], fns[i + 1]) for i in range(0, n - 1, 2)]
            other = fns[-1]

            def if_(ctx: Context) -> Any:
                for c, v in pairs:
                    cv = c(ctx)
                    if cv is True:
                        return v(ctx)
                    if cv is not False and cv is not None:
                        raise EvalError("EVALUATION_ERROR", ptr, f"if: a condition must be a boolean or null, got {type_name(cv)}")
                return other(ctx)

            return if_
        if name == "coalesce":

            def coalesce(ctx: Context) -> Any:
                for f in fns:
                    v = f(ctx)
                    if v is not None:
                        return v
                return None

            return coalesce
        if name in _ITER:
            return _iteration(name, fns[0], fns[-1], bind, ptr)
        raise AssertionError(name)


def _string_literal(node: Any) -> Optional[str]:
    """The pattern text of a constant pattern: a JSON string or literal(string)."""
    if type(node) is str:
        return node
    if type(node) is dict and set(node) == {"op", "args"} and node["op"] == "literal":
        a = node["args"]
        if type(a) is list and len(a) == 1 and type(a[0]) is str:
            return a[0]
    return None


_ORDER: dict[str, Callable[[Any, Any], bool]] = {
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
}  # fmt: skip


def _strict(name: str, body: Callable[[list[Any]], Any], fns: list[Fn], ptr: str, strcost: bool,
            consts: list[tuple[bool, Any]]) -> Fn:  # fmt: skip
    """An operator that evaluates every argument, then applies the null rule, then its body."""
    ruled = name in NULL_RULE
    nested = name in _NESTED_NULL
    n = len(fns)

    def run(vals: list[Any]) -> Any:
        try:
            if ruled and (nested or None in vals):
                r = _null_answer(name, vals)
                if r is not _NULL:
                    return r
            return body(vals)
        except _OpError as e:
            raise EvalError(e.code, ptr, str(e)) from None
        except NumberRangeError as e:
            raise EvalError("EVALUATION_ERROR", ptr, str(e)) from None

    if n == 1 and not strcost:
        (fa,) = fns

        def apply1(ctx: Context) -> Any:
            a = fa(ctx)
            if ruled and (nested or a is None):
                return run([a])
            try:
                return body([a])
            except _OpError as e:
                raise EvalError(e.code, ptr, str(e)) from None
            except NumberRangeError as e:
                raise EvalError("EVALUATION_ERROR", ptr, str(e)) from None

        return apply1
    if n == 2 and not strcost:
        fa, fb = fns
        binary = numbers.BINARY.get(name)
        if binary is not None:
            arith: Callable[[float, float], float] = binary
            # + - * on two numbers: straight to the number model (integer fast paths there).
            if consts[1][0] and type(consts[1][1]) is float:
                k = consts[1][1]

                def arith_const(ctx: Context) -> Any:
                    a = fa(ctx)
                    if type(a) is float:
                        try:
                            return arith(a, k)
                        except NumberRangeError as e:
                            raise EvalError("EVALUATION_ERROR", ptr, str(e)) from None
                    return run([a, k])

                return arith_const

            def arith2(ctx: Context) -> Any:
                a = fa(ctx)
                b = fb(ctx)
                if type(a) is float and type(b) is float:
                    try:
                        return arith(a, b)
                    except NumberRangeError as e:
                        raise EvalError("EVALUATION_ERROR", ptr, str(e)) from None
                return run([a, b])

            return arith2
        ordering = _ORDER.get(name)
        if ordering is not None:
            order: Callable[[Any, Any], bool] = ordering
            # <, <=, >, >=: two numbers or two strings compare directly; anything else goes
            # through the null rule and the type check.
            def compare(ctx: Context) -> Any:
                a = fa(ctx)
                b = fb(ctx)
                ta = type(a)
                if ta is type(b) and (ta is float or ta is str):
                    return order(a, b)
                return run([a, b])

            return compare

        def apply2(ctx: Context) -> Any:
            a = fa(ctx)
            b = fb(ctx)
            if ruled and (nested or a is None or b is None):
                return run([a, b])
            try:
                return body([a, b])
            except _OpError as e:
                raise EvalError(e.code, ptr, str(e)) from None
            except NumberRangeError as e:
                raise EvalError("EVALUATION_ERROR", ptr, str(e)) from None

        return apply2

    def apply(ctx: Context) -> Any:
        vals = [f(ctx) for f in fns]
        cost = n
        if strcost:
            for v in vals:
                if type(v) is str:
                    cost += len(v) >> 6
                elif type(v) is list:
                    cost += len(v)
        ctx.work += cost
        if ctx.work > ctx.limit:
            raise _limit(ptr)
        return run(vals)

    return apply


def _matches(fns: list[Fn], ptr: str, pattern: Any) -> Fn:
    fs, fp = fns
    null = NULL_RULE["matches"]

    def matches(ctx: Context) -> Any:
        s = fs(ctx)
        p = fp(ctx)
        if (s is None or p is None) and NULL_PRECEDENCE["matches"] == NULL_FIRST:
            return null
        # The pattern is read first: null answers false whatever the subject, a pattern of the
        # wrong type or outside the subset is an error whatever the subject.
        pat = pattern
        if pat is None:
            if p is None:
                return null
            if type(p) is not str:
                raise EvalError("EVALUATION_ERROR", ptr, f"matches: type mismatch (pattern {type_name(p)})")
            try:
                pat = compile_pattern(p)
            except PatternError as e:
                raise EvalError("EVALUATION_ERROR", ptr, f"matches: pattern not portable: {e.reason} at offset {e.offset}") from None
        if s is None:
            return null
        if type(s) is not str:
            raise EvalError("EVALUATION_ERROR", ptr, f"matches: type mismatch (subject {type_name(s)})")
        if len(s) > MAX_SUBJECT:
            raise EvalError("EVALUATION_ERROR", ptr, "matches: subject longer than 10000 code points")
        ctx.work += 1 + (len(s) >> 6) * max(1, pat.size >> 6)
        if ctx.work > ctx.limit:
            raise _limit(ptr)
        return pat.match(s)

    return matches


def _iteration(name: str, farr: Fn, body: Fn, bind: str, ptr: str) -> Fn:
    on_null = {"map": None, "filter": None, "some": False, "all": False}[name]

    def run(ctx: Context) -> Any:
        arr = farr(ctx)
        if arr is None:
            return on_null
        if type(arr) is not list:
            raise EvalError("EVALUATION_ERROR", ptr, f"{name}: type mismatch ({type_name(arr)})")
        ctx.work += len(arr)
        if ctx.work > ctx.limit:
            raise _limit(ptr)
        scope = ctx.vars
        had = bind in scope
        old = scope.get(bind)
        try:
            if name == "map":
                out = []
                for e in arr:
                    scope[bind] = e
                    out.append(body(ctx))
                return out
            if name == "filter":
                kept = []
                for e in arr:
                    scope[bind] = e
                    c = body(ctx)
                    if c is True:
                        kept.append(e)
                    elif c is not False and c is not None:
                        raise EvalError("EVALUATION_ERROR", ptr, f"filter: a condition must be a boolean or null, got {type_name(c)}")
                return kept
            if name == "some":
                for e in arr:
                    scope[bind] = e
                    c = body(ctx)
                    if c is True:
                        return True
                    if c is not False and c is not None:
                        raise EvalError("EVALUATION_ERROR", ptr, f"some: a condition must be a boolean or null, got {type_name(c)}")
                return False
            for e in arr:  # all
                scope[bind] = e
                c = body(ctx)
                if c is False or c is None:
                    return False
                if c is not True:
                    raise EvalError("EVALUATION_ERROR", ptr, f"all: a condition must be a boolean or null, got {type_name(c)}")
            return True
        finally:
            if had:
                scope[bind] = old
            else:
                scope.pop(bind, None)

    return run


def finish(value: Any, ctx: Context, ptr: str = "") -> Any:
    """The result leaving the engine: counted, and refused when a number cannot be written."""
    ctx.work += tree_size(value, ctx.limit - ctx.work)
    if ctx.work > ctx.limit:
        raise _limit(ptr)
    try:
        _check_out(value)
    except NumberRangeError as e:
        raise EvalError("EVALUATION_ERROR", ptr, str(e)) from None
    return value


def _check_out(v: Any) -> None:
    t = type(v)
    if t is float:
        if v > 1.7976931348623e308 or v < -1.7976931348623e308:
            canonical_text(v)
    elif t is list:
        for e in v:
            _check_out(e)
    elif t is dict:
        for e in v.values():
            _check_out(e)
