// jsonFinite: the spec's JSON number check (numbers.md §2) for values a host builds itself.

/**
 * Reports whether v is a JSON value the engine accepts as input: null, booleans, strings, finite
 * numbers (no NaN, no infinities), arrays and plain objects of such values.
 */
export function jsonFinite(v: unknown): boolean {
  if (v === null || typeof v === "boolean" || typeof v === "string") return true;
  if (typeof v === "number") return Number.isFinite(v);
  if (Array.isArray(v)) return v.every(jsonFinite);
  if (typeof v === "object") {
    const proto = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) return false;
    return Object.values(v as object).every(jsonFinite);
  }
  return false;
}
