// Engine: the host's entry point for expressions outside rulesets: custom operators registered
// once, then expressions (with functions) loaded and evaluated, as the protocol's expression
// command does.

import { JSONObject, JSONValue, parseJSON } from "./json.js";
import { Compiled, Compiler, CustomOperator, DEFAULT_BUDGET, canonicalValue, run } from "./expr.js";
import { LoadError, LoadOptions, Operators, RequestError, RuleSet, bundle, checkHostValue, envProblem } from "./rules.js";
import { sortDiagnostics } from "./ruleset.js";

/** Options of Engine.expression. */
export interface ExpressionOptions {
  /** function definitions {name: {params, body}} */
  functions?: JSONObject;
  /** custom operators the expression may use (default: every registered one) */
  operators?: string[];
}

/** An environment checked once by Engine.prepareEnv, to evaluate many expressions against. */
export interface PreparedEnv {
  readonly roots: JSONObject;
  readonly checked: true;
}

const preparedMark = Symbol("sdods.prepared");

/** A loaded expression: evaluate it any number of times. */
export interface LoadedExpression {
  /** the custom operators it reaches (directly or through functions) */
  readonly operators: string[];
  /** evaluates against environment roots (checked on every call); throws RequestError or EvaluationError */
  evaluate(env?: JSONObject): JSONValue;
  /** evaluates against an environment checked once by Engine.prepareEnv; throws EvaluationError */
  evaluatePrepared(env: PreparedEnv): JSONValue;
}

/** An engine: the host's custom operators and work budget, shared by what it loads. */
export class Engine {
  private readonly ops: Map<string, CustomOperator>;

  constructor(opts: { operators?: Operators; budget?: number } = {}) {
    const o = opts.operators;
    this.ops = o instanceof Map ? new Map(o) : new Map(Object.entries((o ?? {}) as Record<string, CustomOperator>));
    this.budget = opts.budget ?? DEFAULT_BUDGET;
  }

  private readonly budget: number;

  /** Registers (or replaces) a custom operator; its name must start with x-. */
  register(name: string, impl: CustomOperator): this {
    if (!(name.length > 2 && name.startsWith("x-"))) throw new Error(`custom operator names start with x-: ${name}`);
    this.ops.set(name, impl);
    return this;
  }

  /** Loads a bundle with this engine's operators (RuleSet.fromBundle). */
  fromBundle(b: unknown, opts: Omit<LoadOptions, "operators"> = {}): RuleSet {
    return RuleSet.fromBundle(b, { budget: this.budget, ...opts, operators: this.ops });
  }

  /** Loads a manifest with this engine's operators (RuleSet.fromManifest). */
  fromManifest(m: unknown, opts: Omit<LoadOptions, "operators"> = {}): RuleSet {
    return RuleSet.fromManifest(m, { budget: this.budget, ...opts, operators: this.ops });
  }

  /** Compiles a source ruleset into a bundle (see bundle). */
  compile(source: unknown) {
    return bundle(source);
  }

  /**
   * Checks an environment once (each root at most 64 deep, numbers within double range, valid
   * text) for evaluatePrepared; throws RequestError. The roots must not change afterwards.
   */
  prepareEnv(env: JSONObject): PreparedEnv {
    const p = envProblem(env);
    if (p) throw new RequestError(p.pointer, p.message);
    const out = { roots: env, checked: true, [preparedMark]: true } as PreparedEnv;
    return out;
  }

  /** Loads an expression (JSON text or value); throws LoadError with every diagnostic. */
  expression(expr: unknown, opts: ExpressionOptions = {}): LoadedExpression {
    let raw: JSONValue;
    if (typeof expr === "string") {
      try {
        raw = parseJSON(expr);
      } catch (e) {
        throw new LoadError([{ code: "EXPRESSION_INVALID", pointer: "", message: `malformed JSON: ${(e as Error).message}` }]);
      }
    } else {
      checkHostValue(expr);
      raw = expr as JSONValue;
    }
    if (opts.functions) checkHostValue(opts.functions, "/functions");
    const declared = new Set(opts.operators ?? [...this.ops.keys()]);
    const c = new Compiler({ declared, registered: new Map([...this.ops].filter(([k]) => declared.has(k))) });
    if (opts.functions) c.defineFunctions(opts.functions, "/functions");
    const compiled: Compiled = c.expression(raw, "");
    if (c.diags.length > 0) throw new LoadError(sortDiagnostics(c.diags));
    const budget = this.budget;
    // one frame reused by the evaluations of this expression (a nested evaluation of the same
    // expression, from a custom operator, gets its own)
    const frame = { roots: {} as JSONObject, locals: new Array<JSONValue>(compiled.frameSize), budget: { left: budget } };
    let busy = false;
    const runPrepared = (roots: JSONObject): JSONValue => {
      if (busy) return run(compiled, roots, budget);
      busy = true;
      try {
        frame.roots = roots;
        frame.budget.left = budget;
        const v = compiled.ev(frame);
        return typeof v === "object" || typeof v === "number" ? canonicalValue(v, "") : v;
      } finally {
        busy = false;
      }
    };
    return {
      operators: [...compiled.ops].sort(),
      evaluate(env: JSONObject = {}): JSONValue {
        const p = envProblem(env);
        if (p) throw new RequestError(p.pointer, p.message);
        return canonicalValue(run(compiled, env, budget), "");
      },
      evaluatePrepared(env: PreparedEnv): JSONValue {
        if ((env as unknown as Record<symbol, unknown>)[preparedMark] !== true) throw new Error("evaluatePrepared takes an environment from Engine.prepareEnv");
        return runPrepared(env.roots);
      },
    };
  }
}
