"""Rulesets, bundles and manifests (ruleset.md) and their evaluation (evaluation.md)."""

from __future__ import annotations

import hashlib
import re
from typing import Any, Iterable, Mapping, Optional

from .expr import (
    DEFAULT_WORK_LIMIT,
    Compiler,
    Context,
    CustomOperator,
    Diagnostic,
    EvalError,
    Fn,
    LoadError,
    finish,
)
from .jsonio import DupDict, OutOfRange, dumps_canonical, find_problem, from_host, pointer_token
from .numbers import NumberRangeError, canonical_text

__all__ = ["RuleSet", "compile_source", "check_request", "RequestError"]

SERVER, CLIENT = "server", "client"
LEVELS = ["project", "module", "page", "screen", "section", "component"]
LOCATION = ["page", "screen", "section", "component"]
BASES = ["string", "number", "integer", "boolean", "date", "datetime", "object", "array"]
SEVERITIES = ["error", "warning", "info"]
STATE_PROPS = ["hidden", "disabled", "required", "readOnly", "value"]
RULESET_MEMBERS = ["id", "version", "description", "defaultLocale", "types", "entities", "functions",
                   "operators", "rules", "stateRules", "locales"]  # fmt: skip
MANIFEST_EXTRA = ["formatVersion", "channel", "ruleset", "fieldTypes"]

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*", re.ASCII)
_CODE = re.compile(r"[A-Z][A-Z0-9_.]*", re.ASCII)
_TAG = re.compile(r"[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*", re.ASCII)
_CHECKSUM = re.compile(r"sha256:[0-9a-f]{64}", re.ASCII)


def valid_name(s: str) -> bool:
    return len(s) <= 128 and _NAME.fullmatch(s) is not None


def valid_tag(s: str) -> bool:
    return len(s) <= 35 and _TAG.fullmatch(s) is not None


def valid_path(s: str) -> bool:
    return s != "" and "" not in s.split(".")


def _kind(v: Any) -> str:
    if v is None:
        return "null"
    return {bool: "a boolean", float: "a number", str: "a string", list: "an array"}.get(type(v), "an object")


def _is_obj(v: Any) -> bool:
    return type(v) is dict or type(v) is DupDict


def _utf16(s: str) -> bytes:
    return s.encode("utf-16-be", "surrogatepass")


# ---- templates ----------------------------------------------------------------------------------


def parse_template(s: str) -> tuple[Optional[list[tuple[bool, str]]], int, str]:
    """Split a catalog template into (is_param, text) parts; ({{ and }} stand for braces)."""
    parts: list[tuple[bool, str]] = []
    text: list[str] = []
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        if c == "{" and i + 1 < n and s[i + 1] == "{":
            text.append("{")
            i += 2
        elif c == "}" and i + 1 < n and s[i + 1] == "}":
            text.append("}")
            i += 2
        elif c == "}":
            return None, i, "a lone '}' (write '}}')"
        elif c == "{":
            j = s.find("}", i + 1)
            if j < 0:
                return None, i, "an unclosed '{' (write '{{' for a brace)"
            name = s[i + 1 : j]
            if not valid_name(name):
                return None, i, "a placeholder must be {name}"
            if text:
                parts.append((False, "".join(text)))
                text = []
            parts.append((True, name))
            i = j + 1
        else:
            text.append(c)
            i += 1
    if text:
        parts.append((False, "".join(text)))
    return parts, 0, ""


# ---- the structural parser (sources and manifests) ----------------------------------------------


class _Parser:
    def __init__(self, code: str, manifest: bool) -> None:
        self.code = code
        self.manifest = manifest
        self.diags: list[Diagnostic] = []
        self.body_ptr = ""

    def err(self, ptr: str, msg: str, code: Optional[str] = None) -> None:
        self.diags.append(Diagnostic(code or self.code, ptr, msg))

    def fields(self, v: Any, ptr: str, what: str, allowed: list[str], required: list[str]) -> Optional[dict[str, Any]]:
        if not _is_obj(v):
            self.err(ptr, f"{what} must be an object, got {_kind(v)}")
            return None
        if type(v) is DupDict:
            self.err(f"{ptr}/{pointer_token(v.dup)}", f"member {v.dup!r} appears more than once")
        out: dict[str, Any] = {}
        for k, x in v.items():
            if k not in allowed:
                if self.manifest and k in MANIFEST_EXTRA and ptr == self.body_ptr:
                    continue
                self.err(f"{ptr}/{pointer_token(k)}", f"unknown member {k!r} in {what}")
                continue
            out[k] = x
        for r in required:
            if r not in out:
                self.err(ptr, f"{what} lacks the required member {r!r}")
        return out

    def str_(self, v: Any, ptr: str, what: str, max_bytes: int = 0) -> Optional[str]:
        if v is _ABSENT:
            return None
        if type(v) is not str:
            self.err(ptr, f"{what} must be a string, got {_kind(v)}")
            return None
        if v == "":
            self.err(ptr, f"{what} must not be empty")
            return None
        if max_bytes and len(v.encode("utf-8", "surrogatepass")) > max_bytes:
            self.err(ptr, f"{what} must be at most {max_bytes} bytes")
            return None
        return v

    def members(self, v: Any, ptr: str, what: str) -> list[tuple[str, Any]]:
        if v is _ABSENT:
            return []
        if not _is_obj(v):
            self.err(ptr, f"{what} must be an object, got {_kind(v)}")
            return []
        if type(v) is DupDict:
            self.err(f"{ptr}/{pointer_token(v.dup)}", f"member {v.dup!r} appears more than once")
        return list(v.items())

    def items(self, v: Any, ptr: str, what: str) -> list[Any]:
        if v is _ABSENT:
            return []
        if type(v) is not list:
            self.err(ptr, f"{what} must be an array, got {_kind(v)}")
            return []
        return v

    def body(self, v: Any, ptr: str) -> Optional[dict[str, Any]]:
        self.body_ptr = ptr
        if self.manifest:
            allowed = RULESET_MEMBERS[2:]
            required = ["defaultLocale", "types", "entities", "functions", "operators", "rules", "stateRules", "locales"]
        else:
            allowed, required = RULESET_MEMBERS, ["id", "version", "defaultLocale"]
        m = self.fields(v, ptr, "the ruleset", allowed, required)
        if m is None:
            return None
        g = lambda k: m.get(k, _ABSENT)  # noqa: E731
        rs: dict[str, Any] = {"ptr": ptr}
        if not self.manifest:
            rs["id"] = self.str_(g("id"), ptr + "/id", "id", 256)
            rs["version"] = self.str_(g("version"), ptr + "/version", "version", 64)
        rs["description"] = self.str_(g("description"), ptr + "/description", "description") or ""
        loc = self.str_(g("defaultLocale"), ptr + "/defaultLocale", "defaultLocale", 35)
        if loc is not None and not valid_tag(loc):
            self.err(ptr + "/defaultLocale", f"defaultLocale {loc!r} is not a language tag")
        rs["defaultLocale"] = loc or ""
        rs["types"] = self.types(g("types"), ptr + "/types")
        rs["entities"] = self.entities(g("entities"), ptr + "/entities")
        rs["functions"] = self.functions(g("functions"), ptr + "/functions")
        rs["operators"] = self.operators(g("operators"), ptr + "/operators")
        rs["rules"] = self.rules(g("rules"), ptr + "/rules")
        rs["stateRules"] = self.state_rules(g("stateRules"), ptr + "/stateRules")
        rs["locales"] = self.locales(g("locales"), ptr + "/locales")
        self.check(rs)
        return rs

    def types(self, v: Any, ptr: str) -> list[dict[str, Any]]:
        out = []
        for name, t in self.members(v, ptr, "types"):
            tp = f"{ptr}/{pointer_token(name)}"
            if not valid_name(name):
                self.err(tp, f"type name {name!r} must be a letter followed by letters, digits or '_'")
                continue
            f = self.fields(t, tp, "a type", ["base", "description"], [])
            ty = {"name": name, "ptr": tp, "base": "string", "description": ""}
            if f is not None:
                b = self.str_(f.get("base", _ABSENT), tp + "/base", "base")
                if b is not None:
                    if b not in BASES:
                        self.err(tp + "/base", f"base {b!r} is not a known base", "TYPE_UNKNOWN")
                    ty["base"] = b
                ty["description"] = self.str_(f.get("description", _ABSENT), tp + "/description", "description") or ""
            out.append(ty)
        return out

    def entities(self, v: Any, ptr: str) -> list[dict[str, Any]]:
        out = []
        for name, e in self.members(v, ptr, "entities"):
            ep = f"{ptr}/{pointer_token(name)}"
            if not valid_name(name):
                self.err(ep, f"entity name {name!r} must be a letter followed by letters, digits or '_'")
                continue
            f = self.fields(e, ep, "an entity", ["path", "many", "description", "fieldTypes"], ["fieldTypes"])
            if f is None:
                continue
            ent: dict[str, Any] = {"name": name, "path": name, "many": False, "ptr": ep, "fields": []}
            s = self.str_(f.get("path", _ABSENT), ep + "/path", "path")
            if s is not None:
                if not valid_path(s):
                    self.err(ep + "/path", f"path {s!r} must be segments separated by '.', none empty")
                ent["path"] = s
            if "many" in f:
                if type(f["many"]) is not bool:
                    self.err(ep + "/many", "many must be a boolean")
                else:
                    ent["many"] = f["many"]
            ent["description"] = self.str_(f.get("description", _ABSENT), ep + "/description", "description") or ""
            fts = f.get("fieldTypes", _ABSENT)
            if type(fts) is DupDict:
                self.err(f"{ep}/fieldTypes/{pointer_token(fts.dup)}", f"field {fts.dup!r} bound twice", "FIELD_TYPE_REBOUND")
            for field, tn in self.members(fts if type(fts) is not DupDict else dict(fts), ep + "/fieldTypes", "fieldTypes"):
                fp = f"{ep}/fieldTypes/{pointer_token(field)}"
                if not valid_path(field):
                    self.err(fp, f"field {field!r} must be segments separated by '.', none empty")
                    continue
                t = self.str_(tn, fp, "a field type")
                if t is None:
                    continue
                ent["fields"].append({"field": field, "type": t, "ptr": fp})
            out.append(ent)
        return out

    def functions(self, v: Any, ptr: str) -> Any:
        # Definitions are checked by the expression compiler (FUNCTION_* codes); here only the
        # container, and description, whose type is a structural matter.
        if v is _ABSENT:
            return {}
        if not _is_obj(v):
            self.err(ptr, f"functions must be an object, got {_kind(v)}")
            return {}
        for name, d in v.items():
            if _is_obj(d) and "description" in d and type(d["description"]) is not str:
                self.err(f"{ptr}/{pointer_token(name)}/description", "description must be a string")
        return v

    def operators(self, v: Any, ptr: str) -> list[dict[str, Any]]:
        out = []
        for name, o in self.members(v, ptr, "operators"):
            op = f"{ptr}/{pointer_token(name)}"
            if not name.startswith("x-") or len(name) < 3:
                self.err(op, f"custom operator {name!r} must be named x-...")
                continue
            f = self.fields(o, op, "an operator declaration", ["description"], [])
            d = ""
            if f is not None:
                d = self.str_(f.get("description", _ABSENT), op + "/description", "description") or ""
            out.append({"name": name, "description": d})
        return out

    def channels(self, v: Any, ptr: str) -> list[str]:
        if v is _ABSENT:
            return [SERVER, CLIENT]
        out: list[str] = []
        for i, it in enumerate(self.items(v, ptr, "channels")):
            ip = f"{ptr}/{i}"
            s = self.str_(it, ip, "a channel")
            if s is None:
                continue
            if s not in (SERVER, CLIENT):
                self.err(ip, f"channel {s!r} is not server or client")
                continue
            if s in out:
                self.err(ip, f"channel {s!r} is listed twice")
                continue
            out.append(s)
        if type(v) is list and not v:
            self.err(ptr, "channels must list at least one channel")
        return [c for c in (SERVER, CLIENT) if c in out]

    def target(self, v: Any, ptr: str, state: bool) -> dict[str, Any]:
        t: dict[str, Any] = {}
        if v is _ABSENT:
            return t
        allowed = LOCATION if state else LOCATION + ["fields", "type"]
        f = self.fields(v, ptr, "a target", allowed, [])
        if f is None:
            return t
        for lvl in LOCATION:
            s = self.str_(f.get(lvl, _ABSENT), f"{ptr}/{lvl}", lvl, 256)
            if s is not None:
                t[lvl] = s
        if "fields" in f:
            fields: list[str] = []
            for i, it in enumerate(self.items(f["fields"], ptr + "/fields", "fields")):
                ip = f"{ptr}/fields/{i}"
                s = self.str_(it, ip, "a field")
                if s is None:
                    continue
                if not valid_path(s):
                    self.err(ip, f"field {s!r} must be segments separated by '.', none empty")
                    continue
                if s in fields:
                    self.err(ip, f"field {s!r} is listed twice")
                    continue
                fields.append(s)
            if type(f["fields"]) is list and not f["fields"]:
                self.err(ptr + "/fields", "fields must list at least one field")
            if fields:
                t["fields"] = fields
        ty = self.str_(f.get("type", _ABSENT), ptr + "/type", "type")
        if ty is not None:
            t["type"] = ty
            if "fields" in f:
                self.err(ptr, "a target names fields or a type, not both")
        return t

    def scope(self, v: Any, ptr: str, t: dict[str, Any]) -> str:
        if v is _ABSENT:
            s = "project"
            for lvl in LOCATION:
                if lvl in t:
                    s = lvl
            return s
        written = self.str_(v, ptr, "scope")
        if written is None:
            return "project"
        s = written
        if s not in LEVELS:
            self.err(ptr, f"scope {s!r} is not a level", "SCOPE_INVALID")
            return s
        if s in LOCATION and s not in t:
            self.err(ptr, f"scope {s!r} is a level the target does not name", "SCOPE_INVALID")
        return s

    def rules(self, v: Any, ptr: str) -> list[dict[str, Any]]:
        out = []
        allowed = ["id", "description", "scope", "channels", "severity", "code", "target", "when", "message"]
        for i, it in enumerate(self.items(v, ptr, "rules")):
            rp = f"{ptr}/{i}"
            f = self.fields(it, rp, "a rule", allowed, ["id", "code", "when", "message"])
            if f is None:
                continue
            g = lambda k: f.get(k, _ABSENT)  # noqa: E731
            r: dict[str, Any] = {"ptr": rp, "severity": "error"}
            r["id"] = self.str_(g("id"), rp + "/id", "id", 256)
            r["description"] = self.str_(g("description"), rp + "/description", "description") or ""
            c = self.str_(g("code"), rp + "/code", "code")
            if c is not None:
                if len(c) > 128 or not _CODE.fullmatch(c):
                    self.err(rp + "/code", f"code {c!r} must be upper-case letters, digits, '_' or '.', starting with a letter")
                elif c == "RULE_FAILED":
                    self.err(rp + "/code", "code RULE_FAILED is reserved for rules that fail closed")
            r["code"] = c or ""
            s = self.str_(g("severity"), rp + "/severity", "severity")
            if s is not None:
                if s not in SEVERITIES:
                    self.err(rp + "/severity", f"severity {s!r} is not error, warning or info")
                r["severity"] = s
            r["channels"] = self.channels(g("channels"), rp + "/channels")
            r["target"] = self.target(g("target"), rp + "/target", False)
            r["scope"] = self.scope(g("scope"), rp + "/scope", r["target"])
            r["when"] = g("when")
            r["key"], r["key_ptr"], r["params"] = self.message(g("message"), rp + "/message")
            out.append(r)
        return out

    def message(self, v: Any, ptr: str) -> tuple[str, str, list[tuple[str, Any, str]]]:
        if v is _ABSENT:
            return "", ptr, []
        if type(v) is str:
            return self.str_(v, ptr, "message") or "", ptr, []
        f = self.fields(v, ptr, "a message", ["key", "params"], ["key"])
        if f is None:
            return "", ptr, []
        key = self.str_(f.get("key", _ABSENT), ptr + "/key", "key") or ""
        params: list[tuple[str, Any, str]] = []
        for name, x in self.members(f.get("params", _ABSENT), ptr + "/params", "params"):
            pp = f"{ptr}/params/{pointer_token(name)}"
            if not valid_name(name):
                self.err(pp, f"parameter name {name!r} must be a letter followed by letters, digits or '_'")
                continue
            params.append((name, x, pp))
        params.sort(key=lambda p: p[0])
        return key, ptr + "/key", params

    def state_rules(self, v: Any, ptr: str) -> list[dict[str, Any]]:
        out = []
        allowed = ["id", "description", "scope", "channels", "target", "when", "effects"]
        for i, it in enumerate(self.items(v, ptr, "stateRules")):
            rp = f"{ptr}/{i}"
            f = self.fields(it, rp, "a state rule", allowed, ["id", "effects"])
            if f is None:
                continue
            g = lambda k: f.get(k, _ABSENT)  # noqa: E731
            r: dict[str, Any] = {"ptr": rp}
            r["id"] = self.str_(g("id"), rp + "/id", "id", 256)
            r["description"] = self.str_(g("description"), rp + "/description", "description") or ""
            r["channels"] = self.channels(g("channels"), rp + "/channels")
            r["target"] = self.target(g("target"), rp + "/target", True)
            r["scope"] = self.scope(g("scope"), rp + "/scope", r["target"])
            r["when"] = f.get("when", True)
            effs = self.items(g("effects"), rp + "/effects", "effects")
            if type(g("effects")) is list and not effs:
                self.err(rp + "/effects", "effects must list at least one effect")
            r["effects"] = []
            for j, en in enumerate(effs):
                ep = f"{rp}/effects/{j}"
                ef = self.fields(en, ep, "an effect", ["field"] + STATE_PROPS, ["field"])
                if ef is None:
                    continue
                e: dict[str, Any] = {"ptr": ep, "field": "", "props": []}
                s = self.str_(ef.get("field", _ABSENT), ep + "/field", "field")
                if s is not None:
                    if not valid_path(s):
                        self.err(ep + "/field", f"field {s!r} must be segments separated by '.', none empty")
                    e["field"] = s
                for prop in STATE_PROPS:
                    if prop in ef:
                        e["props"].append((prop, ef[prop], f"{ep}/{prop}"))
                if not e["props"]:
                    self.err(ep, "an effect sets at least one of " + ", ".join(STATE_PROPS))
                r["effects"].append(e)
            out.append(r)
        return out

    def locales(self, v: Any, ptr: str) -> list[dict[str, Any]]:
        out = []
        seen: set[str] = set()
        for tag, cat in self.members(v, ptr, "locales"):
            cp = f"{ptr}/{pointer_token(tag)}"
            if not valid_tag(tag):
                self.err(cp, f"locale {tag!r} is not a language tag")
                continue
            if tag.lower() in seen:
                self.err(cp, f"locale {tag!r} is declared more than once")
                continue
            seen.add(tag.lower())
            c: dict[str, Any] = {"tag": tag, "messages": {}, "parsed": {}}
            for key, tpl in self.members(cat, cp, "a catalog"):
                mp = f"{cp}/{pointer_token(key)}"
                if key == "":
                    self.err(mp, "a message key must not be empty")
                    continue
                if type(tpl) is not str:
                    self.err(mp, f"a message template must be a string, got {_kind(tpl)}")
                    continue
                parts, off, why = parse_template(tpl)
                if parts is None:
                    self.err(mp, f"template: {why} at offset {off}")
                    continue
                c["messages"][key] = tpl
                c["parsed"][key] = parts
            out.append(c)
        return out

    def check(self, rs: dict[str, Any]) -> None:
        types = {t["name"] for t in rs["types"]}
        bound: dict[str, str] = {}
        for e in rs["entities"]:
            for f in e["fields"]:
                if f["type"] not in types:
                    self.err(f["ptr"], f"type {f['type']!r} is not declared", "TYPE_UNKNOWN")
                key = e["path"] + (".[]" if e["many"] else "") + "." + f["field"]
                if key in bound:
                    self.err(f["ptr"], f"field {key} is bound to a type more than once", "FIELD_TYPE_REBOUND")
                    continue
                bound[key] = f["ptr"]
        ids: set[str] = set()

        def check_id(i: Optional[str], ptr: str) -> None:
            if not i:
                return
            if i in ids:
                self.err(ptr, f"rule id {i!r} is used more than once")
            ids.add(i)

        default = None
        for c in rs["locales"]:
            if c["tag"].lower() == rs["defaultLocale"].lower():
                default = c
        if default is None and rs["defaultLocale"] and rs["rules"]:
            self.err(rs["ptr"] + "/defaultLocale", f"the default locale {rs['defaultLocale']!r} has no catalog in locales")
        for r in rs["rules"]:
            check_id(r["id"], r["ptr"] + "/id")
            if "type" in r["target"] and r["target"]["type"] not in types:
                self.err(r["ptr"] + "/target/type", f"type {r['target']['type']!r} is not declared", "TYPE_UNKNOWN")
            if default is not None and r["key"] and r["key"] not in default["messages"]:
                self.err(r["key_ptr"], f"message {r['key']!r} is not in the catalog of the default locale")
        for r in rs["stateRules"]:
            check_id(r["id"], r["ptr"] + "/id")


class _Absent:
    def __repr__(self) -> str:
        return "absent"


_ABSENT: Any = _Absent()


# ---- resolved form, checksum, manifests ---------------------------------------------------------


def _by_utf16(items: Iterable[Any], key: Any) -> list[Any]:
    return sorted(items, key=lambda x: _utf16(key(x)))


def resolved_members(rs: dict[str, Any], channel: str = "") -> dict[str, Any]:
    """The members shared by the resolved ruleset and its manifests (ruleset.md §8)."""
    out: dict[str, Any] = {"defaultLocale": rs["defaultLocale"]}
    if rs.get("description"):
        out["description"] = rs["description"]
    types = {}
    for t in rs["types"]:
        tn: dict[str, Any] = {"base": t["base"]}
        if t["description"]:
            tn["description"] = t["description"]
        types[t["name"]] = tn
    out["types"] = types
    ents = {}
    for e in rs["entities"]:
        en: dict[str, Any] = {"path": e["path"], "many": e["many"], "fieldTypes": {f["field"]: f["type"] for f in e["fields"]}}
        if e["description"]:
            en["description"] = e["description"]
        ents[e["name"]] = en
    out["entities"] = ents
    fns = {}
    for name, d in rs["functions"].items():
        fn: dict[str, Any] = {"params": list(d.get("params", [])), "body": d.get("body")}
        if "description" in d:
            fn["description"] = d["description"]
        fns[name] = fn
    out["functions"] = fns
    out["operators"] = {o["name"]: ({"description": o["description"]} if o["description"] else {}) for o in rs["operators"]}
    rules = []
    for r in rs["rules"]:
        if channel and channel not in r["channels"]:
            continue
        rn: dict[str, Any] = {
            "id": r["id"], "scope": r["scope"], "channels": r["channels"], "severity": r["severity"],
            "code": r["code"], "target": r["target"], "when": r["when"],
            "message": {"key": r["key"], "params": {p[0]: p[1] for p in r["params"]}},
        }  # fmt: skip
        if r["description"]:
            rn["description"] = r["description"]
        rules.append(rn)
    out["rules"] = rules
    states = []
    for r in rs["stateRules"]:
        if channel and channel not in r["channels"]:
            continue
        effects = []
        for e in r["effects"]:
            en2: dict[str, Any] = {"field": e["field"]}
            for name, x, _ in e["props"]:
                en2[name] = x
            effects.append(en2)
        sn: dict[str, Any] = {"id": r["id"], "scope": r["scope"], "channels": r["channels"], "target": r["target"],
                              "when": r["when"], "effects": effects}  # fmt: skip
        if r["description"]:
            sn["description"] = r["description"]
        states.append(sn)
    out["stateRules"] = states
    out["locales"] = {c["tag"]: dict(c["messages"]) for c in rs["locales"]}
    return out


def field_types(rs: dict[str, Any]) -> dict[str, str]:
    return {f"{e['name']}.{f['field']}": f["type"] for e in rs["entities"] for f in e["fields"]}


def checksum(rs: dict[str, Any]) -> str:
    body = {"id": rs["id"], "version": rs["version"]}
    body.update(resolved_members(rs))
    text = dumps_canonical({"ruleset": body})
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _manifest(rs: dict[str, Any], ref: dict[str, str], channel: str) -> dict[str, Any]:
    m: dict[str, Any] = {"formatVersion": 1.0, "channel": channel, "ruleset": dict(ref), "fieldTypes": field_types(rs)}
    m.update(resolved_members(rs, channel))
    return m


def _compile_expressions(rs: dict[str, Any], supplied: Mapping[str, CustomOperator], declared: Iterable[str],
                         diags: list[Diagnostic]) -> tuple[Compiler, dict[str, Any]]:  # fmt: skip
    """Load every expression of a parsed ruleset; returns the compiler and the compiled forms."""
    comp = Compiler(declared, supplied)
    comp.load_functions(rs["functions"], rs["ptr"] + "/functions")
    compiled: dict[str, Any] = {"rules": [], "stateRules": []}
    for r in rs["rules"]:
        ops: set[str] = set()
        when, o = comp.compile(r["when"], r["ptr"] + "/when") if r["when"] is not _ABSENT else (None, set())
        ops |= o
        params = []
        for name, x, pp in r["params"]:
            f, o = comp.compile(x, pp)
            ops |= o
            params.append((name, f))
        compiled["rules"].append((when, params, ops))
    for r in rs["stateRules"]:
        ops = set()
        when, o = comp.compile(r["when"], r["ptr"] + "/when")
        ops |= o
        effects = []
        for e in r["effects"]:
            props = []
            for name, x, pp in e["props"]:
                f, o = comp.compile(x, pp)
                ops |= o
                props.append((name, f))
            effects.append((e["field"], props))
        compiled["stateRules"].append((when, effects, ops))
    diags.extend(comp.diags)
    return comp, compiled


def compile_source(doc: Any) -> dict[str, Any]:
    """Compile a source ruleset document (as JSON) into its bundle; LoadError with every
    diagnostic otherwise. The bundle's numbers are doubles; write it with dumps_indented."""
    p = _Parser("RULESET_INVALID", manifest=False)
    top = p.fields(doc, "", "the document", ["ruleset", "$schema"], ["ruleset"])
    if top is None or "ruleset" not in top:
        raise LoadError(p.diags)
    if "$schema" in top and type(top["$schema"]) is not str:
        p.err("/$schema", "$schema must be a string")
    rs = p.body(top["ruleset"], "/ruleset")
    diags = list(p.diags)
    if rs is None:
        raise LoadError(diags)
    _compile_expressions(rs, {}, [o["name"] for o in rs["operators"]], diags)
    if diags:
        raise LoadError(diags)
    ref = {"id": rs["id"], "version": rs["version"], "checksum": checksum(rs)}
    return {"formatVersion": 1.0, "ruleset": ref, "server": _manifest(rs, ref, SERVER), "client": _manifest(rs, ref, CLIENT)}


# ---- reading bundles and manifests --------------------------------------------------------------


class _Reader:
    def __init__(self) -> None:
        self.diags: list[Diagnostic] = []

    def err(self, ptr: str, msg: str, code: str = "BUNDLE_INVALID") -> None:
        self.diags.append(Diagnostic(code, ptr, msg))

    def version(self, v: dict[str, Any], ptr: str) -> bool:
        if "formatVersion" not in v:
            self.err(ptr, "formatVersion is missing")
            return False
        fv = v["formatVersion"]
        if type(fv) is OutOfRange:
            self.err(ptr + "/formatVersion", f"formatVersion {fv.text} is not supported", "BUNDLE_UNSUPPORTED")
            return False
        if type(fv) is not float or not fv.is_integer():
            self.err(ptr + "/formatVersion", "formatVersion must be an integer")
            return False
        if fv != 1:
            self.err(ptr + "/formatVersion", f"formatVersion {canonical_text(fv)} is not supported (this runtime reads 1)", "BUNDLE_UNSUPPORTED")
            return False
        return True

    def ref(self, v: Any, ptr: str) -> tuple[dict[str, str], bool]:
        """The ruleset reference as read (possibly partial) and whether it is valid."""
        if not _is_obj(v):
            self.err(ptr, "ruleset must be an object {id, version, checksum}")
            return {}, False
        ok = True
        out: dict[str, str] = {}
        if type(v) is DupDict:
            self.err(f"{ptr}/{pointer_token(v.dup)}", f"member {v.dup!r} appears more than once")
            ok = False
        for k, x in v.items():
            mp = f"{ptr}/{pointer_token(k)}"
            if k not in ("id", "version", "checksum"):
                self.err(mp, f"unknown member {k!r} in the ruleset reference")
                ok = False
                continue
            if type(x) is not str or x == "":
                self.err(mp, f"{k} must be a non-empty string")
                ok = False
                continue
            out[k] = x
        if len(out) < 3:
            if ok:
                self.err(ptr, "the ruleset reference needs id, version and checksum")
            return out, False
        if len(out["id"].encode("utf-8", "surrogatepass")) > 256:
            self.err(ptr + "/id", "id must be at most 256 bytes")
            return out, False
        if len(out["version"].encode("utf-8", "surrogatepass")) > 64:
            self.err(ptr + "/version", "version must be at most 64 bytes")
            return out, False
        if not _CHECKSUM.fullmatch(out["checksum"]):
            self.err(ptr + "/checksum", "checksum must be sha256: followed by 64 lower-case hex digits")
            return out, False
        return out, ok

    def manifest(self, v: Any, ptr: str) -> Optional[tuple[str, dict[str, str], dict[str, Any]]]:
        if not _is_obj(v):
            self.err(ptr, "a manifest must be a JSON object")
            return None
        if not self.version(v, ptr):
            return None
        ch = v.get("channel")
        channel = ch if ch in (SERVER, CLIENT) and type(ch) is str else ""
        if not channel:
            self.err(ptr + "/channel", 'channel must be "server" or "client"')
        ref, ref_ok = self.ref(v.get("ruleset", _ABSENT), ptr + "/ruleset")
        p = _Parser("BUNDLE_INVALID", manifest=True)
        rs = p.body(v, ptr)
        self.diags.extend(p.diags)
        # The definitions' own shape is structural: a malformed one stops the load before any
        # expression is loaded, with the other structural problems.
        shapes = _function_shapes(v.get("functions"), ptr + "/functions")
        self.diags.extend(shapes)
        if rs is None:
            return None
        ft = v.get("fieldTypes", _ABSENT)
        dup = _duplicate(ft, ptr + "/fieldTypes") if _is_obj(ft) else None
        if not _is_obj(ft):
            self.err(ptr + "/fieldTypes", "fieldTypes must be an object")
        elif dup:
            self.err(dup, "a member appears more than once")
        elif not p.diags and not shapes and dumps_canonical(ft) != dumps_canonical(field_types(rs)):
            self.err(ptr + "/fieldTypes", "fieldTypes does not match the fieldTypes of the entities")
        if channel:
            for r in rs["rules"]:
                if channel not in r["channels"]:
                    self.err(r["ptr"] + "/channels", f"the rule does not belong to channel {channel}")
            for r in rs["stateRules"]:
                if channel not in r["channels"]:
                    self.err(r["ptr"] + "/channels", f"the state rule does not belong to channel {channel}")
        if not ref_ok or not channel:
            return None
        rs["id"], rs["version"] = ref["id"], ref["version"]
        return channel, ref, rs


def _duplicate(v: Any, ptr: str) -> str | None:
    """The pointer of the second occurrence of the first member named twice inside v."""
    if type(v) is DupDict:
        return f"{ptr}/{pointer_token(v.dup)}"
    if type(v) is dict:
        for k, x in v.items():
            p = _duplicate(x, f"{ptr}/{pointer_token(k)}")
            if p:
                return p
    elif type(v) is list:
        for i, x in enumerate(v):
            p = _duplicate(x, f"{ptr}/{i}")
            if p:
                return p
    return None


def _function_shapes(defs: Any, ptr: str) -> list[Diagnostic]:
    """FUNCTION_INVALID for definitions that are not objects, params missing or not arrays of
    strings, members named twice, and unknown members: what can be said of functions without loading them."""
    out: list[Diagnostic] = []
    if not _is_obj(defs):
        return out
    for name, d in defs.items():
        fp = f"{ptr}/{pointer_token(name)}"
        if not _is_obj(d):
            out.append(Diagnostic("FUNCTION_INVALID", fp, "a definition is an object {params, body}"))
            continue
        if type(d) is DupDict:  # at the second occurrence (spec/v1/README.md "Members named twice")
            out.append(Diagnostic("FUNCTION_INVALID", f"{fp}/{pointer_token(d.dup)}", f"member {d.dup} named twice"))
        if "params" not in d:
            out.append(Diagnostic("FUNCTION_INVALID", fp, "params is missing (write [] for none)"))
        for k, x in d.items():
            if k == "params":
                if type(x) is not list:
                    out.append(Diagnostic("FUNCTION_INVALID", fp + "/params", "params must be an array of names"))
                    continue
                for i, pn in enumerate(x):
                    if type(pn) is not str:
                        out.append(Diagnostic("FUNCTION_INVALID", f"{fp}/params/{i}", "a parameter name must be a string"))
            elif k not in ("body", "description"):
                out.append(Diagnostic("FUNCTION_INVALID", f"{fp}/{pointer_token(k)}", f"unknown member {k}"))
    return out


# ---- the loaded ruleset -------------------------------------------------------------------------


class RequestError(Exception):
    """An evaluation request refused by the shape check: BAD_REQUEST at a pointer."""

    code = "BAD_REQUEST"

    def __init__(self, pointer: str, message: str) -> None:
        super().__init__(f"BAD_REQUEST at {pointer!r}: {message}")
        self.pointer = pointer
        self.message = message


_REQUEST_MEMBERS = ["actor", "ctx", "data", "locale", "original", "ruleset", "view"]
_VIEW_MEMBERS = LOCATION


def check_request(req: Any) -> None:
    """The shape check of evaluation.md §1; raises RequestError with the first problem."""
    if not _is_obj(req):
        raise RequestError("", f"the request must be a JSON object, got {_kind(req)}")
    if type(req) is DupDict:
        raise RequestError(f"/{pointer_token(req.dup)}", f"member {req.dup!r} appears more than once")
    for k in req:
        if k not in _REQUEST_MEMBERS:
            raise RequestError(f"/{pointer_token(k)}", f"unknown member {k!r}")
    if "data" not in req:
        raise RequestError("", "the request lacks the member data (an object or null)")
    for k in _REQUEST_MEMBERS:
        if k not in req:
            continue
        v = req[k]
        ptr = "/" + k
        if k in ("actor", "ctx", "data", "original"):
            if v is not None and not _is_obj(v):
                raise RequestError(ptr, f"{k} must be an object or null, got {_kind(v)}")
            _check_value(v, ptr)
        elif k == "locale":
            if v is not None and (type(v) is not str or not valid_tag(v)):
                raise RequestError(ptr, "locale must be null or a language tag of at most 35 characters")
        elif k == "ruleset":
            if type(v) is not str or v == "" or len(v.encode("utf-8", "surrogatepass")) > 256:
                raise RequestError(ptr, "ruleset must be a non-empty string of at most 256 bytes")
        elif k == "view":
            if v is None:
                continue
            if not _is_obj(v):
                raise RequestError(ptr, f"view must be null or an object, got {_kind(v)}")
            if type(v) is DupDict:
                raise RequestError(f"{ptr}/{pointer_token(v.dup)}", f"member {v.dup!r} appears more than once")
            for vk, vv in v.items():
                if vk not in _VIEW_MEMBERS:
                    raise RequestError(f"{ptr}/{pointer_token(vk)}", f"unknown member {vk!r} in view")
                if type(vv) is not str or vv == "" or len(vv.encode("utf-8", "surrogatepass")) > 256:
                    raise RequestError(f"{ptr}/{vk}", f"view.{vk} must be a non-empty string of at most 256 bytes")


def _check_value(v: Any, ptr: str) -> None:
    p = find_problem(v, ptr, 64)
    if p is None:
        return
    what, where = p
    if what == "depth":
        raise RequestError(ptr, f"{ptr[1:]} is nested more than 64 deep")
    if what == "number":
        raise RequestError(where, "a number beyond the range of a double")
    raise RequestError(where, "an object names a member twice")


class _Rule:
    """A compiled rule of one channel."""

    __slots__ = ("id", "code", "severity", "target", "scope", "location", "when", "params", "key", "failed", "runs_on")
    id: str
    code: str
    severity: str
    target: dict[str, Any]
    scope: str
    location: dict[str, str]
    when: Fn
    params: list[tuple[str, Fn]]
    key: str
    failed: bool  # reaches a custom operator the host did not supply
    runs_on: Optional[str]  # "fields", "type" or None (the whole record)


class _StateRule:
    """A compiled state rule of one channel."""

    __slots__ = ("id", "target", "scope", "when", "effects", "failed", "location")
    id: str
    target: dict[str, Any]
    scope: str
    when: Fn
    effects: list[tuple[str, list[tuple[str, Fn]]]]
    failed: bool
    location: dict[str, str]


class RuleSet:
    """A loaded ruleset: one or two channels of compiled rules, ready to evaluate requests."""

    def __init__(self) -> None:
        self.ref: dict[str, str] = {}
        self.channels: dict[str, dict[str, Any]] = {}
        self.manifests: dict[str, dict[str, Any]] = {}
        self.required_operators: list[str] = []
        self.missing_operators: list[str] = []
        self.work_limit = DEFAULT_WORK_LIMIT

    # ---- loading ----

    @classmethod
    def from_bundle(cls, bundle: Any, operators: Optional[Mapping[str, CustomOperator]] = None) -> "RuleSet":
        """Load a bundle (a parsed JSON object). `operators` are the custom operators the host
        supplies. Raises LoadError with every diagnostic."""
        bundle = from_host(bundle)
        r = _Reader()
        if not _is_obj(bundle):
            r.err("", "a bundle must be a JSON object")
            raise LoadError(r.diags)
        if not r.version(bundle, ""):
            raise LoadError(r.diags)
        if type(bundle) is DupDict:
            r.err(f"/{pointer_token(bundle.dup)}", f"member {bundle.dup!r} appears more than once")
        for k in bundle:
            if k not in ("formatVersion", "ruleset", SERVER, CLIENT):
                r.err(f"/{pointer_token(k)}", f"unknown member {k!r} in a bundle")
        ref, _ = r.ref(bundle.get("ruleset", _ABSENT), "/ruleset")
        loaded = []
        for ch in (SERVER, CLIENT):
            if ch not in bundle:
                r.err("", f"the bundle lacks the {ch} manifest")
                continue
            m = r.manifest(bundle[ch], "/" + ch)
            if m is None:
                continue
            channel, mref, rs = m
            if channel != ch:
                r.err(f"/{ch}/channel", f"the {ch} manifest says channel {channel}")
            if mref != ref:
                r.err(f"/{ch}/ruleset", f"the {ch} manifest names a different ruleset than the bundle")
            loaded.append((ch, rs, bundle[ch]))
        if r.diags:
            raise LoadError(r.diags)
        return cls._build(ref, loaded, operators)

    @classmethod
    def from_manifest(cls, manifest: Any, operators: Optional[Mapping[str, CustomOperator]] = None) -> "RuleSet":
        """Load one channel's manifest; the ruleset then has that one channel."""
        manifest = from_host(manifest)
        r = _Reader()
        m = r.manifest(manifest, "")
        if r.diags or m is None:
            if not r.diags:
                r.err("", "the manifest could not be read")
            raise LoadError(r.diags)
        channel, ref, rs = m
        return cls._build(ref, [(channel, rs, manifest)], operators)

    @classmethod
    def _build(cls, ref: dict[str, str], loaded: list[tuple[str, dict[str, Any], Any]],
               operators: Optional[Mapping[str, CustomOperator]]) -> "RuleSet":  # fmt: skip
        self = cls()
        self.ref = dict(ref)
        supplied = dict(operators or {})
        diags: list[Diagnostic] = []
        required: set[str] = set()
        for ch, rs, raw in loaded:
            declared = [o["name"] for o in rs["operators"]]
            # The manifests of one bundle declare the same operators; should they not, the last
            # read (client) is reported, as by the reference engine. Each channel still fails
            # closed on its own missing operators.
            required = set(declared)
            impls = {k: v for k, v in supplied.items() if k in declared}
            _, compiled = _compile_expressions(rs, impls, declared, diags)
            self.channels[ch] = self._prepare(rs, compiled, impls)
            self.manifests[ch] = raw
        if diags:
            raise LoadError(diags)
        self.required_operators = sorted(required)
        self.missing_operators = sorted(o for o in required if o not in supplied)
        return self

    def _prepare(self, rs: dict[str, Any], compiled: dict[str, Any], impls: Mapping[str, Any]) -> dict[str, Any]:
        rules = []
        for r, (when, params, ops) in zip(rs["rules"], compiled["rules"]):
            x = _Rule()
            x.id, x.code, x.severity, x.target, x.scope = r["id"], r["code"], r["severity"], r["target"], r["scope"]
            x.location = {lvl: r["target"][lvl] for lvl in LOCATION if lvl in r["target"]}
            x.when, x.params, x.key = when, params, r["key"]
            x.failed = any(o not in impls for o in ops)
            x.runs_on = "fields" if "fields" in r["target"] else ("type" if "type" in r["target"] else None)
            rules.append(x)
        states = []
        for r, (when, effects, ops) in zip(rs["stateRules"], compiled["stateRules"]):
            s = _StateRule()
            s.id, s.target, s.scope, s.when, s.effects = r["id"], r["target"], r["scope"], when, effects
            s.failed = any(o not in impls for o in ops)
            s.location = {lvl: r["target"][lvl] for lvl in LOCATION if lvl in r["target"]}
            states.append(s)
        bound: dict[str, list[tuple[str, bool, str]]] = {}
        for e in sorted(rs["entities"], key=lambda e: _utf16(e["name"])):
            for f in sorted(e["fields"], key=lambda f: _utf16(f["field"])):
                bound.setdefault(f["type"], []).append((e["path"], e["many"], f["field"]))
        catalogs = [(c["tag"].lower(), c["parsed"]) for c in rs["locales"]]
        default = rs["defaultLocale"].lower()
        return {"rules": rules, "stateRules": states, "bound": bound, "catalogs": catalogs,
                "defaultLocale": default, "chains": {None: [default]}}  # fmt: skip

    # ---- evaluation ----

    def evaluate(self, request: Any, channel: Optional[str] = None) -> dict[str, Any]:
        """Evaluate a request (evaluation.md). Raises RequestError for a request that fails the
        shape check and LookupError (CHANNEL_UNAVAILABLE) for a channel the ruleset lacks."""
        check_request(request)
        if "ruleset" in request and request["ruleset"] != self.ref.get("id"):
            raise RequestError("/ruleset", f"the request names ruleset {request['ruleset']!r}, not {self.ref.get('id')!r}")
        return self.evaluate_checked(request, channel)

    def channel_of(self, channel: Optional[str]) -> dict[str, Any]:
        if channel is None:
            channel = SERVER if SERVER in self.channels or len(self.channels) != 1 else next(iter(self.channels))
        ch = self.channels.get(channel)
        if ch is None:
            raise ChannelUnavailable(f"the ruleset {self.ref.get('id')} has no {channel} channel")
        return ch

    def evaluate_checked(self, request: dict[str, Any], channel: Optional[str] = None) -> dict[str, Any]:
        """Evaluate a request that already passed check_request (as a host that decoded and
        checked it once does)."""
        ch = self.channel_of(channel)
        data = request.get("data")
        roots = {"data": data, "original": request.get("original"), "actor": request.get("actor"), "ctx": request.get("ctx")}
        view = request.get("view") or None
        locale = request.get("locale")
        chain = ch["chains"].get(locale)
        if chain is None:
            chain = _locale_chain(locale, ch["defaultLocale"])
        # One context for the whole request: bindings and calls restore what they change, so the
        # environment dict of a run is shared, never copied.
        ctx = Context.__new__(Context)
        ctx.limit = self.work_limit
        findings: list[dict[str, Any]] = []
        # value and field are null outside runs on a field, as an unknown root reads.
        env = roots
        env["value"] = None
        env["field"] = None
        for r in ch["rules"]:
            if view is not None and not _in_view(r.scope, r.target, view):
                continue
            if r.runs_on is None:
                f = self._run_rule(r, env, None, chain, ch, ctx)
                if f is not None:
                    findings.append(f)
                continue
            for field, value in self._runs(r, data, ch):
                env["value"] = value
                env["field"] = field
                f = self._run_rule(r, env, field, chain, ch, ctx)
                if f is not None:
                    findings.append(f)
            env["value"] = env["field"] = None
        states: dict[str, dict[str, Any]] = {}
        for s in ch["stateRules"]:
            if view is not None and not _in_view(s.scope, s.target, view):
                continue
            f = self._run_state(s, roots, states, chain, ch, ctx)
            if f is not None:
                findings.append(f)
        return {"ruleset": dict(self.ref), "findings": findings, "states": states}

    def _runs(self, r: _Rule, data: Any, ch: dict[str, Any]) -> list[tuple[str, Any]]:
        if r.runs_on == "fields":
            runs: list[tuple[str, Any]] = []
            for f in r.target["fields"]:
                segs = f.split(".")
                if "*" in segs:
                    _expand(data, segs, "", runs)  # every element of an array at each "*" (ruleset.md §3)
                else:
                    runs.append((f, _read(data, f)))
            return runs
        out: list[tuple[str, Any]] = []
        for path, many, field in ch["bound"].get(r.target["type"], ()):
            if many:
                lst = _read(data, path)
                if type(lst) is list:
                    for i, el in enumerate(lst):
                        out.append((f"{path}.{i}.{field}", _read(el, field)))
            else:
                fp = f"{path}.{field}"
                out.append((fp, _read(data, fp)))
        return out

    def _finding(self, code: str, severity: str, message: str, rule: str, field: Optional[str], location: dict[str, str]) -> dict[str, Any]:
        f: dict[str, Any] = {"code": code, "severity": severity, "message": message, "rule": rule}
        if field is not None:
            f["field"] = field
        f["location"] = dict(location)  # always present, {} when the target names no place
        return f

    def _failed(self, rule_id: str, reason: str, field: Optional[str], location: dict[str, str], chain: list[str], ch: dict[str, Any]) -> dict[str, Any]:
        params = {"rule": rule_id, "reason": reason, "field": field}
        tpl = _lookup(ch["catalogs"], chain, "RULE_FAILED")
        if tpl is None:
            msg = f"rule {rule_id} failed closed: {reason}"
        else:
            msg = _render(tpl, params)
        return self._finding("RULE_FAILED", "error", msg, rule_id, field, location)

    def _run_rule(self, r: _Rule, env: dict[str, Any], field: Optional[str], chain: list[str], ch: dict[str, Any], ctx: Context) -> Optional[dict[str, Any]]:
        if r.failed:
            return self._failed(r.id, "OPERATOR_UNAVAILABLE", field, r.location, chain, ch)
        ctx.roots = ctx.vars = env
        ctx.work = 0
        try:
            w = r.when(ctx)
            if w is None or w is False:
                return None
            if w is not True:
                return self._failed(r.id, "EVALUATION_ERROR", field, r.location, chain, ch)
            params: dict[str, Any] = {}
            for name, f in r.params:
                params[name] = finish(f(ctx), ctx)
        except EvalError as e:
            return self._failed(r.id, e.code, field, r.location, chain, ch)
        if "field" not in params:
            params["field"] = field
        if "value" not in params:
            params["value"] = env.get("value")
        tpl = _lookup(ch["catalogs"], chain, r.key)
        try:
            msg = _render(tpl, params) if tpl is not None else r.key
        except NumberRangeError:
            return self._failed(r.id, "EVALUATION_ERROR", field, r.location, chain, ch)
        return self._finding(r.code, r.severity, msg, r.id, field, r.location)

    def _run_state(self, s: _StateRule, env: dict[str, Any], states: dict[str, dict[str, Any]], chain: list[str], ch: dict[str, Any], ctx: Context) -> Optional[dict[str, Any]]:
        loc = s.location
        if s.failed:
            return self._failed(s.id, "OPERATOR_UNAVAILABLE", None, loc, chain, ch)
        ctx.roots = ctx.vars = env
        ctx.work = 0
        try:
            w = s.when(ctx)
            if w is None or w is False:
                return None
            if w is not True:
                return self._failed(s.id, "EVALUATION_ERROR", None, loc, chain, ch)
            pending = []
            for field, props in s.effects:
                for name, f in props:
                    v = finish(f(ctx), ctx)
                    if name != "value" and type(v) is not bool:
                        return self._failed(s.id, "EVALUATION_ERROR", None, loc, chain, ch)
                    pending.append((field, name, v))
        except EvalError as e:
            return self._failed(s.id, e.code, None, loc, chain, ch)
        for field, name, v in pending:
            st = states.get(field)
            if st is None:
                st = states[field] = {}
            st[name] = v
        return None


class ChannelUnavailable(LookupError):
    code = "CHANNEL_UNAVAILABLE"


_SPLIT_CACHE: dict[str, list[str]] = {}


def _expand(v: Any, segs: list[str], path: str, out: list[tuple[str, Any]]) -> None:
    """Appends a run for each path under v that segs names, "*" standing for every element of an
    array (none when the value there is not one); path is where v is."""
    for k, s in enumerate(segs):
        if s == "*":
            if type(v) is list:
                for i, el in enumerate(v):
                    _expand(el, segs[k + 1:], f"{path}.{i}" if path else str(i), out)
            return
        v = _read(v, s)
        path = f"{path}.{s}" if path else s
    out.append((path, v))


def _read(v: Any, path: str) -> Any:
    segs = _SPLIT_CACHE.get(path)
    if segs is None:
        segs = path.split(".")
        if len(_SPLIT_CACHE) < 4096:
            _SPLIT_CACHE[path] = segs
    for seg in segs:
        t = type(v)
        if t is dict:
            v = v.get(seg)
        elif t is list and seg.isascii() and seg.isdigit():
            i = int(seg)
            v = v[i] if i < len(v) else None
        else:
            return None
    return v


def _in_view(scope: str, target: dict[str, Any], view: dict[str, str]) -> bool:
    """evaluation.md §3."""
    if scope in ("project", "module"):
        return True
    for lvl in LOCATION:
        a, b = view.get(lvl), target.get(lvl)
        if a is not None and b is not None and a != b:
            return False
        if lvl == scope:
            break
    return True


def _locale_chain(locale: Optional[str], default: str) -> list[str]:
    chain: list[str] = []
    if locale:
        tag = locale.lower()
        while True:
            chain.append(tag)
            i = tag.rfind("-")
            if i < 0:
                break
            tag = tag[:i]
    chain.append(default)
    return chain


def _lookup(catalogs: list[tuple[str, dict[str, Any]]], chain: list[str], key: str) -> Optional[list[tuple[bool, str]]]:
    for tag in chain:
        for ctag, parsed in catalogs:
            if ctag == tag and key in parsed:
                return parsed[key]
    return None


def _render(parts: list[tuple[bool, str]], params: Mapping[str, Any]) -> str:
    out = []
    for is_param, text in parts:
        if not is_param:
            out.append(text)
        elif text in params:
            out.append(_param_text(params[text]))
        else:
            out.append("{" + text + "}")
    return "".join(out)


def _param_text(v: Any) -> str:
    """A message parameter as text (evaluation.md §4): a string as it is, a number in canonical
    form, true/false, null as nothing, arrays and objects as canonical JSON."""
    t = type(v)
    if v is None:
        return ""
    if t is str:
        return v
    if t is bool:
        return "true" if v else "false"
    if t is float:
        return canonical_text(v)
    return dumps_canonical(v, exact=False)
