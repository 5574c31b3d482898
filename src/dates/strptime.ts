/**
 * A strptime subset for the batch path's `timestamp_format`: %Y %m %d %H %M %S %y %b %B %p %I %f
 * %z %j %a %A %% and literal text. Returns null when the string does not match the format exactly
 * (the turn then keeps its raw date string). Without %z the time is read as UTC.
 */
import { FIRST_INSTANT, LAST_INSTANT } from "./range.js";

const MONTHS = [
  "january",
  "february",
  "march",
  "april",
  "may",
  "june",
  "july",
  "august",
  "september",
  "october",
  "november",
  "december",
];
const DAYS = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"];

/** `s` as a literal inside a regular expression. */
export const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

const PATTERNS: Record<string, string> = {
  Y: "(\\d{4})",
  m: "(\\d{1,2})",
  d: "(\\d{1,2})",
  H: "(\\d{1,2})",
  M: "(\\d{1,2})",
  S: "(\\d{1,2})",
  y: "(\\d{2})",
  b: `(${MONTHS.map((m) => m.slice(0, 3)).join("|")})`,
  B: `(${MONTHS.join("|")})`,
  p: "(am|pm)",
  I: "(\\d{1,2})",
  f: "(\\d{1,6})",
  z: "(Z|[+-]\\d{2}:?\\d{2})",
  j: "(\\d{1,3})",
  a: `(${DAYS.map((d) => d.slice(0, 3)).join("|")})`,
  A: `(${DAYS.join("|")})`,
};

export function strptime(value: string, format: string): Date | null {
  const fields: string[] = [];
  let re = "^";
  for (let i = 0; i < format.length; i++) {
    const ch = format[i]!;
    if (ch === "%" && i + 1 < format.length) {
      const d = format[++i]!;
      if (d === "%") {
        re += "%";
        continue;
      }
      const p = PATTERNS[d];
      if (!p) return null; // a directive outside the subset: treat as unparseable
      fields.push(d);
      re += p;
    } else if (/\s/.test(ch)) {
      re += "\\s+";
    } else {
      re += escapeRe(ch);
    }
  }
  const m = new RegExp(`${re}$`, "i").exec(value.trim());
  if (!m) return null;

  let year = 1900;
  let month = 0;
  let day = 1;
  let hour = 0;
  let minute = 0;
  let second = 0;
  let ms = 0;
  let pm: boolean | null = null;
  let hour12: number | null = null;
  let offsetMin = 0;
  let yday: number | null = null;
  fields.forEach((f, k) => {
    const v = m[k + 1]!;
    const n = Number.parseInt(v, 10);
    switch (f) {
      case "Y":
        year = n;
        break;
      case "y":
        year = n < 69 ? 2000 + n : 1900 + n;
        break;
      case "m":
        month = n - 1;
        break;
      case "d":
        day = n;
        break;
      case "H":
        hour = n;
        break;
      case "I":
        hour12 = n;
        break;
      case "M":
        minute = n;
        break;
      case "S":
        second = n;
        break;
      case "f":
        ms = Math.floor(Number.parseInt(v.padEnd(6, "0"), 10) / 1000);
        break;
      case "p":
        pm = v.toLowerCase() === "pm";
        break;
      case "b":
        month = MONTHS.findIndex((x) => x.startsWith(v.toLowerCase()));
        break;
      case "B":
        month = MONTHS.indexOf(v.toLowerCase());
        break;
      case "j":
        yday = n;
        break;
      case "z": {
        if (v.toUpperCase() !== "Z") {
          const digits = v.replace(":", "");
          const sign = digits[0] === "-" ? -1 : 1;
          offsetMin = sign * (Number(digits.slice(1, 3)) * 60 + Number(digits.slice(3, 5)));
        }
        break;
      }
    }
  });
  if (hour12 !== null) {
    if (hour12 < 1 || hour12 > 12) return null;
    hour = (hour12 % 12) + (pm ? 12 : 0);
  } else if (pm !== null && hour < 12 && pm) {
    hour += 12;
  }
  if (month < 0 || month > 11 || hour > 23 || minute > 59 || second > 60) return null;
  if (yday !== null) {
    if (yday < 1 || yday > 366) return null;
    month = 0;
    day = yday;
  } else if (day < 1 || day > new Date(Date.UTC(year, month + 1, 0)).getUTCDate()) {
    return null;
  }
  // Date.UTC reads years 0-99 as 1900-1999; setUTCFullYear takes the year as given.
  const d = new Date(Date.UTC(2000, month, day, hour, minute, second, ms));
  d.setUTCFullYear(year);
  const t = d.getTime() - offsetMin * 60_000;
  // Only instants PostgreSQL's timestamps hold and JavaScript writes as it reads (see FIRST_INSTANT).
  return Number.isNaN(t) || t < FIRST_INSTANT || t > LAST_INSTANT ? null : new Date(t);
}
