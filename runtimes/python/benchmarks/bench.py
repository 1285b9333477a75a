"""Benchmark of the Python runtime: the five fixtures' golden requests (evaluations per second on
one core) and the four expression cases of docs/benchmarks.md, each as a ratio to the Go runtime
measured in the same run (`--go`). Not a test: it prints figures.

    python3 benchmarks/bench.py [--seconds 1] [--go]        # from runtimes/python
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent.parent
sys.path.insert(0, str(HERE.parent))

from sdods_rules import RuleSet  # noqa: E402
from sdods_rules.expr import Compiler, Context  # noqa: E402
from sdods_rules.jsonio import parse  # noqa: E402
from sdods_rules.ruleset import check_request  # noqa: E402
from sdods_rules.suiteops import SUITE_OPERATORS  # noqa: E402

FIXTURES = ["signup", "addressbook", "loan", "checkout", "insurance"]


CLOCK = time.perf_counter


def timeit(fn: Callable[[int], None], seconds: float) -> float:
    """Wall ns per operation, as Go's benchmarks measure: fn(i) runs in a loop for about
    `seconds`, in 5 slices; the best slice counts (the machine is shared)."""
    n = 1
    while True:  # calibrate
        t0 = CLOCK()
        for i in range(n):
            fn(i)
        dt = CLOCK() - t0
        if dt > 0.05:
            break
        n *= 4
    per_slice = max(1, int(n * (seconds / 5) / dt))
    best = float("inf")
    for _ in range(5):
        t0 = CLOCK()
        for i in range(per_slice):
            fn(i)
        best = min(best, (CLOCK() - t0) / per_slice)
    return best * 1e9


def fixture_cases(seconds: float) -> dict[str, float]:
    out = {}
    for name in FIXTURES:
        d = ROOT / "conformance" / "fixtures" / name
        ev = parse((d / "evaluations.json").read_text())
        bundle = parse((d / ev["bundle"]).read_text())
        ops = {k: SUITE_OPERATORS[k] for k in ev.get("operators", []) if k in SUITE_OPERATORS}
        rs = RuleSet.from_bundle(bundle, ops)
        reqs = []
        for t in ev["tests"]:
            check_request(t["request"])
            reqs.append((t["request"], t.get("channel") or "server"))
        k = len(reqs)
        out[name] = timeit(lambda i: rs.evaluate_checked(*reqs[i % k]), seconds)
    return out


EXPRESSIONS: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {
    "Boolean": (
        '{"op":"and","args":[{"op":"or","args":[{"op":"==","args":[{"var":"data.Origin"},"MOW"]},'
        '{"op":"==","args":[{"var":"data.Country"},"RU"]}]},{"op":"or","args":[{"op":">=","args":'
        '[{"var":"data.Value"},100]},{"op":"==","args":[{"var":"data.Adults"},1]}]}]}',
        {"data": {"Origin": "MOW", "Country": "RU", "Adults": 1.0, "Value": 100.0}},
        {},
    ),
    "StartsWith": (
        '{"op":"startsWith","args":[{"var":"data.name"},"/groups/"]}',
        {"data": {"name": "/groups/foo/bar"}},
        {},
    ),
    "FunctionCall": (
        '{"op":"x-join","args":[{"var":"data.a"},{"var":"data.b"}]}',
        {"data": {"a": "hello", "b": "world"}},
        {"x-join": lambda args: args[0] + args[1]},
    ),
    "Map100": (
        '{"op":"map","args":[{"var":"data.arr"},{"op":"*","args":[{"var":"it"},2]}]}',
        {"data": {"arr": [float(i) for i in range(100)]}},
        {},
    ),
}


def expression_cases(seconds: float) -> dict[str, float]:
    out = {}
    for name, (src, env, ops) in EXPRESSIONS.items():
        comp = Compiler(ops.keys(), ops)
        fn, _ = comp.compile(parse(src))
        assert not comp.diags, comp.diags
        out[name] = timeit(lambda i: fn(Context(env)), seconds)
    return out


def go_cases() -> dict[str, float]:
    """ns/op of the Go runtime's matching benchmarks, one core."""
    cmd = ["go", "test", "-run", "XXX", "-bench", "^Benchmark(FixtureEvaluation|Boolean|StartsWith|FunctionCall|Map100)$",
           "-benchtime", "0.5s", "-count", "3", "."]  # fmt: skip
    env = dict(os.environ, GOMAXPROCS="1")
    res = subprocess.run(cmd, cwd=ROOT / "engine", env=env, capture_output=True, text=True, check=True)
    out = {}
    for line in res.stdout.splitlines():
        m = re.match(r"Benchmark(\S+?)(?:-\d+)?\s+\d+\s+([\d.]+) ns/op", line)
        if m:
            name = m.group(1).replace("FixtureEvaluation/", "")
            out[name] = min(out.get(name, float("inf")), float(m.group(2)))  # best of the runs
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=1.0, help="time per case")
    ap.add_argument("--go", action="store_true", help="also run the Go benchmarks and print ratios")
    ap.add_argument("--json", help="write the figures to this file")
    ap.add_argument("--cpu", action="store_true", help="time Python by its CPU time (Go stays wall time)")
    a = ap.parse_args()
    if a.cpu:
        global CLOCK
        CLOCK = time.process_time
    py = fixture_cases(a.seconds)
    py.update(expression_cases(a.seconds))
    go = go_cases() if a.go else {}
    print(f"python {sys.version.split()[0]}")
    print(f"{'case':<14} {'python ns/op':>13} {'evals/s':>10} {'go ns/op':>9} {'ratio':>6}")
    for name, ns in py.items():
        g = go.get(name)
        ratio = f"{ns / g:6.1f}" if g else "     -"
        gs = f"{g:9.0f}" if g else "        -"
        print(f"{name:<14} {ns:13.0f} {1e9 / ns:10.0f} {gs} {ratio}")
    if a.json:
        Path(a.json).write_text(json.dumps({"python": py, "go": go}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
