"""Strict JSON reading and canonical writing (RFC 8259 in, RFC 8785 out).

Values are plain Python: None, bool, float (every number, numbers.md §1), str, list, dict.
Reading never raises for a document that is well-formed JSON: the things a caller must refuse
with its own code (a member named twice, a number beyond double range) are marked in the value
(DupDict, OutOfRange) so that each layer can report them where the spec puts them.
"""

from __future__ import annotations

import json
import json.scanner  # type: ignore[import]
import re
from typing import Any, Iterator

from .numbers import canonical_text, shortest_text

__all__ = [
    "DupDict",
    "OutOfRange",
    "JSONError",
    "parse",
    "dumps",
    "dumps_canonical",
    "dumps_indented",
    "pointer_token",
    "find_problem",
]


class DupDict(dict):
    """An object that named a member twice; `dup` is the first repeated name."""

    dup: str = ""


class OutOfRange:
    """A number literal whose nearest double is infinite (numbers.md §2)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return f"OutOfRange({self.text})"


class JSONError(ValueError):
    """Malformed JSON."""


def _number(s: str) -> Any:
    x = float(s)
    if x == float("inf") or x == float("-inf"):
        return OutOfRange(s)
    return x + 0.0  # -0 is 0 (numbers.md §1)


def _constant(s: str) -> Any:
    raise JSONError(f"{s} is not JSON")


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    d = dict(pairs)
    if len(d) != len(pairs):
        dd = DupDict(d)
        seen: set[str] = set()
        for k, _ in pairs:
            if k in seen:
                dd.dup = k
                break
            seen.add(k)
        return dd
    return d


_decoder = json.JSONDecoder(
    parse_float=_number, parse_int=_number, parse_constant=_constant, object_pairs_hook=_pairs
)
# CPython 3.12 bounds the C decoder's recursion at about a thousand levels whatever the
# recursion limit; documents nested deeper are read again by the pure-Python scanner, which obeys
# sys.setrecursionlimit (the engine raises it), so that depth is refused with the spec's codes
# (BAD_REQUEST at /ROOT, EXPRESSION_TOO_DEEP) rather than as malformed JSON.
_deep_decoder = json.JSONDecoder(
    parse_float=_number, parse_int=_number, parse_constant=_constant, object_pairs_hook=_pairs
)
_deep_decoder.scan_once = json.scanner.py_make_scanner(_deep_decoder)  # type: ignore[attr-defined]
_lone = re.compile(r"[\ud800-\udfff]")
_may_have_surrogate = re.compile(r"\\[uU][dD][89a-fA-F]")


def _has_lone(v: Any) -> bool:
    if isinstance(v, str):
        return _lone.search(v) is not None
    if isinstance(v, list):
        return any(_has_lone(e) for e in v)
    if isinstance(v, dict):
        return any(_has_lone(k) or _has_lone(e) for k, e in v.items())
    return False


def _fix_surrogates(v: Any) -> Any:
    # Lone surrogates written as escapes become U+FFFD, as Go's decoder does (patterns.md §1).
    if isinstance(v, str):
        return _lone.sub("\ufffd", v)
    if isinstance(v, list):
        return [_fix_surrogates(e) for e in v]
    if isinstance(v, dict):
        out = type(v)((_fix_surrogates(k), _fix_surrogates(e)) for k, e in v.items())
        if isinstance(v, DupDict):
            out.dup = v.dup  # type: ignore[attr-defined]
        return out
    return v


def parse(text: str) -> Any:
    """Parse one JSON document; raise JSONError when it is not exactly one well-formed value."""
    try:
        try:
            v, end = _decoder.raw_decode(text, _skip_ws(text, 0))
        except RecursionError:
            v, end = _deep_decoder.raw_decode(text, _skip_ws(text, 0))
    except JSONError:
        raise
    except RecursionError as e:
        raise JSONError("document nested too deep") from e
    except ValueError as e:
        raise JSONError(str(e)) from e
    if _skip_ws(text, end) != len(text):
        raise JSONError("text after the JSON value")
    if _may_have_surrogate.search(text) and _has_lone(v):
        # A lone surrogate escape denotes no Unicode scalar value: the text is malformed.
        raise JSONError("a string holds a lone surrogate escape")
    return v


def _skip_ws(s: str, i: int) -> int:
    n = len(s)
    while i < n and s[i] in " \t\r\n":
        i += 1
    return i


# ---- writing ----------------------------------------------------------------------------------

_str = json.encoder.encode_basestring  # type: ignore[attr-defined]  # escapes as RFC 8785 / ECMAScript do


def _utf16_key(s: str) -> bytes:
    return s.encode("utf-16-be", "surrogatepass")


def _write(v: Any, out: list[str], sort: bool, num: Any = canonical_text) -> None:
    if v is None:
        out.append("null")
    elif v is True:
        out.append("true")
    elif v is False:
        out.append("false")
    elif type(v) is float:
        out.append(num(v))
    elif type(v) is str:
        out.append(_str(v))
    elif type(v) is list:
        out.append("[")
        first = True
        for e in v:
            if not first:
                out.append(",")
            first = False
            _write(e, out, sort, num)
        out.append("]")
    elif isinstance(v, dict):
        out.append("{")
        first = True
        keys = sorted(v, key=_utf16_key) if sort else v
        for k in keys:
            if not first:
                out.append(",")
            first = False
            out.append(_str(k))
            out.append(":")
            _write(v[k], out, sort, num)
        out.append("}")
    elif isinstance(v, int):
        out.append(num(float(v)))
    else:
        raise TypeError(f"not a JSON value: {type(v).__name__}")


def dumps(v: Any, exact: bool = False) -> str:
    """Compact JSON, members in insertion order, numbers in canonical text (numbers.md §4), or
    in their shortest round-trip form when exact (documents such as bundles, not results)."""
    out: list[str] = []
    _write(v, out, False, shortest_text if exact else canonical_text)
    return "".join(out)


def dumps_canonical(v: Any, exact: bool = True) -> str:
    """RFC 8785 (JCS): members sorted by UTF-16 code units, no white space; numbers in their
    shortest round-trip form (RFC 8785 §3.2.2.3), or rounded to 15 digits when not exact (a
    value leaving an evaluation, numbers.md §4)."""
    out: list[str] = []
    _write(v, out, True, shortest_text if exact else canonical_text)
    return "".join(out)


def dumps_indented(v: Any) -> str:
    """RFC 8785 member order and numbers, indented by two spaces, final newline (ruleset.md §9)."""
    out: list[str] = []
    _indent(v, out, "")
    out.append("\n")
    return "".join(out)


def _indent(v: Any, out: list[str], pad: str) -> None:
    if type(v) is list and v:
        inner = pad + "  "
        out.append("[\n")
        for i, e in enumerate(v):
            if i:
                out.append(",\n")
            out.append(inner)
            _indent(e, out, inner)
        out.append("\n" + pad + "]")
    elif isinstance(v, dict) and v:
        inner = pad + "  "
        out.append("{\n")
        for i, k in enumerate(sorted(v, key=_utf16_key)):
            if i:
                out.append(",\n")
            out.append(inner + _str(k) + ": ")
            _indent(v[k], out, inner)
        out.append("\n" + pad + "}")
    else:
        _write(v, out, True, shortest_text)


def pointer_token(s: str) -> str:
    return s.replace("~", "~0").replace("/", "~1")


def find_problem(v: Any, ptr: str, max_depth: int) -> tuple[str, str] | None:
    """The first problem of an input value, in document order: ("depth", ""), or
    ("number", pointer), ("duplicate", pointer). Depth is checked first over the whole value."""
    if max_depth >= 0 and depth(v, max_depth) > max_depth:
        return ("depth", ptr)
    return _first_bad(v, ptr)


def _first_bad(v: Any, ptr: str) -> tuple[str, str] | None:
    t = type(v)
    if t is OutOfRange:
        return ("number", ptr)
    if t is list:
        for i, e in enumerate(v):
            if type(e) in (list, dict, DupDict, OutOfRange):
                p = _first_bad(e, f"{ptr}/{i}")
                if p:
                    return p
        return None
    if t is dict or t is DupDict:
        if t is DupDict:
            return ("duplicate", f"{ptr}/{pointer_token(v.dup)}")  # the second occurrence
        for k, e in v.items():
            if type(e) in (list, dict, DupDict, OutOfRange):
                p = _first_bad(e, f"{ptr}/{pointer_token(k)}")
                if p:
                    return p
    return None


def depth(v: Any, cap: int = 1 << 30) -> int:
    """Nesting depth: a scalar 0, [] and {} 1 (expressions.md §2); stops counting past cap."""
    t = type(v)
    if t is list:
        items: Any = v
    elif t is dict or t is DupDict:
        items = v.values()
    else:
        return 0
    if cap <= 0:
        return 1
    m = 0
    for e in items:
        if type(e) in (list, dict, DupDict):
            d = depth(e, cap - 1)
            if d > m:
                m = d
                if m >= cap:
                    break
    return m + 1


def walk(v: Any) -> Iterator[Any]:
    yield v
    if type(v) is list:
        for e in v:
            yield from walk(e)
    elif isinstance(v, dict):
        for e in v.values():
            yield from walk(e)


def from_host(v: Any) -> Any:
    """A value built by the host (json.load output, ints, tuples) as this engine's JSON value:
    every number a float (-0 as 0; NaN, infinities and ints beyond double range marked
    OutOfRange so that the caller refuses them with its own code), tuples as lists."""
    t = type(v)
    if t is float:
        if v != v or v in (_INF, -_INF):
            return OutOfRange(repr(v))
        return v + 0.0
    if v is None or t is bool or t is str or t is OutOfRange:
        return v
    if t is int:
        try:
            return float(v) + 0.0
        except OverflowError:
            return OutOfRange(str(v))
    if t is list or t is tuple:
        return [from_host(e) for e in v]
    if isinstance(v, dict):
        out: Any = DupDict() if t is DupDict else {}
        for k, e in v.items():
            if type(k) is not str:
                raise TypeError(f"object member names must be strings, got {type(k).__name__}")
            out[k] = from_host(e)
        if t is DupDict:
            out.dup = getattr(v, "dup")
        return out
    if isinstance(v, int):  # bool subclasses are handled above; other int subclasses
        return from_host(int(v))
    if isinstance(v, float):
        return from_host(float(v))
    if isinstance(v, str):
        return str(v)
    raise TypeError(f"{t.__name__} is not a JSON value")


_INF = float("inf")
