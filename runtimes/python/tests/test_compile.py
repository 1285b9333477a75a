"""Compiler level: each fixture's source compiles to its committed bundle, byte for byte."""

from __future__ import annotations

import unittest

from sdods_rules import LoadError, RuleSet, compile_source
from sdods_rules.jsonio import dumps_indented, parse

from .support import CONFORMANCE

FIXTURES = ["signup", "addressbook", "loan", "checkout", "insurance"]


class ByteIdentical(unittest.TestCase):
    def test_fixtures(self) -> None:
        for name in FIXTURES:
            with self.subTest(fixture=name):
                cases = parse((CONFORMANCE / "compiler" / f"{name}.json").read_text(encoding="utf-8"))["cases"]
                source = next(c for c in cases if c["id"].endswith("/source"))["input"]["source"]
                want = (CONFORMANCE / "fixtures" / name / f"{name}.bundle.json").read_text(encoding="utf-8")
                bundle = compile_source(source)
                self.assertEqual(dumps_indented(bundle), want)
                rs = RuleSet.from_bundle(bundle)
                self.assertEqual(rs.ref, bundle["ruleset"])

    def test_every_diagnostic_is_reported(self) -> None:
        src = {"ruleset": {"id": "x", "version": "1", "defaultLocale": "en", "locales": {"en": {"m": "m"}},
                           "rules": [{"id": "a", "code": "A", "message": "m", "when": {"op": "nope", "args": []}},
                                     {"id": "b", "code": "B", "message": "m", "when": {"op": "nope", "args": []}}]}}  # fmt: skip
        with self.assertRaises(LoadError) as cm:
            compile_source(src)
        self.assertEqual([(d.code, d.pointer) for d in cm.exception.diagnostics],
                         [("OPERATOR_UNKNOWN", "/ruleset/rules/0/when/op"), ("OPERATOR_UNKNOWN", "/ruleset/rules/1/when/op")])  # fmt: skip


if __name__ == "__main__":
    unittest.main()
