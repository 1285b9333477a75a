"""Dates and date-times of dates.md: grammar, UTC range, arithmetic."""

from __future__ import annotations

import datetime as _dt
import re
from typing import NamedTuple, Optional

__all__ = ["Instant", "parse_date", "years_between", "days_between", "date_add"]

_RE = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})"
    r"(?:T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,9}))?(?:(Z)|([+-])([0-9]{2}):([0-9]{2})))?",
    re.ASCII,
)
_DAY_NS = 86_400_000_000_000
_MIN_ORD = _dt.date(1, 1, 1).toordinal()
_MAX_ORD = _dt.date(9999, 12, 31).toordinal()


class Instant(NamedTuple):
    """A parsed date (is_datetime False, ns 0) or date-time, in UTC."""

    is_datetime: bool
    ordinal: int  # proleptic Gregorian day number, 0001-01-01 is 1
    ns: int  # nanoseconds into the UTC day

    @property
    def total(self) -> int:
        return self.ordinal * _DAY_NS + self.ns


_cache: dict[str, Optional[Instant]] = {}


def parse_date(s: str) -> Optional[Instant]:
    """The date or date-time s denotes, or None when s is not one (dates.md §1)."""
    r = _cache.get(s, False)
    if r is not False:
        return r  # type: ignore[return-value]
    r = _parse(s)
    if len(_cache) > 4096:
        _cache.clear()
    _cache[s] = r
    return r


def _parse(s: str) -> Optional[Instant]:
    m = _RE.fullmatch(s)
    if m is None:
        return None
    y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
    if not 1 <= mo <= 12 or not 1 <= d <= _days_in_month(y, mo):
        return None
    if m.group(4) is None:
        if y == 0:
            return None  # a date's year is 0001-9999; only a date-time may say 0000 locally
        return Instant(False, _dt.date(y, mo, d).toordinal(), 0)
    # Year 0000 (proleptic, a leap year) is day 0 = 0000-12-31 and before.
    local_ordinal = _dt.date(y, mo, d).toordinal() if y else d - 1 + _MONTH_START0[mo] - 365
    h, mi, se = int(m.group(4)), int(m.group(5)), int(m.group(6))
    if h > 23 or mi > 59 or se > 59:
        return None
    frac = m.group(7) or ""
    ns = (h * 3600 + mi * 60 + se) * 1_000_000_000 + (int(frac.ljust(9, "0")) if frac else 0)
    off = 0
    if m.group(8) is None:
        oh, om = int(m.group(10)), int(m.group(11))
        if oh > 23 or om > 59:
            return None
        off = (oh * 60 + om) * 60_000_000_000
        if m.group(9) == "-":
            off = -off
    total = local_ordinal * _DAY_NS + ns - off
    ordinal, rest = divmod(total, _DAY_NS)
    if not _MIN_ORD <= ordinal <= _MAX_ORD:
        return None
    return Instant(True, ordinal, rest)


def years_between(a: Instant, b: Instant) -> int:
    if b.total < a.total:
        return -years_between(b, a)
    da = _dt.date.fromordinal(a.ordinal)
    db = _dt.date.fromordinal(b.ordinal)
    n = db.year - da.year
    if (db.month, db.day, b.ns) < (da.month, da.day, a.ns):
        n -= 1
    return n


def days_between(a: Instant, b: Instant) -> int:
    diff = b.total - a.total
    if diff >= 0:
        return diff // _DAY_NS
    return -((-diff) // _DAY_NS)


def date_add(a: Instant, n: int, unit: str) -> Optional[str]:
    """a moved by n units, written as dates.md §6 says; None when the result is out of range."""
    if unit == "days":
        ordinal = a.ordinal + n
        if not _MIN_ORD <= ordinal <= _MAX_ORD:
            return None
        day = _dt.date.fromordinal(ordinal)
    else:
        months = n * 12 if unit == "years" else n
        d0 = _dt.date.fromordinal(a.ordinal)
        total = d0.year * 12 + (d0.month - 1) + months
        y, m0 = divmod(total, 12)
        if not 1 <= y <= 9999:
            return None
        m = m0 + 1
        last = _days_in_month(y, m)
        day = _dt.date(y, m, min(d0.day, last))
    text = "%04d-%02d-%02d" % (day.year, day.month, day.day)
    if not a.is_datetime:
        return text
    secs, frac = divmod(a.ns, 1_000_000_000)
    h, rest = divmod(secs, 3600)
    mi, se = divmod(rest, 60)
    text += "T%02d:%02d:%02d" % (h, mi, se)
    if frac:
        text += "." + ("%09d" % frac).rstrip("0")
    return text + "Z"


def _days_in_month(y: int, m: int) -> int:
    if m == 2:
        return 29 if y % 4 == 0 and (y % 100 != 0 or y % 400 == 0) else 28
    return 30 if m in (4, 6, 9, 11) else 31


# Day of the year (0-based) on which each month of a leap year starts.
_MONTH_START0 = [0, 0, 31, 60, 91, 121, 152, 182, 213, 244, 274, 305, 335]
