"""Differential fuzzing against the Go reference engine (`rules engine`): seeded random
expressions and evaluation requests go to both engines over the protocol; any difference fails
the test and is printed as a minimal case (shrunk while the difference persists).

The Go command is SDODS_GO_ENGINE (words split on spaces), else REPO/.bin/rules engine; the test
is skipped when neither exists. SDODS_FUZZ_SEED and SDODS_FUZZ_N change the seed and the count.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import unittest
from typing import Any, Callable, Optional

from sdods_rules.expr import CORE_ARITY

from .support import CONFORMANCE, PYTHON_ROOT, REPO, same_json

SEED = int(os.environ.get("SDODS_FUZZ_SEED", "20261126"))
N_EXPR = int(os.environ.get("SDODS_FUZZ_N", "3000"))
N_REQ = max(1, N_EXPR // 6)


def go_command() -> Optional[list[str]]:
    env = os.environ.get("SDODS_GO_ENGINE")
    if env:
        return env.split()
    path = REPO / ".bin" / "rules"
    return [str(path), "engine"] if path.exists() else None


def batch(cmd: list[str], cwd: Any, requests: list[dict[str, Any]]) -> list[Any]:
    lines = "".join(json.dumps(dict(r, id=i), ensure_ascii=False) + "\n" for i, r in enumerate(requests))
    p = subprocess.run(cmd, cwd=cwd, input=lines, capture_output=True, text=True, timeout=600)
    out = [json.loads(x) for x in p.stdout.splitlines()]
    if len(out) != len(requests):
        raise AssertionError(f"{cmd}: {len(out)} answers to {len(requests)} requests; stderr: {p.stderr[-2000:]}")
    return out


def verdict(resp: dict[str, Any]) -> Any:
    """What must agree: the result, or the error code and pointer (messages are free)."""
    if "error" in resp:
        e = resp["error"]
        return ("error", e["code"], e.get("pointer"), sorted((d["code"], d["pointer"]) for d in e.get("diagnostics", [])))
    return ("result", resp.get("result"))


def agree(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """a is Go's answer, b Python's."""
    va, vb = verdict(a), verdict(b)
    if va[0] != vb[0]:
        return False
    if va[0] == "error":
        return bool(va == vb)
    return same_json(va[1], vb[1])


# ---- random expressions ----------------------------------------------------------------------

STRINGS = ["", "a", "abc", "Ab-9", "straße", "ÉTÉ", "😀x", " \t pad \n", "2024-02-29", "2000-02-29", "2024-01-31T23:30:00.250+01:00",
           "0001-01-01", "9999-12-31", "2023-02-29", "x@y.z", "12345", "a\u0301", "İı\u212a", "^[a-z]+$", "(a+)+", "a|b", "[0-9]{2,4}",
           "days", "months", "years", "weeks", "1e3", "null"]  # fmt: skip
NUMBERS = [0, 1, -1, 2, 3, 0.1, 0.2, 0.3, 1.5, -2.5, 2.5, 1.005, 19.99, 100, 1e15, 1e21, 1e-7, 123456789012345, 0.30000000000000004,
           1e308, -0.5, 7, 12, 15, 16, 10000001, 0.07, 3.14159, 1234.5, 1e-300, 5e-324]  # fmt: skip
PATTERNS = ["^[a-z]+$", "a", "[0-9]{2,4}", "^.$", "x|y", "^\\d+(?:\\.\\d{1,2})?$", "(?:ab)+", "[^a]", "\\w+@\\w+", "$", "^"]


class Gen:
    def __init__(self, rnd: random.Random) -> None:
        self.r = rnd
        self.ops = sorted(CORE_ARITY)
        self.fns: dict[str, int] = {}

    def functions(self) -> dict[str, Any]:
        """0 to 3 definitions; later ones may call earlier ones (and, rarely, themselves)."""
        self.fns = {}
        defs: dict[str, Any] = {}
        for i in range(self.r.randint(0, 3)):
            name = f"f{i}"
            params = ["p", "q"][: self.r.randint(0, 2)]
            if self.r.random() < 0.05:
                self.fns[name] = len(params)
            defs[name] = {"params": params, "body": self.expr(3, params)}
            self.fns[name] = len(params)
            if self.r.random() < 0.08:  # a malformed definition (expressions.md §5)
                self.malform(defs, name)
        return defs

    def malform(self, defs: dict[str, Any], name: str) -> None:
        d = defs[name]
        k = self.r.randrange(6)
        if k == 0:
            defs[name] = self.r.choice([1, "f", None, [d]])
        elif k == 1:
            d["params"] = self.r.choice(["p", {"p": 1}, 2])
        elif k == 2:
            d["params"] = d["params"] + [self.r.choice(["", "a.b", 1, None, "p"])]
        elif k == 3:
            del d["body"]
        elif k == 4:
            d[self.r.choice(["description", "x", "arity"])] = "d"
        else:
            del d["params"]

    def scalar(self) -> Any:
        k = self.r.random()
        if k < 0.1:
            return None
        if k < 0.2:
            return self.r.random() < 0.5
        if k < 0.45:
            return self.r.choice(NUMBERS)
        if k < 0.55:
            x = self.r.uniform(-1, 1) * 10 ** self.r.randint(-8, 18)
            return round(x, self.r.randint(0, 17)) if self.r.random() < 0.7 else x
        return self.r.choice(STRINGS)

    def data(self, depth: int = 0) -> Any:
        k = self.r.random()
        if depth < 3 and k < 0.15:
            return [self.data(depth + 1) for _ in range(self.r.randint(0, 4))]
        if depth < 3 and k < 0.25:
            return {self.r.choice(["a", "b", "c", "x"]): self.data(depth + 1) for _ in range(self.r.randint(0, 3))}
        return self.scalar()

    def var(self, names: list[str]) -> dict[str, str]:
        root = self.r.choice(names + ["data", "data", "missing"])
        segs = [root] + [self.r.choice(["a", "b", "x", "0", "1", "01"]) for _ in range(self.r.randint(0, 2))]
        return {"var": ".".join(segs)}

    def expr(self, depth: int, names: list[str]) -> Any:
        k = self.r.random()
        if depth <= 0 or k < 0.25:
            if self.r.random() < 0.45:
                return self.var(names)
            s = self.scalar()
            return s
        if k < 0.3:
            return [self.expr(depth - 1, names) for _ in range(self.r.randint(0, 3))]
        if k < 0.33 and self.fns:
            name = self.r.choice(sorted(self.fns))
            n = self.fns[name] if self.r.random() < 0.95 else self.fns[name] + 1
            return {"fn": name, "args": [self.expr(depth - 1, names) for _ in range(n)]}
        if k < 0.35:
            op = self.r.choice(["x-test-sum", "x-test-reverse", "x-luhn", "x-nope", "nope", "Upper"])
            return {"op": op, "args": [self.expr(depth - 1, names) for _ in range(self.r.randint(0, 3))]}
        if k < 0.36:
            return self.r.choice([{}, {"var": 1}, {"op": "+"}, {"var": "a..b"}, {"op": "+", "args": 1}, {"a": 1}])
        op = self.r.choice(self.ops)
        lo, hi = CORE_ARITY[op]
        hi = lo + 2 if hi is None else hi
        n = self.r.randint(lo, hi)
        if op == "if" and n % 2 == 0:
            n += 1
        if op == "literal":
            return {"op": "literal", "args": [self.data()]}
        if op in ("map", "filter", "some", "all"):
            name = self.r.choice(["it", "x", "data"]) if n == 3 else "it"
            inner = names + [name]
            args: list[Any] = [self.expr(depth - 1, names)]
            if n == 3:
                args.append(name)
            args.append(self.expr(depth - 1, inner))
            return {"op": op, "args": args}
        args = [self.expr(depth - 1, names) for _ in range(n)]
        if op == "matches" and self.r.random() < 0.7:
            args[1] = self.r.choice(PATTERNS)
        if op == "dateAdd" and self.r.random() < 0.7:
            args[2] = self.r.choice(["days", "months", "years"])
        return {"op": op, "args": args}


# ---- shrinking -------------------------------------------------------------------------------


def smaller(v: Any) -> list[Any]:
    """Candidates one step simpler than v."""
    out: list[Any] = []
    if isinstance(v, dict) and "args" in v and isinstance(v["args"], list):
        out.extend(a for a in v["args"] if not isinstance(a, str) or v.get("op") not in ("map", "filter", "some", "all"))
        for i, a in enumerate(v["args"]):
            for s in smaller(a):
                out.append(dict(v, args=v["args"][:i] + [s] + v["args"][i + 1 :]))
    elif isinstance(v, list):
        out.extend(v)
        for i, a in enumerate(v):
            out.append(v[:i] + v[i + 1 :])
            for s in smaller(a):
                out.append(v[:i] + [s] + v[i + 1 :])
    elif isinstance(v, dict):
        for k in list(v):
            out.append({kk: vv for kk, vv in v.items() if kk != k})
            for s in smaller(v[k]):
                out.append(dict(v, **{k: s}))
    elif isinstance(v, str) and v:
        out.append("")
    elif isinstance(v, (int, float)) and not isinstance(v, bool) and v not in (0, 1):
        out.extend([0, 1])
    return out


def shrink(req: dict[str, Any], differs: Callable[[list[dict[str, Any]]], list[bool]], key: str) -> dict[str, Any]:
    """Take the first simpler candidate that still differs, step by step; each step sends its
    candidates to both engines in one batch."""
    best = req
    for _ in range(40):
        cands = [dict(best, **{key: c}) for c in smaller(best[key])][:300]
        if not cands:
            break
        found = [c for c, d in zip(cands, differs(cands)) if d]
        if not found:
            break
        best = found[0]
    return best


class Differential(unittest.TestCase):
    def setUp(self) -> None:
        cmd = go_command()
        if cmd is None:
            self.skipTest("the Go engine is not built (go build -o .bin/ ./cmd/rules)")
        self.go = cmd
        self.py = [sys.executable, "-m", "sdods_rules", "engine"]

    def compare(self, requests: list[dict[str, Any]], key: str) -> None:
        go = batch(self.go, REPO, requests)
        py = batch(self.py, PYTHON_ROOT, requests)
        diffs = [i for i, (a, b) in enumerate(zip(go, py)) if not agree(a, b)]
        if not diffs:
            return

        def differs(rs: list[dict[str, Any]]) -> list[bool]:
            a, b = batch(self.go, REPO, rs), batch(self.py, PYTHON_ROOT, rs)
            return [not agree(x, y) for x, y in zip(a, b)]

        i = diffs[0]
        small = shrink(requests[i], differs, key)
        g, p = batch(self.go, REPO, [small])[0], batch(self.py, PYTHON_ROOT, [small])[0]
        self.fail(f"{len(diffs)} of {len(requests)} differ (seed {SEED}); minimal case:\n  request {json.dumps(small, ensure_ascii=False)}\n"
                  f"  go     {json.dumps(g, ensure_ascii=False)}\n  python {json.dumps(p, ensure_ascii=False)}")  # fmt: skip

    def test_expressions(self) -> None:
        rnd = random.Random(SEED)
        gen = Gen(rnd)
        reqs = []
        for _ in range(N_EXPR):
            env = {"data": gen.data(), "ctx": {"today": rnd.choice(["2025-06-15", "2024-02-29"])}}
            fns = gen.functions()
            req = {"cmd": "expression", "expression": gen.expr(rnd.randint(1, 5), []), "env": env}
            if fns:
                req["functions"] = fns
            if rnd.random() < 0.3:
                req["operators"] = ["x-test-sum", "x-test-reverse", "x-luhn"]
                if rnd.random() < 0.3:
                    req["registered"] = ["x-test-sum"]
            reqs.append(req)
        self.compare(reqs, "expression")

    def test_requests(self) -> None:
        rnd = random.Random(SEED + 1)
        gen = Gen(rnd)
        for name in ["signup", "addressbook", "loan", "checkout", "insurance"]:
            d = CONFORMANCE / "fixtures" / name
            ev = json.loads((d / "evaluations.json").read_text(encoding="utf-8"))
            bundle = json.loads((d / ev["bundle"]).read_text(encoding="utf-8"))
            load = {"cmd": "load", "bundle": bundle, "registered": ev.get("operators", [])}
            reqs = []
            for _ in range(N_REQ // 5):
                req = json.loads(json.dumps(rnd.choice(ev["tests"])["request"]))
                for _ in range(rnd.randint(1, 3)):
                    mutate(rnd, gen, req)
                if rnd.random() < 0.3:
                    req["locale"] = rnd.choice(["fr", "fr-CA", "de-CH-x", "EN", "es", None, "en-GB"])
                if rnd.random() < 0.3:
                    places = [r.get("target", {}) for r in bundle["server"]["rules"] + bundle["server"]["stateRules"]]
                    t = rnd.choice(places) if places else {}
                    view = {k: v for k, v in t.items() if k in ("page", "screen", "section", "component") and rnd.random() < 0.8}
                    if rnd.random() < 0.2:
                        view[rnd.choice(["page", "section"])] = "elsewhere"
                    req["view"] = view or None
                if rnd.random() < 0.1:  # the shape check
                    k = rnd.choice(["extra", "ctx", "data", "actor", "view", "locale", "ruleset", "original"])
                    req[k] = rnd.choice([gen.data(), "x", [], 1, {"page": ""}, "en_US", "a" * 40, None,
                                         {"deep": json.loads("[" * 70 + "]" * 70)}, bundle["ruleset"]["id"], "other"])
                ev_req = {"cmd": "evaluate", "ruleset": bundle["ruleset"]["id"], "request": req}
                if rnd.random() < 0.3:
                    ev_req["channel"] = rnd.choice(["server", "client"])
                reqs.append(ev_req)
            with self.subTest(fixture=name):
                self.compare_with_setup(load, reqs)

    def test_sources(self) -> None:
        rnd = random.Random(SEED + 2)
        gen = Gen(rnd)
        sources = []
        for name in ["signup", "addressbook", "loan", "checkout", "insurance"]:
            cases = json.loads((CONFORMANCE / "compiler" / f"{name}.json").read_text(encoding="utf-8"))["cases"]
            sources += [c["input"]["source"] for c in cases]
        reqs = []
        for _ in range(N_REQ):
            src = json.loads(json.dumps(rnd.choice(sources)))
            for _ in range(rnd.randint(1, 3)):
                mutate_anywhere(rnd, gen, src)
            reqs.append({"cmd": "compile", "source": src})
        self.compare(reqs, "source")

    def test_bundles(self) -> None:
        rnd = random.Random(SEED + 3)
        gen = Gen(rnd)
        bundles = []
        for name in ["signup", "addressbook", "loan", "checkout", "insurance"]:
            d = CONFORMANCE / "fixtures" / name
            bundles.append(json.loads((d / f"{name}.bundle.json").read_text(encoding="utf-8")))
        for key in ("bundle", "manifest"):
            reqs = []
            for _ in range(N_REQ // 4):
                b = json.loads(json.dumps(rnd.choice(bundles)))
                if key == "manifest":
                    b = b[rnd.choice(["server", "client"])]
                for _ in range(rnd.randint(1, 2)):
                    mutate_anywhere(rnd, gen, b)
                reqs.append({"cmd": "load", key: b})
            with self.subTest(load=key):
                self.compare(reqs, key)

    def compare_with_setup(self, load: dict[str, Any], reqs: list[dict[str, Any]]) -> None:
        go = batch(self.go, REPO, [load] + reqs)[1:]
        py = batch(self.py, PYTHON_ROOT, [load] + reqs)[1:]
        diffs = [i for i, (a, b) in enumerate(zip(go, py)) if not agree(a, b)]
        if diffs:
            i = diffs[0]
            self.fail(f"{len(diffs)} of {len(reqs)} differ (seed {SEED}); first: {json.dumps(reqs[i]['request'], ensure_ascii=False)}\n"
                      f"  go     {json.dumps(go[i], ensure_ascii=False)[:1500]}\n  python {json.dumps(py[i], ensure_ascii=False)[:1500]}")  # fmt: skip


def mutate_anywhere(rnd: random.Random, gen: Gen, doc: Any) -> None:
    """Delete, replace or add one member or element anywhere in a document."""
    node = doc
    for _ in range(rnd.randint(1, 8)):
        kids = list(node.items()) if isinstance(node, dict) else list(enumerate(node)) if isinstance(node, list) else []
        kids = [(k, v) for k, v in kids if isinstance(v, (dict, list))]
        if not kids or rnd.random() < 0.2:
            break
        node = rnd.choice(kids)[1]
    r = rnd.random()
    if isinstance(node, dict):
        if r < 0.3 and node:
            del node[rnd.choice(sorted(node))]
        elif r < 0.6 and node:
            node[rnd.choice(sorted(node))] = rnd.choice([gen.data(), gen.expr(2, []), "", "x-y", "BAD code", "page", []])
        else:
            node[rnd.choice(["extra", "description", "scope", "channels", "target", "base", "many", "path", "when", "id"])] = \
                rnd.choice([gen.data(), "page", ["server"], ["web"], {"page": "p"}, "Email", True, "a..b", "r1"])
    elif isinstance(node, list):
        if r < 0.4 and node:
            del node[rnd.randrange(len(node))]
        elif r < 0.7 and node:
            node.append(json.loads(json.dumps(rnd.choice(node))))  # a duplicate: ids, fields
        else:
            node.insert(0, gen.data())


def mutate(rnd: random.Random, gen: Gen, req: dict[str, Any]) -> None:
    """Replace, drop or retype one value somewhere in the request's data or ctx."""
    root = req.setdefault("data", {})
    if not isinstance(root, dict) or not root:
        req["data"] = {"x": gen.data()}
        return
    node: Any = root
    for _ in range(4):
        if isinstance(node, dict) and node:
            k = rnd.choice(sorted(node))
            if rnd.random() < 0.4 or not isinstance(node[k], (dict, list)) or not node[k]:
                r = rnd.random()
                if r < 0.2:
                    del node[k]
                else:
                    node[k] = gen.data()
                return
            node = node[k]
        elif isinstance(node, list) and node:
            i = rnd.randrange(len(node))
            if rnd.random() < 0.4 or not isinstance(node[i], (dict, list)) or not node[i]:
                node[i] = gen.data()
                return
            node = node[i]
        else:
            return


if __name__ == "__main__":
    unittest.main()
