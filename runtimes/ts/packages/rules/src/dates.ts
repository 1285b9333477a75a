// Dates and date-times of dates.md: strict ASCII grammar, proleptic Gregorian calendar, UTC years
// 0001–9999, instants kept as (whole seconds, nanoseconds) so that nine fraction digits stay exact.

/** A parsed date or date-time, converted to UTC. */
export interface DateValue {
  /** true for a date-time, false for a date */
  readonly time: boolean;
  /** day number: days since 0001-01-01 (UTC) */
  day: number;
  /** seconds of the UTC day */
  sec: number;
  /** nanoseconds */
  nano: number;
}

const re = /^([0-9]{4})-([0-9]{2})-([0-9]{2})(?:T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,9}))?(?:(Z)|([+-])([0-9]{2}):([0-9]{2})))?$/;

function leap(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}

const monthDays = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Returns the number of days of month m (1–12) of year y. */
export function daysIn(y: number, m: number): number {
  return m === 2 && leap(y) ? 29 : monthDays[m - 1];
}

/** Returns days since 0001-01-01 of a proleptic Gregorian date. */
export function dayNumber(y: number, m: number, d: number): number {
  // days-from-civil (Howard Hinnant), shifted so that 0001-01-01 is 0
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const mp = (m + 9) % 12;
  const doy = Math.floor((153 * mp + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 306; // 0000-03-01 based → 0001-01-01 based
}

/** Returns [year, month, day] of a day number. */
export function civil(n: number): [number, number, number] {
  const z = n + 306;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const y = yoe + era * 400;
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  return [m <= 2 ? y + 1 : y, m, d];
}

const minDay = 0; // 0001-01-01
const maxDay = dayNumber(9999, 12, 31);

// Requests repeat their dates (ctx.today, a birth date read by several rules): the last parses are
// kept. DateValue objects are never changed after parsing, so sharing them is safe.
const cache = new Map<string, DateValue | null>();

/** Parses a date or date-time (dates.md §1); returns null when s is not one. */
export function parseDate(s: string): DateValue | null {
  if (s.length > 40) return null; // longer than any date-time of the grammar
  let d = cache.get(s);
  if (d === undefined) {
    d = parse(s);
    if (cache.size >= 512) cache.clear();
    cache.set(s, d);
  }
  return d;
}

function parse(s: string): DateValue | null {
  const m = re.exec(s);
  if (!m) return null;
  const y = +m[1];
  const mo = +m[2];
  const d = +m[3];
  if (mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo)) return null;
  if (m[4] === undefined) {
    if (y < 1) return null;
    return { time: false, day: dayNumber(y, mo, d), sec: 0, nano: 0 };
  }
  if (m[8] === undefined && m[9] === undefined) return null; // a date-time needs an offset
  const h = +m[4];
  const mi = +m[5];
  const se = +m[6];
  if (h > 23 || mi > 59 || se > 59) return null;
  let off = 0;
  if (m[9] !== undefined) {
    const oh = +m[10];
    const om = +m[11];
    if (oh > 23 || om > 59) return null;
    off = (oh * 60 + om) * 60 * (m[9] === "-" ? -1 : 1);
  }
  const nano = m[7] === undefined ? 0 : +m[7].padEnd(9, "0");
  let day = dayNumber(y, mo, d);
  let sec = h * 3600 + mi * 60 + se - off;
  while (sec < 0) {
    sec += 86400;
    day--;
  }
  while (sec >= 86400) {
    sec -= 86400;
    day++;
  }
  if (day < minDay || day > maxDay) return null;
  return { time: true, day, sec, nano };
}

/** Whole years from a to b (dates.md §4). */
export function yearsBetween(a: DateValue, b: DateValue): number {
  if (before(b, a)) return -yearsBetween(b, a);
  const [ay, am, ad] = civil(a.day);
  const [by, bm, bd] = civil(b.day);
  let y = by - ay;
  const ka = [am, ad, a.sec, a.nano];
  const kb = [bm, bd, b.sec, b.nano];
  for (let i = 0; i < 4; i++) {
    if (kb[i] !== ka[i]) {
      if (kb[i] < ka[i]) y--;
      break;
    }
  }
  return y;
}

function before(a: DateValue, b: DateValue): boolean {
  if (a.day !== b.day) return a.day < b.day;
  if (a.sec !== b.sec) return a.sec < b.sec;
  return a.nano < b.nano;
}

/** Whole periods of 24 hours from a to b, truncated toward zero (dates.md §5). */
export function daysBetween(a: DateValue, b: DateValue): number {
  // difference in nanoseconds split to avoid precision loss: days and a remainder within ±1 day
  let days = b.day - a.day;
  let rest = (b.sec - a.sec) * 1e9 + (b.nano - a.nano); // |rest| < 2 days of ns < 2^53
  const dayNs = 86400e9;
  if (days > 0 && rest < 0) {
    days--;
    rest += dayNs;
  } else if (days < 0 && rest > 0) {
    days++;
    rest -= dayNs;
  }
  days += Math.trunc(rest / dayNs);
  return days === 0 ? 0 : days;
}

function pad(n: number, w: number): string {
  return String(n).padStart(w, "0");
}

/** Moves d by n units (dates.md §6); returns the text or null when out of range. */
export function dateAdd(d: DateValue, n: number, unit: "days" | "months" | "years"): string | null {
  let day = d.day;
  if (unit === "days") day += n;
  else {
    const months = unit === "years" ? n * 12 : n;
    const [y, m, dd] = civil(d.day);
    const total = y * 12 + (m - 1) + months;
    const ny = Math.floor(total / 12);
    const nm = total - ny * 12 + 1;
    if (ny < 1 || ny > 9999) return null;
    day = dayNumber(ny, nm, Math.min(dd, daysIn(ny, nm)));
  }
  if (day < minDay || day > maxDay) return null;
  const [y, m, dd] = civil(day);
  const date = `${pad(y, 4)}-${pad(m, 2)}-${pad(dd, 2)}`;
  if (!d.time) return date;
  const h = Math.floor(d.sec / 3600);
  const mi = Math.floor((d.sec % 3600) / 60);
  const s = d.sec % 60;
  let frac = "";
  if (d.nano !== 0) frac = "." + pad(d.nano, 9).replace(/0+$/, "");
  return `${date}T${pad(h, 2)}:${pad(mi, 2)}:${pad(s, 2)}${frac}Z`;
}
