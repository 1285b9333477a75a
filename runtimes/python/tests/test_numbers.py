"""numbers.md: canonical decimal and text, decimal arithmetic, JSON reading and RFC 8785."""

from __future__ import annotations

import unittest

from sdods_rules import numbers
from sdods_rules.jsonio import DupDict, OutOfRange, dumps_canonical, parse
from sdods_rules.numbers import NumberRangeError, canonical_text, shortest_text


class CanonicalText(unittest.TestCase):
    def test_layout(self) -> None:
        for x, want in [(0.0, "0"), (-0.0, "0"), (1.5, "1.5"), (0.3, "0.3"), (1e21, "1e+21"), (1e20, "100000000000000000000"),
                        (1.5e-7, "1.5e-7"), (0.000001, "0.000001"), (5e-324, "4.94065645841247e-324"),
                        (0.30000000000000004, "0.3"), (1234567890123445.0, "1234567890123440"),
                        (1234567890123455.0, "1234567890123460"), (-2.5e-5, "-0.000025"), (123456789012345.0, "123456789012345")]:  # fmt: skip
            with self.subTest(x=x):
                self.assertEqual(canonical_text(x), want)

    def test_beyond_range_on_the_way_out(self) -> None:
        with self.assertRaises(NumberRangeError):
            canonical_text(1.7976931348623157e308)
        self.assertEqual(canonical_text(1.79769313486231e308), "1.79769313486231e+308")

    def test_shortest_for_documents(self) -> None:
        for x, want in [(0.30000000000000004, "0.30000000000000004"), (1e21, "1e+21"), (5e-324, "5e-324"), (100.0, "100"),
                        (1.7976931348623157e308, "1.7976931348623157e+308"), (1e-7, "1e-7")]:  # fmt: skip
            with self.subTest(x=x):
                self.assertEqual(shortest_text(x), want)


class Arithmetic(unittest.TestCase):
    def test_examples_of_numbers_md(self) -> None:
        self.assertEqual(numbers.add([0.1, 0.2]), 0.3)
        self.assertEqual(numbers.mul([1.1, 1.1]), 1.21)
        self.assertEqual(numbers.mul([0.07, 100.0]), 7.0)
        self.assertEqual(numbers.div(2.0, 3.0), 0.666666666666667)
        self.assertEqual(numbers.round_places(1.005, 2), 1.01)
        self.assertEqual(numbers.mod(0.3, 0.1), 0.0)
        self.assertEqual(numbers.add([1e15, 1.0]), 1e15)
        self.assertEqual(numbers.add([1e15, 15.0]), 1000000000000020.0)
        self.assertEqual(numbers.add([0.1] * 10), 1.0)
        self.assertIsNone(numbers.div(1.0, 0.0))
        with self.assertRaises(NumberRangeError):
            numbers.add([1e308, 1e308])

    def test_binary_forms_agree_with_the_general_ones(self) -> None:
        xs = [0.0, 1.0, -1.0, 0.1, 0.2, 19.99, 1e15, 999999999999999.0, 2.0**53, 1e-300, 123.456, -7.5, 1e150]
        for a in xs:
            for b in xs:
                with self.subTest(a=a, b=b):
                    self.assertEqual(numbers.add2(a, b), numbers.add([a, b]))
                    self.assertEqual(numbers.mul2(a, b), numbers.mul([a, b]))


class Reading(unittest.TestCase):
    def test_numbers(self) -> None:
        self.assertEqual(parse("0.1000000000000000055511151231257827"), 0.1)
        self.assertEqual(parse("1e-400"), 0.0)
        self.assertEqual(parse("1.7976931348623158e308"), 1.7976931348623157e308)
        self.assertIsInstance(parse("1.8e308"), OutOfRange)
        self.assertIsInstance(parse("1" * 400), OutOfRange)
        self.assertEqual(str(parse("-0")), "0.0")
        for bad in ["01", ".5", "1.", "+1", "0x10", "NaN", "Infinity", "[1] 2", '{"a":1}}']:
            with self.subTest(text=bad):
                with self.assertRaises(ValueError):
                    parse(bad)

    def test_duplicates_and_surrogates(self) -> None:
        d = parse('{"a":1,"b":2,"a":3}')
        self.assertIsInstance(d, DupDict)
        self.assertEqual(d.dup, "a")
        with self.assertRaises(ValueError):  # a lone surrogate escape is malformed text
            parse('"\\ud800x"')
        self.assertEqual(parse('"\\ud83d\\ude00"'), "😀")

    def test_rfc8785(self) -> None:
        # Members sorted by UTF-16 code units: U+1F600 (surrogates D83D DE00) sorts before U+E000,
        # unlike code point order.
        self.assertEqual(dumps_canonical({"\ue000": 2.0, "😀": 1.0, "a": [1e21, 0.5, "\u2028\x7f\x1f"]}),
                         '{"a":[1e+21,0.5,"\u2028\x7f\\u001f"],"😀":1,"\ue000":2}')  # fmt: skip


if __name__ == "__main__":
    unittest.main()
