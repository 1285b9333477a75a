"""The whole conformance suite (conformance/) run in-process through Engine.handle_line, as the
harness runs it over the protocol: every category, compiler level."""

from __future__ import annotations

import unittest
from typing import Any

from sdods_rules.jsonio import parse
from sdods_rules.protocol import Engine

from .support import CONFORMANCE, RawObj, raw_dumps, raw_get, raw_load, resolve_files, same_json


def send(engine: Engine, req: Any, rid: str) -> Any:
    if isinstance(req, str):
        return parse(engine.handle_line(req))
    line = raw_dumps(RawObj([("id", rid)] + [(k, v) for k, v in req if k != "id"]))
    return parse(engine.handle_line(line))


def subset(got: Any, want: Any) -> bool:
    """Only the members named in want are compared, at every level."""
    if isinstance(want, dict):
        return isinstance(got, dict) and all(k in got and subset(got[k], v) for k, v in want.items())
    return same_json(got, want)


def check(tc: unittest.TestCase, got: Any, want: dict[str, Any]) -> None:
    if "id" in want:
        tc.assertTrue(same_json(got["id"], want["id"]), f"id {got['id']!r}")
    if "result" in want:
        tc.assertIn("result", got, f"expected a result, got {got}")
        if want.get("subset"):
            tc.assertTrue(subset(got["result"], want["result"]), f"{got['result']!r} lacks {want['result']!r}")
        else:
            tc.assertTrue(same_json(got["result"], want["result"]), f"got {got['result']!r}")
        return
    err = want["error"]
    tc.assertIn("error", got, f"expected {err['code']}, got {got}")
    tc.assertEqual(got["error"]["code"], err["code"], got["error"].get("message"))
    if "pointer" in err:
        tc.assertEqual(got["error"].get("pointer"), err["pointer"])
    if "diagnostics" in err:
        pairs = {(d["code"], d["pointer"]) for d in got["error"].get("diagnostics", [])}
        tc.assertEqual(pairs, {(d["code"], d["pointer"]) for d in err["diagnostics"]})


class ConformanceSuite(unittest.TestCase):
    def test_every_case(self) -> None:
        total = 0
        for folder in ["expression", "load-error", "golden", "corpus", "protocol", "compiler"]:
            for path in sorted((CONFORMANCE / folder).glob("*.json")):
                doc = raw_load(path)
                expected = {c["id"]: c["expected"] for c in parse(path.read_text(encoding="utf-8"))["cases"]}
                engine = Engine()
                for i, req in enumerate(raw_get(doc, "setup") or []):
                    r = send(engine, resolve_files(req, CONFORMANCE), f"setup-{i}")
                    self.assertIn("result", r, f"{path.name} setup {i}: {r}")
                for case in raw_get(doc, "cases"):
                    total += 1
                    cid = raw_get(case, "id")
                    with self.subTest(case=cid):
                        for j, req in enumerate(raw_get(case, "setup") or []):
                            r = send(engine, resolve_files(req, CONFORMANCE), f"cs-{j}")
                            self.assertIn("result", r, f"setup: {r}")
                        got = send(engine, resolve_files(raw_get(case, "input"), CONFORMANCE), cid)
                        check(self, got, expected[cid])
        self.assertEqual(total, 1899)


if __name__ == "__main__":
    unittest.main()
