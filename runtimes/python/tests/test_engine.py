"""The engine protocol end to end: `python3 -m sdods_rules engine` as a separate process."""

from __future__ import annotations

import json
import subprocess
import sys
import unittest

from .support import PYTHON_ROOT


def run_engine(lines: list[str]) -> list[dict]:  # type: ignore[type-arg]
    p = subprocess.run([sys.executable, "-m", "sdods_rules", "engine"], cwd=PYTHON_ROOT, input="\n".join(lines) + "\n",
                       capture_output=True, text=True, timeout=60, check=True)  # fmt: skip
    return [json.loads(x) for x in p.stdout.splitlines()]


class Process(unittest.TestCase):
    def test_one_line_per_request_in_order(self) -> None:
        out = run_engine([
            '{"id":"v","cmd":"version"}',
            "",
            '{"id":1,"cmd":"expression","expression":{"op":"*","args":[1.1,1.1]}}',
            "not json",
            '{"id":2,"cmd":"expression","expression":{"op":"+","args":[1,"a"]}}',
            '{"id":3,"cmd":"evaluate","ruleset":"none","request":{"data":{}}}',
            '{"id":4,"cmd":"compile","source":{"ruleset":{"id":"t","version":"1","defaultLocale":"en"}}}',
        ])  # fmt: skip
        self.assertEqual(len(out), 6)  # the blank line is not answered
        self.assertEqual(out[0]["result"]["version"], "1.0.0-alpha.2")
        self.assertEqual(out[0]["result"]["levels"], ["evaluator", "compiler"])
        self.assertEqual(out[1], {"id": 1, "result": {"value": 1.21}})
        self.assertEqual(out[2]["id"], None)
        self.assertEqual(out[2]["error"]["code"], "PROTOCOL_INVALID")
        self.assertEqual((out[3]["error"]["code"], out[3]["error"]["pointer"]), ("EVALUATION_ERROR", ""))
        self.assertEqual(out[4]["error"]["code"], "RULESET_NOT_LOADED")
        self.assertTrue(out[5]["result"]["ruleset"]["checksum"].startswith("sha256:"))

    def test_malformed_text_is_answered_with_id_null(self) -> None:
        p = subprocess.run([sys.executable, "-m", "sdods_rules", "engine"], cwd=PYTHON_ROOT,
                           input=b'{"id":"u","cmd":"expression","expression":"a\xffb"}\n{"id":"s","cmd":"expression","expression":"\\ud800"}\n',
                           capture_output=True, timeout=60, check=True)  # fmt: skip
        out = [json.loads(x) for x in p.stdout.splitlines()]
        self.assertEqual([(o["id"], o["error"]["code"]) for o in out], [(None, "PROTOCOL_INVALID"), (None, "PROTOCOL_INVALID")])

    def test_deep_input_does_not_crash(self) -> None:
        deep = "[" * 5000 + "]" * 5000
        out = run_engine(['{"id":1,"cmd":"expression","expression":1,"env":{"d":' + deep + "}}",
                          '{"id":2,"cmd":"expression","expression":' + deep + "}"])  # fmt: skip
        self.assertEqual((out[0]["error"]["code"], out[0]["error"]["pointer"]), ("BAD_REQUEST", "/d"))
        self.assertEqual(out[1]["error"]["code"], "EXPRESSION_TOO_DEEP")


if __name__ == "__main__":
    unittest.main()
