"""The three custom operators every runtime must be able to register (expressions.md §6)."""

from __future__ import annotations

from typing import Any

from . import numbers

__all__ = ["SUITE_OPERATORS"]


def test_reverse(args: list[Any]) -> Any:
    if len(args) != 1:
        raise ValueError("x-test-reverse takes one argument")
    v = args[0]
    if v is None:
        return None
    if type(v) is str:
        return v[::-1]  # Python strings are code points
    if type(v) is list:
        return v[::-1]
    raise TypeError("x-test-reverse needs a string, an array or null")


def test_sum(args: list[Any]) -> Any:
    for a in args:
        if type(a) is not float:
            raise TypeError("x-test-sum needs numbers")
    return numbers.add(list(args)) if args else 0.0


def luhn(args: list[Any]) -> Any:
    if len(args) != 1:
        raise ValueError("x-luhn takes one argument")
    s = args[0]
    if s is None:
        return False
    if type(s) is not str:
        raise TypeError("x-luhn needs a string")
    if len(s) < 2 or not (s.isascii() and s.isdigit()):
        return False
    total = 0
    for i, ch in enumerate(reversed(s)):
        d = ord(ch) - 48
        if i % 2 == 1:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


SUITE_OPERATORS = {"x-luhn": luhn, "x-test-reverse": test_reverse, "x-test-sum": test_sum}
