// The portable pattern subset of patterns.md: a validator that reports the first violation at the
// offset the spec fixes, and a Thompson automaton simulated over code points so that matching
// takes time proportional to (expanded size) × (subject length) whatever the pattern — never
// JavaScript's backtracking RegExp.

import { wellFormed } from "./json.js";

/** Why a pattern is outside the portable subset: a code point offset and a message. */
export interface PatternProblem {
  offset: number;
  message: string;
}

type Range = [number, number];

type Node =
  | { t: "char"; lo: Range[]; neg: boolean }
  | { t: "bol" }
  | { t: "eol" }
  | { t: "cat"; xs: Node[] }
  | { t: "alt"; xs: Node[] }
  | { t: "group"; x: Node }
  | { t: "rep"; x: Node; min: number; max: number }; // max -1: unbounded

const MAX = 1000;
const syntaxChars = new Set("^$\\.*+?()[]{}|".split("").map((c) => c.codePointAt(0)!));
const digitR: Range[] = [[0x30, 0x39]];
const wordR: Range[] = [[0x30, 0x39], [0x41, 0x5a], [0x5f, 0x5f], [0x61, 0x7a]];

class Refusal {
  constructor(readonly offset: number, readonly message: string) {}
}

const isHex = (c: number) => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;

interface Parsed {
  node: Node;
  /** largest running product of counts of any atom inside (rule 9) */
  prod: number;
  /** contains an unbounded quantifier at any depth (rule 8) */
  unbounded: boolean;
}

class Parser {
  i = 0;
  constructor(readonly cp: number[]) {}

  refuse(offset: number, message: string): never {
    throw new Refusal(offset, message);
  }

  peek(k = 0): number {
    const j = this.i + k;
    return j < this.cp.length ? this.cp[j] : -1;
  }

  alternation(): Parsed {
    const xs: Parsed[] = [];
    for (;;) {
      const c = this.peek();
      if (c === -1 || c === 0x7c || c === 0x29) this.refuse(this.i, "an empty branch (write (?:a)? instead)");
      xs.push(this.branch());
      if (this.peek() === 0x7c) {
        this.i++;
        continue;
      }
      break;
    }
    if (xs.length === 1) return xs[0];
    return {
      node: { t: "alt", xs: xs.map((x) => x.node) },
      prod: Math.max(...xs.map((x) => x.prod)),
      unbounded: xs.some((x) => x.unbounded),
    };
  }

  branch(): Parsed {
    const xs: Parsed[] = [];
    for (;;) {
      const c = this.peek();
      if (c === -1 || c === 0x7c || c === 0x29) break;
      xs.push(this.piece());
    }
    if (xs.length === 1) return xs[0];
    return {
      node: { t: "cat", xs: xs.map((x) => x.node) },
      prod: Math.max(...xs.map((x) => x.prod)),
      unbounded: xs.some((x) => x.unbounded),
    };
  }

  isQuant(c: number): boolean {
    return c === 0x2a || c === 0x2b || c === 0x3f || c === 0x7b;
  }

  piece(): Parsed {
    const c = this.peek();
    if (c === 0x5e || c === 0x24) {
      this.i++;
      if (this.isQuant(this.peek())) this.refuse(this.i, "a quantifier after an anchor has nothing to repeat");
      return { node: { t: c === 0x5e ? "bol" : "eol" }, prod: 0, unbounded: false };
    }
    const atom = this.atom();
    const q0 = this.i;
    const q = this.peek();
    if (!this.isQuant(q)) return atom;
    let min: number;
    let max: number;
    if (q === 0x7b) {
      const cnt = this.count();
      if (!cnt) this.refuse(q0, "a '{' that does not start a count {n}, {n,} or {n,m}");
      [min, max] = cnt;
    } else {
      this.i++;
      [min, max] = q === 0x2a ? [0, -1] : q === 0x2b ? [1, -1] : [0, 1];
    }
    if (this.peek() === 0x3f) this.i++; // lazy: same answer
    const repeating = max === -1 || max >= 2;
    if (atom.node.t === "group" && repeating && atom.unbounded)
      this.refuse(q0, "a repeating group holds an unbounded quantifier");
    const value = max === -1 ? Math.max(min, 1) : max;
    let prod: number;
    if (value === 0) prod = 1;
    else {
      prod = Math.max(atom.prod, 1) * value;
      if (prod > MAX) this.refuse(q0, "nested counts multiply to more than 1000");
    }
    if (this.isQuant(this.peek())) this.refuse(this.i, "a quantifier after a quantifier");
    return {
      node: { t: "rep", x: atom.node, min, max },
      prod,
      unbounded: atom.unbounded || max === -1,
    };
  }

  count(): [number, number] | null {
    const cp = this.cp;
    let j = this.i + 1;
    const num = (): number | null => {
      const s = j;
      if (j < cp.length && cp[j] === 0x30) {
        j++;
        return 0;
      }
      while (j < cp.length && isDigit(cp[j])) j++;
      if (j === s) return null;
      if (j - s > 4) return 10000;
      return Number(String.fromCodePoint(...cp.slice(s, j)));
    };
    const n = num();
    if (n === null) return null;
    let m = n;
    if (cp[j] === 0x2c) {
      j++;
      if (cp[j] === 0x7d) m = -1;
      else {
        const mm = num();
        if (mm === null) return null;
        m = mm;
      }
    }
    if (cp[j] !== 0x7d) return null;
    if (n > MAX || m > MAX) this.refuse(this.i, "a count above 1000");
    if (m !== -1 && n > m) this.refuse(this.i, "a count {n,m} with n greater than m");
    this.i = j + 1;
    return [n, m];
  }

  atom(): Parsed {
    const c = this.peek();
    const start = this.i;
    if (c === 0x28) {
      this.i++;
      if (this.peek() === 0x3f) {
        if (this.peek(1) !== 0x3a) this.refuse(start, "only ( and (?: groups are portable");
        this.i += 2;
      }
      const inner = this.alternation();
      if (this.peek() !== 0x29) this.refuse(this.cp.length, "a missing ')'");
      this.i++;
      return { node: { t: "group", x: inner.node }, prod: inner.prod, unbounded: inner.unbounded };
    }
    if (c === 0x2a || c === 0x2b || c === 0x3f || c === 0x7b) this.refuse(start, "a quantifier with nothing to repeat");
    if (c === 0x5d || c === 0x7d) this.refuse(start, `an unescaped '${String.fromCodePoint(c)}'`);
    if (c === 0x2e) {
      this.i++;
      return { node: { t: "char", lo: [], neg: true }, prod: 0, unbounded: false };
    }
    if (c === 0x5b) return { node: this.cls(), prod: 0, unbounded: false };
    if (c === 0x5c) {
      const e = this.escape(false);
      return { node: e, prod: 0, unbounded: false };
    }
    this.i++;
    return { node: { t: "char", lo: [[c, c]], neg: false }, prod: 0, unbounded: false };
  }

  /** Reads an escape at i (the '\'); in a class '-' is allowed. Class escapes give a class node. */
  escape(inClass: boolean): Node & { t: "char" } {
    const at = this.i;
    const e = this.peek(1);
    if (e === -1) this.refuse(at, "a lone '\\' at the end");
    if (syntaxChars.has(e) || e === 0x2f || (inClass && e === 0x2d)) {
      this.i += 2;
      return { t: "char", lo: [[e, e]], neg: false };
    }
    switch (e) {
      case 0x64: // d
      case 0x44: // D
      case 0x77: // w
      case 0x57: // W
        this.i += 2;
        return { t: "char", lo: e === 0x64 || e === 0x44 ? digitR : wordR, neg: e === 0x44 || e === 0x57 };
      case 0x6e:
        this.i += 2;
        return { t: "char", lo: [[10, 10]], neg: false };
      case 0x72:
        this.i += 2;
        return { t: "char", lo: [[13, 13]], neg: false };
      case 0x74:
        this.i += 2;
        return { t: "char", lo: [[9, 9]], neg: false };
      case 0x66:
        this.i += 2;
        return { t: "char", lo: [[12, 12]], neg: false };
      case 0x78: {
        const h1 = this.peek(2);
        const h2 = this.peek(3);
        if (h1 === -1 || h2 === -1 || !isHex(h1) || !isHex(h2)) this.refuse(at, "\\x needs exactly two hex digits");
        const v = parseInt(String.fromCharCode(h1, h2), 16);
        this.i += 4;
        return { t: "char", lo: [[v, v]], neg: false };
      }
    }
    return this.refuse(at, `the escape \\${String.fromCodePoint(e)} is not portable`);
  }

  cls(): Node {
    const open = this.i;
    this.i++;
    let neg = false;
    if (this.peek() === 0x5e) {
      neg = true;
      this.i++;
    }
    const ranges: Range[] = [];
    if (this.peek() === 0x5d) this.refuse(this.i, "an empty class");
    let first = true;
    let prevDash = false;
    for (;;) {
      const c = this.peek();
      if (c === -1) this.refuse(this.cp.length, "a missing ']'");
      if (c === 0x5d) {
        this.i++;
        break;
      }
      if (c === 0x5b) this.refuse(this.i, "an unescaped '[' inside a class");
      if (c === 0x2d) {
        if (prevDash) this.refuse(this.i, "two adjacent '-' in a class");
        if (first || this.peek(1) === 0x5d) {
          ranges.push([0x2d, 0x2d]);
          this.i++;
          first = false;
          prevDash = true;
          continue;
        }
        this.refuse(this.i, "a '-' that is neither first, last nor in a range");
      }
      prevDash = false;
      first = false;
      const at = this.i;
      const a = this.classAtom();
      if (a === null) {
        const ce = this.pendingClass.pop()!;
        ranges.push(...(ce.neg ? complement(ce.lo) : ce.lo));
        if (this.peek() === 0x2d && this.peek(1) !== 0x5d) this.refuse(at, "a class escape cannot be the end of a range");
        continue;
      }
      if (this.peek() === 0x2d && this.peek(1) !== 0x5d && this.peek(1) !== -1) {
        this.i++;
        const bAt = this.i;
        const b = this.peek();
        if (b === 0x5b) this.refuse(bAt, "an unescaped '[' inside a class");
        if (b === 0x2d) this.refuse(bAt, "two adjacent '-' in a class");
        if (b === 0x5d) this.refuse(bAt, "a range without an end");
        const bv = this.classAtom();
        if (bv === null) this.refuse(bAt, "a class escape cannot be the end of a range");
        if (a[0] > bv[0]) this.refuse(at, "a range out of order");
        ranges.push([a[0], bv[0]]);
        continue;
      }
      if (this.peek() === 0x2d && this.peek(1) === -1) this.refuse(this.cp.length, "a missing ']'");
      ranges.push(a);
    }
    void open;
    return { t: "char", lo: normalise(ranges), neg };
  }

  /** Reads one class atom; returns its code point as a range, or null for a class escape (added). */
  classAtom(): Range | null {
    const c = this.peek();
    if (c === 0x5c) {
      const at = this.i;
      const e = this.escape(true);
      const isClassEscape = this.i - at === 2 && [0x64, 0x44, 0x77, 0x57].includes(this.cp[at + 1]);
      if (isClassEscape) {
        this.pendingClass.push(e);
        return null;
      }
      return e.lo[0];
    }
    if ((c === 0x26 || c === 0x7c || c === 0x7e) && this.peek(1) === c)
      this.refuse(this.i + 1, "a doubled '" + String.fromCodePoint(c) + "' reads as a set operation in some engines");
    this.i++;
    return [c, c];
  }

  pendingClass: (Node & { t: "char" })[] = [];
}

function normalise(rs: Range[]): Range[] {
  const s = rs.slice().sort((a, b) => a[0] - b[0]);
  const out: Range[] = [];
  for (const r of s) {
    const last = out[out.length - 1];
    if (last && r[0] <= last[1] + 1) last[1] = Math.max(last[1], r[1]);
    else out.push([r[0], r[1]]);
  }
  return out;
}

function complement(rs: Range[]): Range[] {
  const out: Range[] = [];
  let next = 0;
  for (const [a, b] of rs) {
    if (a > next) out.push([next, a - 1]);
    next = b + 1;
  }
  if (next <= 0x10ffff) out.push([next, 0x10ffff]);
  return out;
}

function expandedSize(n: Node): number {
  switch (n.t) {
    case "char":
      return 1;
    case "bol":
    case "eol":
      return 0;
    case "cat":
    case "alt":
      return n.xs.reduce((s, x) => s + expandedSize(x), 0);
    case "group":
      return expandedSize(n.x);
    case "rep": {
      const v = n.max === -1 ? Math.max(n.min, 1) : n.max;
      return expandedSize(n.x) * v;
    }
  }
}

function toCodePoints(s: string): number[] {
  const out: number[] = new Array(s.length);
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        out[n++] = (c - 0xd800) * 0x400 + (d - 0xdc00) + 0x10000;
        i++;
        continue;
      }
    }
    out[n++] = c;
  }
  out.length = n;
  return out;
}

/** A compiled portable pattern. */
export class Pattern {
  private constructor(private readonly prog: Prog) {}

  /** Compiles a pattern; throws PatternError (with the offset) outside the portable subset. */
  static compile(source: string): Pattern {
    const r = parse(source);
    if ("offset" in r) throw new PatternError(r.offset, r.message);
    return new Pattern(r);
  }

  /** Whether the pattern matches anywhere in the subject (patterns.md §6). */
  test(subject: string): boolean {
    return runDfa(this.prog, subject) ?? run(this.prog, subject, null);
  }

  /** Runs the automaton and returns the answer and the number of state visits (for tests). */
  testCounting(subject: string): { match: boolean; steps: number } {
    const counter = { steps: 0 };
    const match = run(this.prog, subject, counter);
    return { match, steps: counter.steps };
  }
}

/** A pattern outside the portable subset. */
export class PatternError extends Error {
  constructor(readonly offset: number, message: string) {
    super(`pattern not portable at offset ${offset}: ${message}`);
  }
}

/** Returns why a pattern is not portable (its offset and a message), or null when it is. */
export function patternProblem(source: string): PatternProblem | null {
  const r = parse(source);
  return "offset" in r ? { offset: r.offset, message: r.message } : null;
}

function parse(source: string): Prog | PatternProblem {
  const cp = toCodePoints(wellFormed(source));
  if (cp.length > MAX) return { offset: MAX, message: "a pattern has at most 1000 code points" };
  if (cp.length === 0) return compileNFA({ t: "cat", xs: [] });
  const p = new Parser(cp);
  let root: Node;
  try {
    const r = p.alternation();
    if (p.i < cp.length) p.refuse(p.i, "an unescaped ')' with no open group");
    root = r.node;
  } catch (e) {
    if (e instanceof Refusal) return { offset: e.offset, message: e.message };
    throw e;
  }
  void p.pendingClass;
  if (expandedSize(root) > MAX) return { offset: 0, message: "the expanded size is above 1000" };
  return compileNFA(root);
}

// The automaton: states in flat arrays. Kinds: 0 char, 1 split, 2 bol, 3 eol, 4 match, 5 jump.
interface Prog {
  kind: Uint8Array;
  out1: Int32Array;
  out2: Int32Array;
  ranges: (Range[] | null)[];
  start: number;
  anchoredStart: boolean;
}

function compileNFA(root: Node): Prog {
  const kind: number[] = [];
  const out1: number[] = [];
  const out2: number[] = [];
  const ranges: (Range[] | null)[] = [];
  const add = (k: number, r: Range[] | null = null) => {
    kind.push(k);
    out1.push(-1);
    out2.push(-1);
    ranges.push(r);
    return kind.length - 1;
  };
  // A fragment: its start state and the list of dangling exits (state, which out)
  type Frag = { s: number; exits: [number, 1 | 2][] };
  const patch = (exits: [number, 1 | 2][], to: number) => {
    for (const [st, w] of exits) (w === 1 ? out1 : out2)[st] = to;
  };
  const empty = (): Frag => {
    const j = add(5);
    return { s: j, exits: [[j, 1]] };
  };
  const build = (n: Node): Frag => {
    switch (n.t) {
      case "char": {
        const rs = n.neg ? complement(n.lo) : n.lo;
        const s = add(0, rs);
        return { s, exits: [[s, 1]] };
      }
      case "bol":
      case "eol": {
        const s = add(n.t === "bol" ? 2 : 3);
        return { s, exits: [[s, 1]] };
      }
      case "group":
        return build(n.x);
      case "cat": {
        if (n.xs.length === 0) return empty();
        let f = build(n.xs[0]);
        const s = f.s;
        for (let k = 1; k < n.xs.length; k++) {
          const g = build(n.xs[k]);
          patch(f.exits, g.s);
          f = { s, exits: g.exits };
        }
        return f;
      }
      case "alt": {
        const frags = n.xs.map(build);
        let f = frags[frags.length - 1];
        for (let k = frags.length - 2; k >= 0; k--) {
          const sp = add(1);
          out1[sp] = frags[k].s;
          out2[sp] = f.s;
          f = { s: sp, exits: [...frags[k].exits, ...f.exits] };
        }
        return f;
      }
      case "rep": {
        const parts: Frag[] = [];
        for (let k = 0; k < n.min; k++) parts.push(build(n.x));
        if (n.max === -1) {
          const body = build(n.x);
          const sp = add(1);
          out1[sp] = body.s;
          patch(body.exits, sp);
          parts.push({ s: sp, exits: [[sp, 2]] });
        } else {
          // optional copies nested: (x(x(x)?)?)?
          const opt = n.max - n.min;
          let tail: Frag | null = null;
          for (let k = 0; k < opt; k++) {
            const body = build(n.x);
            const sp = add(1);
            out1[sp] = body.s;
            if (tail) {
              patch(body.exits, tail.s);
              tail = { s: sp, exits: [[sp, 2], ...tail.exits] };
            } else tail = { s: sp, exits: [[sp, 2], ...body.exits] };
          }
          if (tail) parts.push(tail);
        }
        if (parts.length === 0) return empty();
        let f = parts[0];
        const s = f.s;
        for (let k = 1; k < parts.length; k++) {
          patch(f.exits, parts[k].s);
          f = { s, exits: parts[k].exits };
        }
        return f;
      }
    }
  };
  const f = build(root);
  const m = add(4);
  patch(f.exits, m);
  return {
    kind: Uint8Array.from(kind),
    out1: Int32Array.from(out1),
    out2: Int32Array.from(out2),
    ranges,
    start: f.s,
    anchoredStart: false,
  };
}

function inRanges(rs: Range[], c: number): boolean {
  let lo = 0;
  let hi = rs.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const r = rs[mid];
    if (c < r[0]) hi = mid - 1;
    else if (c > r[1]) lo = mid + 1;
    else return true;
  }
  return false;
}

interface Buffers {
  cur: Int32Array;
  nxt: Int32Array;
  mark: Int32Array;
  stack: Int32Array;
  busy: boolean;
}

const buffers = new WeakMap<Prog, Buffers>();

function run(p: Prog, subject: string, counter: { steps: number } | null): boolean {
  const cps = toCodePoints(wellFormed(subject));
  const n = cps.length;
  const size = p.kind.length;
  // the state lists are kept per automaton and reused (a match never runs inside another)
  let b = buffers.get(p);
  if (!b || b.busy) {
    b = { cur: new Int32Array(size), nxt: new Int32Array(size), mark: new Int32Array(size), stack: new Int32Array(size * 2 + 4), busy: false };
    if (!buffers.has(p)) buffers.set(p, b);
  }
  b.busy = true;
  try {
    return runWith(p, cps, n, size, b, counter);
  } finally {
    b.busy = false;
  }
}

function runWith(p: Prog, cps: number[], n: number, size: number, b: Buffers, counter: { steps: number } | null): boolean {
  let cur = b.cur;
  let nxt = b.nxt;
  let curLen = 0;
  let nxtLen = 0;
  const mark = b.mark.fill(-1); // generation in which a state was added
  const stack = b.stack;
  let steps = 0;
  // adds the epsilon closure of s at position pos into list; returns true when match is reached
  const addState = (list: Int32Array, len: number, s0: number, pos: number, gen: number): number => {
    let sp = 0;
    stack[sp++] = s0;
    while (sp > 0) {
      const s = stack[--sp];
      if (s < 0 || mark[s] === gen) continue;
      mark[s] = gen;
      steps++;
      switch (p.kind[s]) {
        case 0:
          list[len++] = s;
          break;
        case 1:
          stack[sp++] = p.out2[s];
          stack[sp++] = p.out1[s];
          break;
        case 2:
          if (pos === 0) stack[sp++] = p.out1[s];
          break;
        case 3:
          if (pos === n) stack[sp++] = p.out1[s];
          break;
        case 4:
          list[len++] = s;
          break;
        case 5:
          stack[sp++] = p.out1[s];
          break;
      }
    }
    return len;
  };
  let matched = false;
  for (let pos = 0; pos <= n && !matched; pos++) {
    const gen = pos;
    // states carried from the previous step were added to cur under this generation already
    curLen = addState(cur, curLen, p.start, pos, gen); // unanchored search: start again here
    for (let k = 0; k < curLen; k++) {
      if (p.kind[cur[k]] === 4) {
        matched = true;
        break;
      }
    }
    if (matched || pos === n) break;
    const c = cps[pos];
    nxtLen = 0;
    const ngen = pos + 1;
    for (let k = 0; k < curLen; k++) {
      const s = cur[k];
      if (p.kind[s] === 0 && inRanges(p.ranges[s]!, c)) nxtLen = addState(nxt, nxtLen, p.out1[s], pos + 1, ngen);
    }
    const t = cur;
    cur = nxt;
    nxt = t;
    curLen = nxtLen;
  }
  if (counter) counter.steps += steps;
  return matched;
}

/** Reports whether s has more than limit code points. */
export function longerThan(s: string, limit: number): boolean {
  if (s.length <= limit) return false;
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xd800 || c > 0xdbff || i + 1 >= s.length) n++;
    else {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
      n++;
    }
    if (n > limit) return true;
  }
  return false;
}

// --- a lazily built DFA over the same automaton ------------------------------------------------
// The subset construction, one state at a time as the subjects need them: a DFA state is the set
// of automaton positions reached after a code point (the kernel) plus the start of a new match
// (the search is unanchored). Its closure in the middle of the subject, and whether it accepts at
// the end (where $ holds), are computed once. Each step is then one map lookup. Matching stays
// linear; the number of DFA states is bounded, beyond which the simulation above runs instead.

interface DState {
  chars: number[];
  matchMid: boolean;
  matchEnd: boolean;
  next: Map<number, DState>;
}

interface Dfa {
  states: Map<string, DState>;
  initial: DState;
  overflow: boolean;
}

const MAX_DSTATES = 1000;
const MAX_EDGES = 64; // per state: code points seen (a class spans many)
const dfas = new WeakMap<Prog, Dfa>();

function closure(p: Prog, kernel: number[], atStart: boolean, atEnd: boolean): { chars: number[]; match: boolean } {
  const seen = new Set<number>();
  const stack = [...kernel, p.start];
  const chars: number[] = [];
  let match = false;
  while (stack.length > 0) {
    const s = stack.pop()!;
    if (s < 0 || seen.has(s)) continue;
    seen.add(s);
    switch (p.kind[s]) {
      case 0:
        chars.push(s);
        break;
      case 1:
        stack.push(p.out2[s], p.out1[s]);
        break;
      case 2:
        if (atStart) stack.push(p.out1[s]);
        break;
      case 3:
        if (atEnd) stack.push(p.out1[s]);
        break;
      case 4:
        match = true;
        break;
      case 5:
        stack.push(p.out1[s]);
        break;
    }
  }
  chars.sort((a, b) => a - b);
  return { chars, match };
}

function dstate(p: Prog, d: Dfa, kernel: number[], atStart: boolean): DState | null {
  const key = (atStart ? "^" : "") + kernel.join(",");
  let st = d.states.get(key);
  if (st) return st;
  if (d.states.size >= MAX_DSTATES) {
    d.overflow = true;
    return null;
  }
  const mid = closure(p, kernel, atStart, false);
  const end = closure(p, kernel, atStart, true);
  st = { chars: mid.chars, matchMid: mid.match, matchEnd: end.match, next: new Map() };
  d.states.set(key, st);
  return st;
}

function step(p: Prog, d: Dfa, st: DState, c: number): DState | null {
  const hit = st.next.get(c);
  if (hit) return hit;
  const kernel = new Set<number>();
  for (const s of st.chars) if (inRanges(p.ranges[s]!, c)) kernel.add(p.out1[s]);
  const next = dstate(p, d, [...kernel].sort((a, b) => a - b), false);
  if (next && st.next.size < MAX_EDGES) st.next.set(c, next);
  return next;
}

/** Runs the lazy DFA; returns null when it grew past its bound (the caller simulates instead). */
export function runDfa(p: Prog, subject: string): boolean | null {
  let d = dfas.get(p);
  if (!d) {
    d = { states: new Map(), initial: null as unknown as DState, overflow: false };
    const init = dstate(p, d, [], true);
    if (!init) return null;
    d.initial = init;
    dfas.set(p, d);
  }
  if (d.overflow) return null;
  let st: DState | null = d.initial;
  for (let i = 0; i < subject.length; i++) {
    if (st.matchMid) return true;
    let c = subject.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < subject.length) {
      const e = subject.charCodeAt(i + 1);
      if (e >= 0xdc00 && e <= 0xdfff) {
        c = (c - 0xd800) * 0x400 + (e - 0xdc00) + 0x10000;
        i++;
      } else c = 0xfffd;
    } else if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd; // a lone surrogate reads as U+FFFD
    st = step(p, d, st, c);
    if (!st) return null;
  }
  return st.matchEnd;
}
