"""Paths and helpers shared by the tests (run from runtimes/python: python3 -m unittest)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sdods_rules.jsonio import parse

PYTHON_ROOT = Path(__file__).resolve().parent.parent
REPO = PYTHON_ROOT.parent.parent
CONFORMANCE = REPO / "conformance"


def load_json(path: Path) -> Any:
    return parse(path.read_text(encoding="utf-8"))


class RawNum(str):
    """A number as written in a case file."""


class RawObj(list):  # type: ignore[type-arg]
    """An object as written: its (name, value) pairs, duplicates kept."""


def raw_load(path: Path) -> Any:
    """A case file read without losing anything the engine must see (duplicate members, numbers
    beyond double range), to be written back by raw_dumps."""
    return json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=RawObj, parse_float=RawNum,
                      parse_int=RawNum, parse_constant=RawNum)  # fmt: skip


def raw_get(o: Any, key: str, default: Any = None) -> Any:
    for k, v in o:
        if k == key:
            return v
    return default


def raw_dumps(v: Any) -> str:
    if isinstance(v, RawObj):
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + raw_dumps(x) for k, x in v) + "}"
    if isinstance(v, list):
        return "[" + ",".join(raw_dumps(x) for x in v) + "]"
    if isinstance(v, RawNum):
        return str(v)
    return json.dumps(v, ensure_ascii=False)


def resolve_files(v: Any, base: Path) -> Any:
    """Replace {"$file": PATH} members as the suite's harness does."""
    if isinstance(v, RawObj):
        if len(v) == 1 and v[0][0] == "$file":
            return raw_load(base / v[0][1])
        return RawObj((k, resolve_files(x, base)) for k, x in v)
    if isinstance(v, list):
        return [resolve_files(x, base) for x in v]
    return v


def same_json(a: Any, b: Any) -> bool:
    """JSON values equal as the suite compares them: numbers by value, members in any order."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    return bool(a == b)


def dumps(v: Any) -> str:
    return json.dumps(v, ensure_ascii=False)
