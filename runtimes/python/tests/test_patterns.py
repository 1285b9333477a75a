"""patterns.md: the shared conformance data (engine/pattern/testdata/cases.json) and the time bound."""

from __future__ import annotations

import random
import unittest

from sdods_rules.pattern import Pattern, PatternError, check, compile_pattern

from .support import REPO, load_json

CASES = load_json(REPO / "engine" / "pattern" / "testdata" / "cases.json")


def fresh(source: str) -> Pattern:
    """A newly compiled pattern (no lazy-DFA states or results cached)."""
    ast, size = check(source)
    return Pattern(source, ast, size)


class SharedCases(unittest.TestCase):
    def test_accepted(self) -> None:
        for c in CASES["accept"]:
            p = compile_pattern(c["pattern"])
            for s in c["match"]:
                with self.subTest(pattern=c["pattern"], subject=s):
                    self.assertTrue(fresh(c["pattern"]).match(s))
                    self.assertTrue(p.match(s))
            for s in c["noMatch"]:
                with self.subTest(pattern=c["pattern"], subject=s, want=False):
                    self.assertFalse(fresh(c["pattern"]).match(s))
                    self.assertFalse(p.match(s))

    def test_refused_at_offset(self) -> None:
        for c in CASES["refuse"]:
            with self.subTest(pattern=c["pattern"]):
                with self.assertRaises(PatternError) as cm:
                    compile_pattern(c["pattern"])
                self.assertEqual(cm.exception.offset, c["offset"])


class LinearTime(unittest.TestCase):
    """Matching visits at most a constant times (automaton states) x (subject length + 1) NFA
    states: counted, not timed. A backtracking engine takes exponential time on these."""

    def bounded(self, source: str, subject: str, want: bool) -> None:
        p = fresh(source)
        self.assertEqual(p._run(subject), want)
        bound = 3 * len(p._states) * (len(subject) + 1)
        self.assertLessEqual(p.steps, bound, f"{source}: {p.steps} steps > {bound}")

    def test_pathological_subjects_of_10000_code_points(self) -> None:
        a = "a" * 10000
        self.bounded("^(?:a|a)*b", a, False)  # > 10 s in CPython's re with 26 a's
        self.bounded("^(?:a?){30}a{30}$", a, False)  # > 10 s in CPython's re with 30 a's
        self.bounded("(?:a|aa|.){249}c", a, False)
        rnd = random.Random(7)
        ab = "".join(rnd.choice("ab") for _ in range(10000))
        self.bounded("(?:a|b)*a(?:a|b){9}c", ab, False)
        self.bounded("^[ab]*a[ab]{9}$", ab, ab[-10] == "a")

    def test_steps_grow_linearly(self) -> None:
        rnd = random.Random(3)
        source = "(?:a|b)*a(?:a|b){6}c"
        per_char = []
        for n in (2500, 5000, 10000):
            p = fresh(source)
            p._run("".join(rnd.choice("ab") for _ in range(n)))
            per_char.append(p.steps / n)
        self.assertLess(max(per_char), 2 * min(per_char) + 50)


if __name__ == "__main__":
    unittest.main()
