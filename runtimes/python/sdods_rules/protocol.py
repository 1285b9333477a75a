"""The engine protocol of protocol.md: JSON Lines on standard input and output."""

from __future__ import annotations

import sys
import threading
import traceback
from typing import Any, BinaryIO, Callable, Mapping, Optional, TextIO

from .expr import Compiler, Context, EvalError, LoadError, finish
from .jsonio import DupDict, JSONError, depth, dumps, find_problem, parse, pointer_token
from .ruleset import ChannelUnavailable, RequestError, RuleSet, check_request, compile_source
from .suiteops import SUITE_OPERATORS

__all__ = ["Engine", "serve", "RELEASE"]

RELEASE = "1.0.0-alpha.2"  # the engine release line, SemVer form (spec/v1/README.md)
SPEC = "1.0"
PROTOCOL = 1

_NAMES = "names"
_CHANNEL = "channel"
_OBJECT = "object"
_STRING = "string"
_ANY = "any"

# Members per command: name -> (type, required).
_COMMANDS: dict[str, dict[str, tuple[str, bool]]] = {
    "version": {},
    "load": {"bundle": (_OBJECT, False), "manifest": (_OBJECT, False), "channel": (_CHANNEL, False), "registered": (_NAMES, False)},
    "manifest": {"ruleset": (_STRING, True), "channel": (_CHANNEL, True)},
    "evaluate": {"ruleset": (_STRING, True), "request": (_OBJECT, True), "channel": (_CHANNEL, False)},
    "expression": {"expression": (_ANY, True), "env": (_OBJECT, False), "functions": (_OBJECT, False),
                   "operators": (_NAMES, False), "registered": (_NAMES, False)},  # fmt: skip
    "compile": {"source": (_OBJECT, True)},
}


class _Fail(Exception):
    def __init__(self, code: str, message: str, pointer: Optional[str] = None, diagnostics: Optional[list[Any]] = None) -> None:
        super().__init__(message)
        self.body: dict[str, Any] = {"code": code, "message": message}
        if pointer is not None:
            self.body["pointer"] = pointer
        if diagnostics is not None:
            self.body["diagnostics"] = diagnostics


def _load_fail(e: LoadError) -> _Fail:
    first = e.diagnostics[0]
    return _Fail(first.code, first.message, first.pointer, [d.as_json() for d in e.diagnostics])


def _type_ok(kind: str, v: Any) -> bool:
    if kind == _ANY:
        return True
    if kind == _OBJECT:
        return type(v) is dict or type(v) is DupDict
    if kind == _STRING:
        return type(v) is str
    if kind == _CHANNEL:
        return v == "server" or v == "client"
    if kind == _NAMES:
        return type(v) is list and all(type(x) is str and x != "" for x in v)
    return False


class Engine:
    """One protocol session: the rulesets loaded so far and the custom operators it can register."""

    def __init__(self, operators: Optional[Mapping[str, Callable[[list[Any]], Any]]] = None, name: str = "sdods-python") -> None:
        self.operators = dict(SUITE_OPERATORS if operators is None else operators)
        self.name = name
        self.rulesets: dict[str, RuleSet] = {}

    def handle_line(self, line: str) -> str:
        """One request line in, one response line out (without the line feed)."""
        rid: Any = None
        try:
            try:
                req = parse(line)
            except JSONError as e:
                raise _Fail("PROTOCOL_INVALID", f"not a JSON object: {e}") from None
            if not (type(req) is dict or type(req) is DupDict):
                raise _Fail("PROTOCOL_INVALID", "a request is a JSON object")
            dup = req.dup if type(req) is DupDict else None
            if "id" in req and dup != "id" and (type(req["id"]) is str or type(req["id"]) is float):
                rid = req["id"]
            if dup is not None:
                raise _Fail("PROTOCOL_INVALID", f"member {dup!r} appears more than once")
            if "id" not in req or rid is None:
                raise _Fail("PROTOCOL_INVALID", "id must be present, a string or a number")
            cmd = req.get("cmd")
            if type(cmd) is not str:
                raise _Fail("PROTOCOL_INVALID", "cmd must be present and a string")
            if cmd not in _COMMANDS:
                raise _Fail("COMMAND_UNKNOWN", f"unknown command {cmd!r}")
            spec = _COMMANDS[cmd]
            for k in sorted(req):
                if k not in ("id", "cmd") and k not in spec:
                    raise _Fail("PROTOCOL_INVALID", f"{cmd} does not accept member {k!r}")
            for k, (_, required) in sorted(spec.items()):
                if required and k not in req:
                    raise _Fail("PROTOCOL_INVALID", f"{cmd} needs member {k!r}")
            for k in sorted(req):
                if k in spec and not _type_ok(spec[k][0], req[k]):
                    raise _Fail("PROTOCOL_INVALID", f"member {k!r} has the wrong type or value")
            result = getattr(self, "cmd_" + cmd)(req)
            return '{"id":' + dumps(rid) + ',"result":' + result + "}"
        except _Fail as f:
            return dumps({"id": rid, "error": f.body})
        except RecursionError:
            return dumps({"id": rid, "error": {"code": "INTERNAL", "message": "nesting too deep for this runtime"}})
        except Exception as e:  # a defect of this runtime, caught at its boundary
            traceback.print_exc(file=sys.stderr)
            return dumps({"id": rid, "error": {"code": "INTERNAL", "message": f"{type(e).__name__}: {e}"}})

    # Each command returns its result already written as JSON.

    def cmd_version(self, req: dict[str, Any]) -> str:
        return dumps({"name": self.name, "version": RELEASE, "spec": SPEC, "protocol": PROTOCOL,
                      "levels": ["evaluator", "compiler"], "operators": sorted(self.operators)})  # fmt: skip

    def _supplied(self, registered: Optional[list[str]]) -> dict[str, Any]:
        if registered is None:
            return dict(self.operators)
        return {k: self.operators[k] for k in registered if k in self.operators}

    def cmd_load(self, req: dict[str, Any]) -> str:
        if ("bundle" in req) == ("manifest" in req):
            raise _Fail("PROTOCOL_INVALID", "load needs exactly one of bundle and manifest")
        ops = self._supplied(req.get("registered"))
        try:
            if "bundle" in req:
                rs = RuleSet.from_bundle(req["bundle"], ops)
            else:
                rs = RuleSet.from_manifest(req["manifest"], ops)
        except LoadError as e:
            raise _load_fail(e) from None
        ch = req.get("channel")
        if ch is not None and ch not in rs.channels:
            raise _Fail("CHANNEL_UNAVAILABLE", f"the ruleset has no {ch} channel", "")
        self.rulesets[rs.ref["id"]] = rs
        return dumps({"ruleset": rs.ref, "channels": sorted(rs.channels), "requiredOperators": rs.required_operators,
                      "missingOperators": rs.missing_operators})  # fmt: skip

    def _ruleset(self, rid: str) -> RuleSet:
        rs = self.rulesets.get(rid)
        if rs is None:
            raise _Fail("RULESET_NOT_LOADED", f"no ruleset {rid!r} was loaded")
        return rs

    def cmd_manifest(self, req: dict[str, Any]) -> str:
        rs = self._ruleset(req["ruleset"])
        m = rs.manifests.get(req["channel"])
        if m is None:
            raise _Fail("CHANNEL_UNAVAILABLE", f"the ruleset has no {req['channel']} channel", "")
        return dumps(m, exact=True)

    def cmd_evaluate(self, req: dict[str, Any]) -> str:
        request = req["request"]
        try:
            check_request(request)
            if "ruleset" in request and request["ruleset"] != req["ruleset"]:
                raise RequestError("/ruleset", "the request names another ruleset")
        except RequestError as e:
            raise _Fail("BAD_REQUEST", e.message, e.pointer) from None
        rs = self._ruleset(req["ruleset"])
        try:
            result = rs.evaluate_checked(request, req.get("channel"))
        except ChannelUnavailable as e:
            raise _Fail("CHANNEL_UNAVAILABLE", str(e), "") from None
        return dumps(result)

    def cmd_expression(self, req: dict[str, Any]) -> str:
        env = req.get("env", {})
        if type(env) is DupDict:
            raise _Fail("BAD_REQUEST", f"env names {env.dup!r} twice", "/" + pointer_token(env.dup))
        # Every root against the depth limit first, then each root completely (protocol.md).
        for name in sorted(env):
            if depth(env[name], 64) > 64:
                raise _Fail("BAD_REQUEST", "nested more than 64 deep", "/" + pointer_token(name))
        for name in sorted(env):
            p = find_problem(env[name], "/" + pointer_token(name), 64)
            if p is not None:
                what, where = p
                msg = {"depth": "nested more than 64 deep", "number": "a number beyond the range of a double",
                       "duplicate": "an object names a member twice"}[what]  # fmt: skip
                raise _Fail("BAD_REQUEST", msg, where)
        declared = req.get("operators", [])
        registered = req.get("registered")
        supplied = {k: v for k, v in self._supplied(registered).items() if k in declared}
        comp = Compiler(declared, supplied)
        comp.load_functions(req.get("functions"), "/functions", allow_description=False)
        fn, _ = comp.compile(req["expression"], "")
        if comp.diags:
            raise _load_fail(LoadError(comp.diags))
        ctx = Context(dict(env))
        try:
            value = finish(fn(ctx), ctx)
        except EvalError as e:
            raise _Fail(e.code, e.message, e.pointer) from None
        return '{"value":' + dumps(value) + "}"

    def cmd_compile(self, req: dict[str, Any]) -> str:
        try:
            bundle = compile_source(req["source"])
        except LoadError as e:
            raise _load_fail(e) from None
        return dumps({"ruleset": bundle["ruleset"], "bundle": bundle}, exact=True)


def serve(stdin: BinaryIO, stdout: TextIO, engine: Optional[Engine] = None) -> None:
    """Answer every request line of stdin on stdout until end of input."""
    engine = engine or Engine()
    for raw in stdin:
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            # Not well-formed UTF-8 anywhere in the line: malformed, answered with id null.
            if raw.strip(b" \t\r\n"):
                stdout.write(dumps({"id": None, "error": {"code": "PROTOCOL_INVALID", "message": "the line is not well-formed UTF-8"}}) + "\n")
                stdout.flush()
            continue
        if not line.strip(" \t\r\n"):
            continue
        stdout.write(engine.handle_line(line.rstrip("\r\n")) + "\n")
        stdout.flush()


def main() -> int:
    # Deep JSON documents and deep expressions recurse; give them room on a large stack.
    sys.setrecursionlimit(30000)
    threading.stack_size(512 * 1024 * 1024)
    out = sys.stdout
    t = threading.Thread(target=serve, args=(sys.stdin.buffer, out))
    t.start()
    t.join()
    return 0
