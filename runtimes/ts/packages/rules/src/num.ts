// The number model of numbers.md: canonical decimals (15 significant digits, ties to even, of the
// exact binary value), decimal arithmetic done exactly with BigInt and rounded once, and the
// canonical text. Fast paths cover the common cases that need no BigInt at all.

/** Thrown by arithmetic whose result is beyond double range (EVALUATION_ERROR). */
export class NumberRangeError extends Error {}

const buf = new DataView(new ArrayBuffer(8));

/** Returns the count of significant digits of ECMAScript's shortest text of x. */
function sigDigits(s: string): number {
  let end = s.indexOf("e");
  if (end < 0) end = s.length;
  let first = -1;
  let last = -1;
  for (let i = 0; i < end; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x31 && c <= 0x39) {
      if (first < 0) first = i;
      last = i;
    } else if (c === 0x30 && first >= 0) {
      // zero inside or after the digits: counted only if a non-zero follows
    }
  }
  if (first < 0) return 0;
  let n = 0;
  for (let i = first; i <= last; i++) if (s.charCodeAt(i) !== 0x2e) n++;
  return n;
}

/** Returns the exact decimal digits (no trailing zeros) and exponent of |x| for a finite x ≠ 0. */
function exactDigits(x: number): { digits: string; exp: number } {
  buf.setFloat64(0, Math.abs(x));
  const hi = buf.getUint32(0);
  const lo = buf.getUint32(4);
  const bexp = (hi >>> 20) & 0x7ff;
  let mant = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  let e: number;
  if (bexp === 0) e = -1074;
  else {
    mant |= 1n << 52n;
    e = bexp - 1075;
  }
  let m: bigint;
  let exp: number;
  if (e >= 0) {
    m = mant << BigInt(e);
    exp = 0;
  } else {
    m = mant * 5n ** BigInt(-e);
    exp = e;
  }
  let digits = m.toString();
  let k = digits.length;
  while (k > 1 && digits.charCodeAt(k - 1) === 0x30) k--;
  exp += digits.length - k;
  digits = digits.slice(0, k);
  return { digits, exp };
}

/**
 * Returns the canonical number of x (numbers.md §3): the double nearest to x's exact value rounded
 * to 15 significant digits, ties to even. May return ±Infinity for doubles next to the maximum.
 */
export function canon(x: number): number {
  if (x === 0) return 0;
  if (Number.isInteger(x) && x < 1e15 && x > -1e15) return x;
  const s = String(x);
  if (s.length <= 15 || sigDigits(s) <= 15) return x;
  const ax = Math.abs(x);
  const p17 = ax.toPrecision(17);
  const d = p17.replace(".", "").replace(/e.*$/, "");
  // d has 17 digits; a tie needs the exact value to be d1..d15 5 followed by zeros
  if (d.charCodeAt(15) === 0x35 && d.charCodeAt(16) === 0x30) {
    const ex = exactDigits(ax);
    if (ex.digits.length === 16 && ex.digits.slice(0, 15) === d.slice(0, 15) && ex.digits.charCodeAt(15) === 0x35) {
      const last = d.charCodeAt(14) - 0x30;
      if (last % 2 === 0) {
        // round down to even; toPrecision would round the tie up
        const v = Number(d.slice(0, 15) + "e" + (ex.exp + 1));
        return x < 0 ? -v : v;
      }
    }
  }
  const v = Number(ax.toPrecision(15));
  return x < 0 ? -v : v;
}

const MIN_NORMAL = 2.2250738585072014e-308;

/**
 * Returns the 15-digit canonical decimal of a subnormal x as digits (no trailing zeros) and the
 * exponent of the last digit. Subnormals carry fewer than 15 digits of precision, so their
 * canonical decimal is not the shortest text of the nearest double.
 */
function subnormalDigits(x: number): { digits: string; exp: number } {
  const ex = exactDigits(x);
  let d = BigInt(ex.digits);
  let exp = ex.exp;
  const len = ex.digits.length;
  if (len > 15) {
    const cut = len - 15;
    const p = pow10(cut);
    let q = d / p;
    const r = d % p;
    if (r * 2n > p || (r * 2n === p && q % 2n === 1n)) q += 1n;
    d = q;
    exp += cut;
  }
  let digits = d.toString();
  while (digits.length > 1 && digits.endsWith("0")) {
    digits = digits.slice(0, -1);
    exp++;
  }
  return { digits, exp };
}

/** Returns the canonical text of x (numbers.md §4); throws NumberRangeError beyond double range. */
export function numText(x: number): string {
  if (x !== 0 && x > -MIN_NORMAL && x < MIN_NORMAL) {
    const { digits, exp } = subnormalDigits(x);
    const e = exp + digits.length - 1;
    const mant = digits.length > 1 ? digits[0] + "." + digits.slice(1) : digits;
    return (x < 0 ? "-" : "") + mant + "e" + (e < 0 ? "-" : "+") + Math.abs(e);
  }
  const c = canon(x);
  if (!Number.isFinite(c)) throw new NumberRangeError("a number beyond the range of a double on the way out");
  return String(c);
}

interface Dec {
  m: bigint;
  e: number;
}

/** Returns the canonical decimal of x as m × 10^e. */
function dec(x: number): Dec {
  if (x !== 0 && x > -MIN_NORMAL && x < MIN_NORMAL) {
    const { digits, exp } = subnormalDigits(x);
    return { m: x < 0 ? -BigInt(digits) : BigInt(digits), e: exp };
  }
  const s = String(canon(x));
  let e = 0;
  let mant = s;
  const ei = s.indexOf("e");
  if (ei >= 0) {
    e = Number(s.slice(ei + 1));
    mant = s.slice(0, ei);
  }
  const dot = mant.indexOf(".");
  if (dot >= 0) {
    e -= mant.length - dot - 1;
    mant = mant.slice(0, dot) + mant.slice(dot + 1);
  }
  return { m: BigInt(mant), e };
}

const pow10cache: bigint[] = [];
function pow10(n: number): bigint {
  if (n < 64) {
    let p = pow10cache[n];
    if (p === undefined) p = pow10cache[n] = 10n ** BigInt(n);
    return p;
  }
  return 10n ** BigInt(n);
}

function abs(b: bigint): bigint {
  return b < 0n ? -b : b;
}

/** Rounds m × 10^e once to 15 significant digits, ties to even, and returns the nearest double. */
function toNumber(m: bigint, e: number): number {
  if (m === 0n) return 0;
  const neg = m < 0n;
  let a = neg ? -m : m;
  const len = a.toString().length;
  if (len > 15) {
    const cut = len - 15;
    const p = pow10(cut);
    let q = a / p;
    const r = a % p;
    const twice = r * 2n;
    if (twice > p || (twice === p && q % 2n === 1n)) q += 1n;
    a = q;
    e += cut;
  }
  const v = Number(a.toString() + "e" + e);
  if (!Number.isFinite(v)) throw new NumberRangeError("the result is beyond the range of a double");
  return neg ? -v : v;
}

const small = 1e15;

/** Returns the decimal sum of the numbers (numbers.md §5). */
export function add(a: number, b: number): number {
  if (Number.isInteger(a) && Number.isInteger(b) && a < small && a > -small && b < small && b > -small) {
    const s = a + b;
    if (s < small && s > -small) return s === 0 ? 0 : s;
  }
  const A = dec(a);
  const B = dec(b);
  const e = Math.min(A.e, B.e);
  return toNumber(A.m * pow10(A.e - e) + B.m * pow10(B.e - e), e);
}

/** Returns the decimal sum of a list of numbers, rounded once. */
export function sumAll(xs: number[]): number {
  let allSmall = true;
  let s = 0;
  for (const x of xs) {
    if (!(Number.isInteger(x) && x < small && x > -small)) {
      allSmall = false;
      break;
    }
    s += x;
  }
  if (allSmall && s < small && s > -small) return s === 0 ? 0 : s;
  if (xs.length === 0) return 0;
  const ds = xs.map(dec);
  let e = ds[0].e;
  for (const d of ds) if (d.e < e) e = d.e;
  let m = 0n;
  for (const d of ds) m += d.m * pow10(d.e - e);
  return toNumber(m, e);
}

/** Returns the decimal difference a − b. */
export function sub(a: number, b: number): number {
  return add(a, b === 0 ? 0 : -b);
}

/** Returns the negation of x as arithmetic (canonical). */
export function neg(x: number): number {
  const c = canon(x);
  if (!Number.isFinite(c)) throw new NumberRangeError("the result is beyond the range of a double");
  return c === 0 ? 0 : -c;
}

/** Returns the decimal product. */
export function mul(a: number, b: number): number {
  if (Number.isInteger(a) && Number.isInteger(b) && a < 1e7 && a > -1e7 && b < 1e7 && b > -1e7) {
    const p = a * b;
    return p === 0 ? 0 : p;
  }
  const A = dec(a);
  const B = dec(b);
  return toNumber(A.m * B.m, A.e + B.e);
}

/** Returns the decimal quotient rounded to 15 digits, or null for division by zero. */
export function div(a: number, b: number): number | null {
  if (b === 0) return null;
  if (a === 0) return 0;
  const A = dec(a);
  const B = dec(b);
  const la = abs(A.m).toString().length;
  const lb = abs(B.m).toString().length;
  const k = Math.max(0, 18 + lb - la);
  const num = A.m * pow10(k);
  let q = num / B.m;
  const r = num % B.m;
  let e = A.e - B.e - k;
  if (r !== 0n) {
    // a sticky digit: the exact quotient is strictly between q and q+1 (in magnitude)
    q = q * 10n + (q < 0n || (q === 0n && (A.m < 0n) !== (B.m < 0n)) ? -1n : 1n);
    e -= 1;
  }
  return toNumber(q, e);
}

/** Returns the truncated remainder a − b × trunc(a/b), exactly, or null for b = 0. */
export function mod(a: number, b: number): number | null {
  if (b === 0) return null;
  const A = dec(a);
  const B = dec(b);
  const e = Math.min(A.e, B.e);
  const r = (A.m * pow10(A.e - e)) % (B.m * pow10(B.e - e));
  return toNumber(r, e);
}

/** Rounds the canonical decimal of x to places decimals, ties away from zero (operators.md). */
export function roundPlaces(x: number, places: number): number {
  const D = dec(x);
  if (-D.e <= places) {
    const v = canon(x);
    if (!Number.isFinite(v)) throw new NumberRangeError("the result is beyond the range of a double");
    return v;
  }
  const shift = -places - D.e;
  const p = pow10(shift);
  let q = D.m / p;
  const r = abs(D.m % p);
  if (r * 2n >= p) q += D.m < 0n ? -1n : 1n;
  if (q === 0n) return 0;
  const v = Number(q.toString() + "e" + -places);
  if (!Number.isFinite(v)) throw new NumberRangeError("the result is beyond the range of a double");
  return v;
}

/** Reports whether a canonical form of x exists within range (what may leave the engine). */
export function canonFinite(x: number): boolean {
  return Number.isFinite(canon(x));
}

/** Returns the decimal product of several numbers, rounded once. */
export function mulAll(xs: number[]): number {
  let m = 1n;
  let e = 0;
  for (const x of xs) {
    const d = dec(x);
    m *= d.m;
    e += d.e;
  }
  return toNumber(m, e);
}
