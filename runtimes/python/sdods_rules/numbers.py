"""The number model of numbers.md: canonical decimals, decimal arithmetic, canonical text."""

from __future__ import annotations

from decimal import (
    MAX_EMAX,
    MAX_PREC,
    MIN_EMIN,
    ROUND_HALF_EVEN,
    ROUND_HALF_UP,
    Context,
    Decimal,
    InvalidOperation,
)

__all__ = [
    "NumberRangeError",
    "canonical_text",
    "shortest_text",
    "canonical_decimal",
    "add",
    "sub",
    "mul",
    "div",
    "mod",
    "round_places",
    "neg",
    "to_double",
]

_INF = float("inf")
# Exact arithmetic: + - * and the remainder on canonical decimals never need rounding here.
_EXACT = Context(prec=MAX_PREC, Emax=MAX_EMAX, Emin=MIN_EMIN, rounding=ROUND_HALF_EVEN, traps=[InvalidOperation])
# One rounding to 15 significant digits, ties to even (numbers.md §5 step 3).
_C15 = Context(prec=15, Emax=MAX_EMAX, Emin=MIN_EMIN, rounding=ROUND_HALF_EVEN, traps=[InvalidOperation])
_FAST = 1e15  # integers below this are canonical and add and multiply exactly as doubles


class NumberRangeError(ArithmeticError):
    """A result (or a number on its way out) beyond the range of a double."""


_DEC_CACHE: dict[float, Decimal] = {}


def canonical_decimal(x: float) -> Decimal:
    """The exact value of x rounded to 15 significant digits, ties to even (numbers.md §3)."""
    d = _DEC_CACHE.get(x)
    if d is None:
        if x.is_integer() and -_FAST < x < _FAST:
            d = Decimal(int(x))
        else:
            # CPython's float formatting rounds the exact binary value correctly, ties to even.
            d = Decimal("%.14e" % x)
        if len(_DEC_CACHE) >= 4096:
            _DEC_CACHE.clear()
        _DEC_CACHE[x] = d
    return d


def to_double(d: Decimal) -> float:
    """The double nearest to d; NumberRangeError when it would be infinite."""
    f = float(d)
    if f == _INF or f == -_INF:
        raise NumberRangeError("beyond the range of a double")
    return f + 0.0  # never -0


def canonical_text(x: float) -> str:
    """The canonical decimal of x laid out as ECMAScript's Number.prototype.toString (§4)."""
    if x.is_integer() and -_FAST < x < _FAST:
        return str(int(x))
    s = "%.14e" % x
    sign = ""
    if s[0] == "-":
        sign = "-"
        s = s[1:]
    mant, _, exp = s.partition("e")
    digits = (mant[0] + mant[2:]).rstrip("0") or "0"
    n = int(exp) + 1
    if n == 309 and float(digits[0] + "." + digits[1:] + "e308") == _INF:
        raise NumberRangeError("beyond the range of a double on the way out")
    return sign + _layout(digits, n)


def shortest_text(x: float) -> str:
    """x in its shortest round-trip form laid out as ECMAScript does (RFC 8785 §3.2.2.3)."""
    if x.is_integer() and -_FAST < x < _FAST:
        return str(int(x))
    r = repr(x)
    sign = ""
    if r[0] == "-":
        sign = "-"
        r = r[1:]
    mant, _, exp = r.partition("e")
    ip, _, fp = mant.partition(".")
    e = int(exp) if exp else 0
    whole = ip + fp
    digits = whole.lstrip("0")
    n = len(digits) + e - len(fp)
    digits = digits.rstrip("0") or "0"
    return sign + _layout(digits, n)


def _layout(digits: str, n: int) -> str:
    """Digits d1..dk (no trailing zeros) times 10^(n-k), laid out as Number::toString."""
    k = len(digits)
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * (-n) + digits
    e = n - 1
    return digits[0] + ("." + digits[1:] if k > 1 else "") + "e" + ("+" if e >= 0 else "-") + str(abs(e))


def _round15(d: Decimal) -> float:
    return to_double(_C15.plus(d))


def add(xs: list[float]) -> float:
    """The canonical sum: exact on canonical decimals, rounded once (numbers.md §5)."""
    fast = True
    for x in xs:
        if not (x.is_integer() and -_FAST < x < _FAST):
            fast = False
            break
    if fast:
        t = 0.0
        for x in xs:
            t += x
        if -_FAST < t < _FAST:
            return t + 0.0
    acc = Decimal(0)
    for x in xs:
        acc = _EXACT.add(acc, canonical_decimal(x))
    return _round15(acc)


def sub(a: float, b: float) -> float:
    if a.is_integer() and b.is_integer() and -_FAST < a < _FAST and -_FAST < b < _FAST:
        t = a - b
        if -_FAST < t < _FAST:
            return t + 0.0
    return _round15(_EXACT.subtract(canonical_decimal(a), canonical_decimal(b)))


def neg(a: float) -> float:
    return _round15(-canonical_decimal(a))


def mul(xs: list[float]) -> float:
    fast = True
    t = 1.0
    for x in xs:
        if not (x.is_integer() and -_FAST < x < _FAST):
            fast = False
            break
        t *= x
        if not -_FAST < t < _FAST:
            fast = False
            break
    if fast:
        return t + 0.0
    acc = Decimal(1)
    for x in xs:
        acc = _EXACT.multiply(acc, canonical_decimal(x))
    return _round15(acc)


def div(a: float, b: float) -> float | None:
    """The exact quotient rounded once; None for a zero divisor."""
    if b == 0:
        return None
    return _round15(_C15.divide(canonical_decimal(a), canonical_decimal(b)))


def mod(a: float, b: float) -> float | None:
    """Truncated remainder a - b*trunc(a/b), exact; the sign of a; None for a zero divisor."""
    if b == 0:
        return None
    return _round15(_EXACT.remainder(canonical_decimal(a), canonical_decimal(b)))


def round_places(x: float, places: int) -> float:
    """The canonical decimal of x rounded to places decimals, ties away from zero."""
    q = canonical_decimal(x).quantize(Decimal((0, (1,), -places)), rounding=ROUND_HALF_UP, context=_EXACT)
    return to_double(q)


def add2(a: float, b: float) -> float:
    if a.is_integer() and b.is_integer():
        t = a + b
        if -_FAST < a < _FAST and -_FAST < b < _FAST and -_FAST < t < _FAST:
            return t + 0.0
    return _round15(_EXACT.add(canonical_decimal(a), canonical_decimal(b)))


def mul2(a: float, b: float) -> float:
    if a.is_integer() and b.is_integer():
        t = a * b
        if -_FAST < a < _FAST and -_FAST < b < _FAST and -_FAST < t < _FAST:
            return t + 0.0
    return _round15(_EXACT.multiply(canonical_decimal(a), canonical_decimal(b)))


# The two-operand forms of +, - and * (exact on canonical decimals, rounded once).
BINARY = {"+": add2, "-": sub, "*": mul2}
