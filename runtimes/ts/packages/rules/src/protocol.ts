// The engine protocol (protocol.md): one JSON request per line in, one response per line out.
// Members are checked completely before any ruleset is looked up or anything is loaded.

import { JSONObject, JSONValue, duplicateMember, hasMember, isObject, memberNames, parseJSON, decodeUTF8 } from "./json.js";
import { Compiler, CustomOperator, EvaluationError, canonicalValue, run, suiteOperators } from "./expr.js";
import { ChannelError, LoadError, RequestError, RuleSet, bundle, requestProblem, envProblem } from "./rules.js";
import { sortDiagnostics } from "./ruleset.js";
import { VERSION } from "./version.js";

type Check = (v: JSONValue) => boolean;
const isStr: Check = (v) => typeof v === "string";
const isObj: Check = (v) => isObject(v);
const isChannel: Check = (v) => v === "server" || v === "client";
const isNames: Check = (v) => Array.isArray(v) && v.every((x) => typeof x === "string" && x !== "");
const any: Check = () => true;

interface Spec {
  members: Record<string, Check>;
  required: string[];
}

const COMMANDS: Record<string, Spec> = {
  version: { members: {}, required: [] },
  load: { members: { bundle: isObj, manifest: isObj, channel: isChannel, registered: isNames }, required: [] },
  manifest: { members: { ruleset: isStr, channel: isChannel }, required: ["ruleset", "channel"] },
  evaluate: { members: { ruleset: isStr, request: isObj, channel: isChannel }, required: ["ruleset", "request"] },
  expression: { members: { expression: any, env: isObj, functions: isObj, operators: isNames, registered: isNames }, required: ["expression"] },
  compile: { members: { source: isObj }, required: ["source"] },
};

class ProtocolError extends Error {
  constructor(readonly code: string, message: string, readonly pointer?: string) {
    super(message);
  }
}

/** An engine protocol session: the rulesets loaded so far and the host's custom operators. */
export class ProtocolSession {
  private readonly rulesets = new Map<string, RuleSet>();

  constructor(private readonly operators: ReadonlyMap<string, CustomOperator> = suiteOperators, private readonly name = "sdods-ts") {}

  /**
   * Handles one line, as its bytes (which must be well-formed UTF-8) or as a string; returns the
   * response line (without a line feed), or null for a blank line. A line that is not UTF-8 or
   * escapes a lone surrogate is malformed (spec/v1/README.md, "Text"): PROTOCOL_INVALID, id null.
   */
  handle(line: string | Uint8Array): string | null {
    let id: JSONValue = null;
    try {
      let req: JSONValue;
      try {
        const text = typeof line === "string" ? line : decodeUTF8(line);
        if (text.trim() === "") return null;
        req = parseJSON(text);
      } catch (e) {
        throw new ProtocolError("PROTOCOL_INVALID", `not one JSON object: ${(e as Error).message}`);
      }
      if (!isObject(req)) throw new ProtocolError("PROTOCOL_INVALID", "a request is a JSON object");
      const dup = duplicateMember(req);
      const idOK = hasMember(req, "id") && (typeof req.id === "string" || typeof req.id === "number") && dup !== "id";
      if (idOK) id = req.id;
      if (dup !== undefined) throw new ProtocolError("PROTOCOL_INVALID", `member ${JSON.stringify(dup)} appears more than once`);
      if (!idOK) throw new ProtocolError("PROTOCOL_INVALID", "id must be present and a string or a number");
      if (!hasMember(req, "cmd") || typeof req.cmd !== "string") throw new ProtocolError("PROTOCOL_INVALID", "cmd must be present and a string");
      const result = this.command(req);
      return JSON.stringify({ id, result });
    } catch (e) {
      return JSON.stringify({ id, ...this.failure(e) });
    }
  }

  private failure(e: unknown): { error: JSONObject } | { skipped: JSONObject } {
    if (e instanceof ProtocolError) {
      const err: JSONObject = { code: e.code, message: e.message };
      if (e.pointer !== undefined) err.pointer = e.pointer;
      return { error: err };
    }
    if (e instanceof LoadError) {
      return {
        error: {
          code: e.code, message: e.message, pointer: e.pointer,
          diagnostics: e.diagnostics.map((d) => ({ code: d.code, pointer: d.pointer, message: d.message })),
        },
      };
    }
    if (e instanceof RequestError || e instanceof ChannelError || e instanceof EvaluationError)
      return { error: { code: e.code, message: e.message, pointer: e.pointer } };
    console.error(`internal error: ${e instanceof Error ? e.stack : String(e)}`);
    return { error: { code: "INTERNAL", message: "a defect of the engine", pointer: "" } };
  }

  private command(req: JSONObject): JSONValue {
    const cmd = req.cmd as string;
    if (!hasMember(COMMANDS, cmd)) throw new ProtocolError("COMMAND_UNKNOWN", `unknown command ${JSON.stringify(cmd)}`);
    const spec = COMMANDS[cmd];
    const names = memberNames(req).filter((k) => k !== "id" && k !== "cmd").sort();
    for (const k of names) {
      if (!hasMember(spec.members, k)) throw new ProtocolError("PROTOCOL_INVALID", `${cmd} does not take the member ${JSON.stringify(k)}`);
    }
    for (const k of Object.keys(spec.members).sort()) {
      if (!hasMember(req, k)) {
        if (spec.required.includes(k)) throw new ProtocolError("PROTOCOL_INVALID", `${cmd} needs the member ${JSON.stringify(k)}`);
        continue;
      }
      if (!spec.members[k](req[k])) throw new ProtocolError("PROTOCOL_INVALID", `member ${JSON.stringify(k)} of ${cmd} has the wrong type or value`);
    }
    if (cmd === "load" && hasMember(req, "bundle") === hasMember(req, "manifest"))
      throw new ProtocolError("PROTOCOL_INVALID", "load takes exactly one of bundle and manifest");
    switch (cmd) {
      case "version":
        return {
          name: this.name, version: VERSION, spec: "1.0", protocol: 1, levels: ["evaluator", "compiler"],
          operators: [...this.operators.keys()].sort(),
        };
      case "load":
        return this.load(req);
      case "manifest": {
        const rs = this.lookup(req.ruleset as string);
        return rs.manifest(req.channel as "server" | "client");
      }
      case "evaluate": {
        const p = requestProblem(req.request, req.ruleset as string);
        if (p) throw new RequestError(p.pointer, p.message);
        const rs = this.lookup(req.ruleset as string);
        return rs.evaluate(req.request as JSONObject, req.channel as "server" | "client" | undefined) as unknown as JSONValue;
      }
      case "expression":
        return this.expression(req);
      case "compile": {
        const b = bundle(req.source);
        return { ruleset: { ...b.ruleset }, bundle: b.bundle };
      }
    }
    throw new ProtocolError("COMMAND_UNKNOWN", `unknown command ${JSON.stringify(cmd)}`);
  }

  private registered(req: JSONObject): Map<string, CustomOperator> {
    if (!hasMember(req, "registered")) return new Map(this.operators);
    const out = new Map<string, CustomOperator>();
    for (const n of req.registered as string[]) {
      const impl = this.operators.get(n);
      if (impl) out.set(n, impl);
    }
    return out;
  }

  private lookup(id: string): RuleSet {
    const rs = this.rulesets.get(id);
    if (!rs) throw new ProtocolError("RULESET_NOT_LOADED", `no ruleset ${JSON.stringify(id)} is loaded`, "");
    return rs;
  }

  private load(req: JSONObject): JSONValue {
    const opts = { operators: this.registered(req), channel: req.channel as "server" | "client" | undefined };
    const rs = hasMember(req, "bundle") ? RuleSet.fromBundle(req.bundle, opts) : RuleSet.fromManifest(req.manifest, opts);
    this.rulesets.set(rs.ref.id, rs);
    return { ruleset: { ...rs.ref }, channels: rs.channels, requiredOperators: rs.requiredOperators, missingOperators: rs.missingOperators };
  }

  private expression(req: JSONObject): JSONValue {
    const env = (hasMember(req, "env") ? req.env : Object.create(null)) as JSONObject;
    // protocol.md, expression: a root named twice; then every root's depth; then each root
    // completely (numbers, members named twice inside), roots in code point order
    const p = envProblem(env);
    if (p) throw new RequestError(p.pointer, p.message);
    const declared = new Set((req.operators as string[] | undefined) ?? []);
    const reg = this.registered(req);
    const c = new Compiler({ declared, registered: new Map([...reg].filter(([k]) => declared.has(k))) });
    if (hasMember(req, "functions")) c.defineFunctions(req.functions as JSONObject, "/functions");
    const compiled = c.expression(req.expression, "");
    if (c.diags.length > 0) throw new LoadError(sortDiagnostics(c.diags));
    const v = run(compiled, env);
    return { value: canonicalValue(v, "") };
  }
}
