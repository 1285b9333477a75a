// JSON as the spec reads it (RFC 8259 with the spec's extra rules): numbers are the nearest
// double, out-of-range numbers are kept as ±Infinity so that each caller can refuse them with its
// own code, a member named twice is remembered (never silently resolved), a lone surrogate (a
// \u escape of one, or a lone UTF-16 unit in the text) makes the text malformed (spec/v1/README.md,
// "Text": nothing is repaired into U+FFFD), and the document order of members is kept where
// JavaScript objects would reorder integer-like names. Bytes are decoded by decodeUTF8, which
// refuses what is not well-formed UTF-8.

/** A JSON value as the engine handles it. */
export type JSONValue = null | boolean | number | string | JSONValue[] | { [key: string]: JSONValue };

/** A JSON object. */
export type JSONObject = { [key: string]: JSONValue };

/** Returns an empty object without a prototype: member names from documents ("__proto__"
 * included) are plain members of it. */
export function dict<T = JSONValue>(): { [key: string]: T } {
  return Object.create(null);
}

interface Meta {
  keys?: string[];
  dup?: string;
  /** how many distinct members came before the first duplicate (its place in document order) */
  dupAt?: number;
}

const meta = new WeakMap<object, Meta>();

/** Returns the first member name written twice in an object read by parseJSON, or undefined. */
export function duplicateMember(o: object): string | undefined {
  return meta.get(o)?.dup;
}

/** Returns how many distinct members (of memberNames) precede the first duplicate in document
 * order, or -1 when no member is named twice. */
export function duplicateAt(o: object): number {
  const m = meta.get(o);
  return m?.dup === undefined ? -1 : m.dupAt!;
}

/** Returns the member names of an object in document order (as written, duplicates once). */
export function memberNames(o: object): string[] {
  return meta.get(o)?.keys ?? Object.keys(o);
}

/** Reports whether an own member of that name exists (never a prototype's). */
export function hasMember(o: object, k: string): boolean {
  return Object.prototype.hasOwnProperty.call(o, k);
}

/** Returns the own member k of o, or undefined. */
export function member(o: JSONObject, k: string): JSONValue | undefined {
  return Object.prototype.hasOwnProperty.call(o, k) ? o[k] : undefined;
}

/** Reports whether v is a JSON object (not an array, not null). */
export function isObject(v: unknown): v is JSONObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** A syntax error of parseJSON. */
export class JSONSyntaxError extends Error {
  constructor(message: string, readonly offset: number) {
    super(message);
  }
}

const intLike = /^(0|[1-9][0-9]*)$/;

/** Parses one JSON text; throws JSONSyntaxError for anything else (including trailing data). */
export function parseJSON(text: string): JSONValue {
  let i = 0;
  const n = text.length;
  const ws = () => {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
      else break;
    }
  };
  const fail = (msg: string): never => {
    throw new JSONSyntaxError(`${msg} at offset ${i}`, i);
  };
  const value = (depth: number): JSONValue => {
    if (depth > 10000) fail("nesting too deep");
    ws();
    if (i >= n) fail("unexpected end of input");
    const c = text.charCodeAt(i);
    if (c === 0x7b) {
      i++;
      const o: JSONObject = Object.create(null);
      let keys: string[] | undefined;
      let dup: string | undefined;
      let dupAt = 0;
      let reorder = false;
      const order: string[] = [];
      ws();
      if (text.charCodeAt(i) === 0x7d) {
        i++;
        return o;
      }
      for (;;) {
        ws();
        if (text.charCodeAt(i) !== 0x22) fail("expected a member name");
        const k = str();
        ws();
        if (text.charCodeAt(i) !== 0x3a) fail("expected ':'");
        i++;
        const v = value(depth + 1);
        if (Object.prototype.hasOwnProperty.call(o, k)) {
          if (dup === undefined) {
            dup = k;
            dupAt = order.length;
          }
        } else {
          o[k] = v;
          order.push(k);
          if (intLike.test(k)) reorder = true;
        }
        ws();
        const d = text.charCodeAt(i);
        if (d === 0x2c) {
          i++;
          continue;
        }
        if (d === 0x7d) {
          i++;
          break;
        }
        fail("expected ',' or '}'");
      }
      if (reorder) keys = order;
      if (keys || dup !== undefined) meta.set(o, { keys, dup, dupAt });
      return o;
    }
    if (c === 0x5b) {
      i++;
      const a: JSONValue[] = [];
      ws();
      if (text.charCodeAt(i) === 0x5d) {
        i++;
        return a;
      }
      for (;;) {
        a.push(value(depth + 1));
        ws();
        const d = text.charCodeAt(i);
        if (d === 0x2c) {
          i++;
          continue;
        }
        if (d === 0x5d) {
          i++;
          break;
        }
        fail("expected ',' or ']'");
      }
      return a;
    }
    if (c === 0x22) return str();
    if (c === 0x74) return word("true", true);
    if (c === 0x66) return word("false", false);
    if (c === 0x6e) return word("null", null);
    return num();
  };
  const word = <T>(w: string, v: T): T => {
    if (text.startsWith(w, i)) {
      i += w.length;
      return v;
    }
    return fail("unexpected character");
  };
  const num = (): number => {
    const start = i;
    if (text.charCodeAt(i) === 0x2d) i++;
    const d0 = text.charCodeAt(i);
    if (d0 === 0x30) i++;
    else if (d0 >= 0x31 && d0 <= 0x39) {
      while (i < n && isDigit(text.charCodeAt(i))) i++;
    } else fail("unexpected character");
    if (text.charCodeAt(i) === 0x2e) {
      i++;
      if (!isDigit(text.charCodeAt(i))) fail("expected a digit");
      while (i < n && isDigit(text.charCodeAt(i))) i++;
    }
    const e = text.charCodeAt(i);
    if (e === 0x65 || e === 0x45) {
      i++;
      const s = text.charCodeAt(i);
      if (s === 0x2b || s === 0x2d) i++;
      if (!isDigit(text.charCodeAt(i))) fail("expected a digit");
      while (i < n && isDigit(text.charCodeAt(i))) i++;
    }
    const v = Number(text.slice(start, i));
    return v === 0 ? 0 : v; // no negative zero
  };
  const str = (): string => {
    i++; // opening quote
    let out = "";
    let run = i;
    for (;;) {
      if (i >= n) fail("unterminated string");
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        out += text.slice(run, i);
        i++;
        break;
      }
      if (c < 0x20) fail("control character in a string");
      if (c >= 0xd800 && c <= 0xdfff) {
        // a JavaScript string given as text: only a pair of units is a code point
        const d = text.charCodeAt(i + 1);
        if (c >= 0xdc00 || !(d >= 0xdc00 && d <= 0xdfff)) fail("a lone surrogate (not a Unicode scalar value)");
        i += 2;
        continue;
      }
      if (c === 0x5c) {
        out += text.slice(run, i);
        i++;
        const e = text.charCodeAt(i);
        i++;
        switch (e) {
          case 0x22: out += '"'; break;
          case 0x5c: out += "\\"; break;
          case 0x2f: out += "/"; break;
          case 0x62: out += "\b"; break;
          case 0x66: out += "\f"; break;
          case 0x6e: out += "\n"; break;
          case 0x72: out += "\r"; break;
          case 0x74: out += "\t"; break;
          case 0x75: {
            const u = hex4(i);
            if (u < 0) fail("bad \\u escape");
            if (u >= 0xdc00 && u <= 0xdfff) {
              i -= 2;
              fail("a lone surrogate escape");
            }
            i += 4;
            if (u >= 0xd800 && u <= 0xdbff) {
              // a high surrogate escape must be followed at once by a low surrogate escape
              const lo = text.charCodeAt(i) === 0x5c && text.charCodeAt(i + 1) === 0x75 ? hex4(i + 2) : -1;
              if (!(lo >= 0xdc00 && lo <= 0xdfff)) {
                i -= 6;
                fail("a lone surrogate escape");
              }
              i += 6;
              out += String.fromCharCode(u, lo);
            } else out += String.fromCharCode(u);
            break;
          }
          default:
            i--;
            fail("bad escape");
        }
        run = i;
        continue;
      }
      i++;
    }
    return out;
  };
  // the value of four hex digits at j, or -1
  const hex4 = (j: number): number => {
    if (j + 4 > n) return -1;
    let u = 0;
    for (let k = j; k < j + 4; k++) {
      const c = text.charCodeAt(k);
      const d = c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : c >= 0x41 && c <= 0x46 ? c - 0x37 : -1;
      if (d < 0) return -1;
      u = (u << 4) | d;
    }
    return u;
  };
  ws();
  const v = value(0);
  ws();
  if (i < n) fail("data after the JSON value");
  return v;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Reports whether s is a sequence of Unicode scalar values (no lone surrogate). */
export function isScalarText(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xd800 || c > 0xdfff) continue;
    if (c >= 0xdc00) return false;
    const d = s.charCodeAt(i + 1);
    if (!(d >= 0xdc00 && d <= 0xdfff)) return false;
    i++;
  }
  return true;
}

/**
 * Returns s with every lone surrogate replaced by U+FFFD. Used only by the pattern API (Pattern,
 * patternProblem), which takes any JavaScript string; the engine never repairs text (strings
 * with a lone surrogate are refused where they enter it).
 */
export function wellFormed(s: string): string {
  return isScalarText(s) ? s : s.replace(loneSurrogate, "\uFFFD");
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Decodes bytes that must be well-formed UTF-8 (RFC 3629: no invalid or truncated sequence,
 * overlong form, encoded surrogate or code point beyond U+10FFFF); throws JSONSyntaxError
 * otherwise (spec/v1/README.md, "Text": such a text is malformed JSON, never repaired).
 */
export function decodeUTF8(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch {
    const at = invalidUTF8At(bytes);
    throw new JSONSyntaxError(`the text is not well-formed UTF-8 at byte ${at}`, at);
  }
}

/** Returns the byte offset of the first sequence that is not well-formed UTF-8 (RFC 3629), or -1. */
export function invalidUTF8At(b: Uint8Array): number {
  for (let i = 0; i < b.length; ) {
    const c = b[i];
    if (c < 0x80) {
      i++;
      continue;
    }
    // the lead byte gives the length and the range of the first continuation byte
    let n: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) n = 1;
    else if (c >= 0xe0 && c <= 0xef) {
      n = 2;
      if (c === 0xe0) lo = 0xa0; // overlong
      if (c === 0xed) hi = 0x9f; // encoded surrogates
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 3;
      if (c === 0xf0) lo = 0x90; // overlong
      if (c === 0xf4) hi = 0x8f; // beyond U+10FFFF
    } else return i;
    for (let k = 1; k <= n; k++) {
      const d = b[i + k];
      if (d === undefined || d < (k === 1 ? lo : 0x80) || d > (k === 1 ? hi : 0xbf)) return i;
    }
    i += n + 1;
  }
  return -1;
}

/** Returns the nesting depth of a JSON value: a scalar 0, [] and {} 1 (expressions.md §2). */
export function depth(v: JSONValue, limit: number): number {
  if (v === null || typeof v !== "object") return 0;
  if (limit <= 0) return 1;
  let d = 0;
  if (Array.isArray(v)) {
    for (const x of v) {
      const e = depth(x, limit - 1);
      if (e > d) d = e;
    }
  } else {
    for (const k in v) {
      if (!hasMember(v, k)) continue;
      const e = depth(v[k], limit - 1);
      if (e > d) d = e;
    }
  }
  return d + 1;
}

/** Reports whether two JSON values are equal: same type and value, members in any order. */
export function deepEqual(a: JSONValue, b: JSONValue): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (const k of ka) {
    if (!hasMember(b, k) || !deepEqual(a[k], b[k])) return false;
  }
  return true;
}

// RFC 8785: members sorted by UTF-16 code units, numbers as ECMAScript writes them, strings with
// the minimal escapes JSON.stringify uses.

function sortedKeys(o: object): string[] {
  return Object.keys(o).sort();
}

/** Returns the RFC 8785 canonical text of a JSON value. */
export function canonicalJSON(v: JSONValue): string {
  if (v === null || typeof v !== "object") {
    if (typeof v === "number" && !Number.isFinite(v)) throw new RangeError("a number beyond double range");
    return JSON.stringify(v);
  }
  if (Array.isArray(v)) return "[" + v.map(canonicalJSON).join(",") + "]";
  const parts: string[] = [];
  for (const k of sortedKeys(v)) parts.push(JSON.stringify(k) + ":" + canonicalJSON(v[k]));
  return "{" + parts.join(",") + "}";
}

/** Returns the RFC 8785 form indented by two spaces with a final newline (ruleset.md §9). */
export function indentedJSON(v: JSONValue): string {
  return indent(v, "") + "\n";
}

function indent(v: JSONValue, pad: string): string {
  if (v === null || typeof v !== "object") return canonicalJSON(v);
  const inner = pad + "  ";
  if (Array.isArray(v)) {
    if (v.length === 0) return "[]";
    return "[\n" + v.map((x) => inner + indent(x, inner)).join(",\n") + "\n" + pad + "]";
  }
  const keys = sortedKeys(v);
  if (keys.length === 0) return "{}";
  return "{\n" + keys.map((k) => inner + JSON.stringify(k) + ": " + indent(v[k], inner)).join(",\n") + "\n" + pad + "}";
}

/** Encodes a JSON pointer token (RFC 6901). */
export function ptrToken(s: string | number): string {
  return typeof s === "number" ? String(s) : s.replace(/~/g, "~0").replace(/\//g, "~1");
}
