"""Table tests per core operator (operators.md), through the library entry point."""

from __future__ import annotations

import unittest
from typing import Any

from sdods_rules import EvalError, LoadError, evaluate_expression
from sdods_rules.expr import CORE_ARITY
from sdods_rules.jsonio import parse

ERR = "EVALUATION_ERROR"


def op(name: str, *args: Any) -> dict[str, Any]:
    return {"op": name, "args": list(args)}


def var(path: str) -> dict[str, str]:
    return {"var": path}


def lit(v: Any) -> dict[str, Any]:
    return op("literal", v)


# (expression, environment or None, expected value, or an error code)
CASES: dict[str, list[tuple[Any, Any, Any]]] = {
    "==": [(op("==", 1.0, 1.0), None, True), (op("==", [1.0, [2.0]], [1.0, [2.0]]), None, True),
           (op("==", 1.0, "1"), None, False), (op("==", False, None), None, False),
           (op("==", lit({"a": 1, "b": [1]}), lit({"b": [1.0], "a": 1})), None, True),
           (op("==", var("x"), 0.3), {"x": 0.30000000000000004}, False), (op("==", None, None), None, True)],
    "!=": [(op("!=", True, 1.0), None, True), (op("!=", "a", "a"), None, False)],
    "<": [(op("<", 1.0, 2.0), None, True), (op("<", "Z", "a"), None, True), (op("<", None, 1.0), None, False),
          (op("<", 1.0, "2"), None, ERR), (op("<", "\uffff", "😀"), None, True), (op("<", True, False), None, ERR)],
    "<=": [(op("<=", 2.0, 2.0), None, True), (op("<=", "b", "a"), None, False), (op("<=", [1], [1]), None, ERR)],
    ">": [(op(">", 3.0, 2.0), None, True), (op(">", 1.0, None), None, False)],
    ">=": [(op(">=", 2.0, 2.0), None, True), (op(">=", "a", "b"), None, False)],
    "between": [(op("between", 5.0, 1.0, 5.0), None, True), (op("between", "m", "a", "z"), None, True),
                (op("between", None, 1.0, 5.0), None, False), (op("between", 1.0, "a", 5.0), None, ERR)],
    "and": [(op("and", True, None), None, False), (op("and", False, op("<", 1.0, "x")), None, False),
            (op("and", True, 1.0), None, ERR), (op("and", True, True), None, True)],
    "or": [(op("or", False, True), None, True), (op("or", None, False), None, False), (op("or", "yes"), None, ERR),
           (op("or", True, op("<", 1.0, "x")), None, True)],
    "not": [(op("not", None), None, True), (op("not", 0.0), None, ERR), (op("not", True), None, False)],
    "if": [(op("if", False, 1.0, True, 2.0, 3.0), None, 2.0), (op("if", None, 1.0, 2.0), None, 2.0),
           (op("if", "x", 1.0, 2.0), None, ERR), (op("if", True, 1.0, op("<", 1.0, "x")), None, 1.0)],
    "coalesce": [(op("coalesce", None, False), None, False), (op("coalesce", None, None), None, None),
                 (op("coalesce", 0.0, op("<", 1.0, "x")), None, 0.0)],
    "+": [(op("+", 0.1, 0.2), None, 0.3), (op("+", 1.0, None), None, None), (op("+", 1e15, 15.0), None, 1000000000000020.0),
          (op("+", 1e308, 1e308), None, ERR), (op("+", "1", 1.0), None, ERR), (op("+", 1e15, 1.0), None, 1e15),
          (op("==", op("+", 0.1, 0.2), 0.3), None, True)],
    "-": [(op("-", 4.0), None, -4.0), (op("-", 0.3, 0.1), None, 0.2), (op("-", None, 1.0), None, None)],
    "*": [(op("*", 1.1, 1.1), None, 1.21), (op("*", 0.07, 100.0), None, 7.0), (op("*", 2.0, 3.0, 4.0), None, 24.0)],
    "/": [(op("/", 2.0, 3.0), None, 0.666666666666667), (op("/", 0.3, 0.1), None, 3.0), (op("/", 1.0, 0.0), None, None)],
    "mod": [(op("mod", -7.0, 3.0), None, -1.0), (op("mod", 7.0, -3.0), None, 1.0), (op("mod", 5.5, 2.0), None, 1.5),
            (op("mod", 0.3, 0.1), None, 0.0), (op("mod", 1.0, 0.0), None, None)],
    "abs": [(op("abs", -2.5), None, 2.5), (op("==", op("abs", var("x")), 0.30000000000000004), {"x": -0.30000000000000004}, True),
            (op("abs", None), None, None), (op("abs", "1"), None, ERR)],
    "min": [(op("min", 3.0, 1.0, 2.0), None, 1.0), (op("min", []), None, None), (op("min", [1.0, None]), None, None),
            (op("min", 1.0, "a"), None, ERR)],
    "max": [(op("max", [1.5, 2.5]), None, 2.5), (op("max", 7.0), None, 7.0)],
    "round": [(op("round", 2.5), None, 3.0), (op("round", -2.5), None, -3.0), (op("round", 1.005, 2.0), None, 1.01),
              (op("round", 1234.5, -2.0), None, 1200.0), (op("round", 1.5, 0.5), None, ERR), (op("round", 1.0, 16.0), None, ERR),
              (op("round", None, 0.5), None, None)],
    "sum": [(op("sum", [1.0, 2.0, 3.5]), None, 6.5), (op("sum", [0.1] * 10), None, 1.0), (op("sum", [1.0, None]), None, None),
            (op("sum", []), None, 0.0), (op("sum", "x"), None, ERR), (op("sum", None), None, None)],
    "upper": [(op("upper", "straße"), None, "STRAßE"), (op("upper", None), None, None), (op("upper", 1.0), None, ERR)],
    "lower": [(op("lower", "ÉTÉ K"), None, "ÉtÉ k"), (op("lower", "\u212a"), None, "\u212a")],
    "trim": [(op("trim", " \t a b \r"), None, "a b"), (op("trim", "\u00a0a"), None, "\u00a0a")],
    "concat": [(op("concat", "a", "-", "b"), None, "a-b"), (op("concat", [1.0], [2.0, 3.0]), None, [1.0, 2.0, 3.0]),
               (op("concat", "a", 1.0), None, ERR), (op("concat", "a", None), None, None)],
    "substring": [(op("substring", "a😀bc", 1.0, 2.0), None, "😀b"), (op("substring", "hello", -3.0), None, "llo"),
                  (op("substring", "hello", 10.0), None, ""), (op("substring", "hello", 1.5), None, ERR),
                  (op("substring", "hello", 0.0, -1.0), None, ERR), (op("substring", "hello", -10.0, 2.0), None, "he")],
    "text": [(op("text", 1.5), None, "1.5"), (op("text", 1e21), None, "1e+21"), (op("text", 1e-7), None, "1e-7"),
             (op("text", True), None, "true"), (op("text", None), None, None), (op("text", [1]), None, ERR),
             (op("text", var("x")), {"x": 0.30000000000000004}, "0.3")],
    "startsWith": [(op("startsWith", "abc", "ab"), None, True), (op("startsWith", "abc", ""), None, True),
                   (op("startsWith", None, "a"), None, False), (op("startsWith", 1.0, "a"), None, ERR)],
    "endsWith": [(op("endsWith", "abc", "bc"), None, True), (op("endsWith", "abc", None), None, False)],
    "matches": [(op("matches", "abc123", "^[a-z]+[0-9]+$"), None, True), (op("matches", "a\nb", "^a.b$"), None, True),
                (op("matches", "ab\n", "ab$"), None, False), (op("matches", "a", "(a+)+"), None, "PATTERN_NOT_PORTABLE"),
                (op("matches", "a", var("p")), {"p": "(a+)+"}, ERR), (op("matches", None, "a"), None, False),
                (op("matches", "a" * 10001, "a"), None, ERR), (op("matches", 1.0, "a"), None, ERR)],
    "length": [(op("length", "a😀é"), None, 3.0), (op("length", [1, 2]), None, 2.0), (op("length", lit({"a": 1})), None, 1.0),
               (op("length", None), None, None), (op("length", 1.0), None, ERR)],
    "contains": [(op("contains", "hello", "ell"), None, True), (op("contains", [1.0, [2.0]], [2.0]), None, True),
                 (op("contains", [1.0, 2.0], "1"), None, False), (op("contains", None, 1.0), None, False),
                 (op("contains", "a", 1.0), None, ERR), (op("contains", "a", None), None, False), (op("contains", 1.0, 1.0), None, ERR)],
    "in": [(op("in", "b", ["a", "b"]), None, True), (op("in", 1.0, None), None, False)],
    "map": [(op("map", [1.0, 2.0, 3.0], op("*", var("it"), 2.0)), None, [2.0, 4.0, 6.0]),
            (op("map", [1.0, 2.0], "x", op("map", [10.0], "y", op("+", var("x"), var("y")))), None, [[11.0], [12.0]]),
            (op("map", None, var("it")), None, None), (op("map", 1.0, var("it")), None, ERR)],
    "filter": [(op("filter", [1.0, 2.0, 3.0], op(">", var("it"), 1.0)), None, [2.0, 3.0]),
               (op("filter", [1.0], 1.0), None, ERR), (op("filter", [1.0, None], op(">", var("it"), 0.0)), None, [1.0])],
    "some": [(op("some", [1.0, 2.0], op(">", var("it"), 1.0)), None, True), (op("some", [], True), None, False),
             (op("some", None, True), None, False), (op("some", [1.0, "x"], op(">", var("it"), 0.0)), None, True)],
    "all": [(op("all", [], False), None, True), (op("all", None, True), None, False),
            (op("all", [1.0, 2.0], op(">", var("it"), 1.0)), None, False)],
    "typeOf": [(op("typeOf", None), None, "null"), (op("typeOf", lit({})), None, "object"), (op("typeOf", []), None, "array"),
               (op("typeOf", 1.0), None, "number"), (op("typeOf", "s"), None, "string"), (op("typeOf", False), None, "boolean")],
    "isEmpty": [(op("isEmpty", None), None, True), (op("isEmpty", " "), None, False), (op("isEmpty", 0.0), None, False),
                (op("isEmpty", lit({})), None, True), (op("isEmpty", []), None, True)],
    "literal": [(lit({"var": "x"}), None, {"var": "x"}), (lit([1, {"op": "x"}]), None, [1.0, {"op": "x"}])],
    "isDate": [(op("isDate", "2024-02-29"), None, True), (op("isDate", "2023-02-29"), None, False),
               (op("isDate", "2024-01-01T00:00:00+24:00"), None, False), (op("isDate", 1.0), None, False),
               (op("isDate", "0000-12-31T23:00:00-01:00"), None, True), (op("isDate", "2024-01-01Z"), None, False),
               (op("isDate", "２０２４-01-01"), None, False)],
    "yearsBetween": [(op("yearsBetween", "2000-02-29", "2001-02-28"), None, 0.0), (op("yearsBetween", "2000-02-29", "2001-03-01"), None, 1.0),
                     (op("yearsBetween", "2018-05-10", "2000-05-11"), None, -17.0),
                     (op("yearsBetween", "2000-01-01T00:00:00Z", "2001-01-01T00:30:00+01:00"), None, 0.0),
                     (op("yearsBetween", "x", "2000-01-01"), None, ERR), (op("yearsBetween", None, "2000-01-01"), None, None)],
    "daysBetween": [(op("daysBetween", "2024-02-28", "2024-03-01"), None, 2.0), (op("daysBetween", "0001-01-01", "9999-12-31"), None, 3652058.0),
                    (op("daysBetween", "2024-01-01T12:00:00Z", "2024-01-02T11:59:59Z"), None, 0.0),
                    (op("daysBetween", "2024-01-02", "2024-01-01T00:00:01Z"), None, 0.0)],
    "dateAdd": [(op("dateAdd", "2024-01-31", 1.0, "months"), None, "2024-02-29"), (op("dateAdd", "2024-02-29", 1.0, "years"), None, "2025-02-28"),
                (op("dateAdd", "2024-01-01T23:30:00.250+01:00", 1.0, "days"), None, "2024-01-02T22:30:00.25Z"),
                (op("dateAdd", "2024-03-31", -1.0, "months"), None, "2024-02-29"), (op("dateAdd", "9999-12-31", 1.0, "days"), None, ERR),
                (op("dateAdd", "2024-01-01", 1.5, "days"), None, ERR), (op("dateAdd", "2024-01-01", 1.0, "weeks"), None, ERR),
                (op("dateAdd", None, 1.0, "weeks"), None, None)],
}  # fmt: skip


class OperatorTable(unittest.TestCase):
    def test_every_core_operator_has_cases(self) -> None:
        self.assertEqual(set(CASES), set(CORE_ARITY))
        self.assertEqual(len(CORE_ARITY), 45)

    def test_cases(self) -> None:
        for name, cases in CASES.items():
            for i, (expr, env, want) in enumerate(cases):
                with self.subTest(op=name, case=i):
                    if isinstance(want, str) and want.isupper() and "_" in want:
                        with self.assertRaises((EvalError, LoadError)) as cm:
                            evaluate_expression(expr, env)
                        self.assertEqual(cm.exception.code, want)
                        continue
                    got = evaluate_expression(expr, env)
                    self.assertEqual(got, want)
                    self.assertEqual(type(got), type(want))

    def test_arity_is_checked_at_load(self) -> None:
        for name, (lo, hi) in CORE_ARITY.items():
            bad = lo - 1 if lo > 1 else (hi + 1 if hi is not None else None)
            if name == "if":
                bad = 4
            if bad is None:
                continue
            with self.subTest(op=name):
                with self.assertRaises(LoadError) as cm:
                    evaluate_expression(op(name, *([1.0] * bad)))
                self.assertEqual((cm.exception.code, cm.exception.pointer), ("OPERATOR_ARITY", "/args"))

    def test_text_input(self) -> None:
        self.assertEqual(evaluate_expression('{"op":"+","args":[0.1,0.2]}'), 0.3)
        with self.assertRaises(LoadError) as cm:
            evaluate_expression('{"var":"a","var":"b"}')
        self.assertEqual(cm.exception.code, "EXPRESSION_INVALID")
        with self.assertRaises(LoadError) as cm:
            evaluate_expression(parse('[1e309]'))
        self.assertEqual((cm.exception.code, cm.exception.pointer), ("NUMBER_OUT_OF_RANGE", "/0"))

    def test_custom_operators(self) -> None:
        ops = {"x-twice": lambda a: a[0] * 2, "x-boom": lambda a: 1 / 0, "x-nan": lambda a: float("nan")}
        self.assertEqual(evaluate_expression(op("x-twice", "ab"), operators=ops), "abab")
        for name in ("x-boom", "x-nan"):
            with self.assertRaises(EvalError) as cm:
                evaluate_expression(op(name), operators=ops)
            self.assertEqual(cm.exception.code, "OPERATOR_FAILED")
        with self.assertRaises(LoadError) as cm:
            evaluate_expression(op("x-other"), operators=ops)
        self.assertEqual(cm.exception.code, "OPERATOR_UNDECLARED")

    def test_work_budget(self) -> None:
        # 2^30 elements by doubling through nested functions: refused, not run.
        fns = {"f0": {"params": ["a"], "body": op("concat", var("a"), var("a"))}}
        for i in range(1, 31):
            fns[f"f{i}"] = {"params": ["a"], "body": {"fn": f"f{i-1}", "args": [{"fn": f"f{i-1}", "args": [var("a")]}]}}
        with self.assertRaises(EvalError) as cm:
            evaluate_expression({"fn": "f30", "args": [[1.0]]}, functions=fns)
        self.assertEqual(cm.exception.code, "EVALUATION_LIMIT")


if __name__ == "__main__":
    unittest.main()
