import { stopsInside } from "../providers/local/english.js";
import { FIRST_INSTANT, LAST_INSTANT } from "./range.js";
import { escapeRe, strptime } from "./strptime.js";

const MONTH_NAMES = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
];
const DAY_NAMES = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"];

// Formats seen in chat exports (LoCoMo writes "1:56 pm on 8 May, 2023"), tried when the request
// gave no timestamp_format or on the live path, only to resolve relative dates inside the text.
const LOOSE_FORMATS = [
  "%I:%M %p on %d %B, %Y",
  "%I:%M %p on %d %B %Y",
  "%d %B, %Y",
  "%d %B %Y",
  "%B %d, %Y",
  "%d %b %Y",
  "%b %d, %Y",
  "%Y-%m-%d",
  "%Y/%m/%d",
  // RFC 2822 as mail and HTTP write it, its weekday left out (parseLooseDate), "GMT" as +0000
  "%d %b %Y %H:%M:%S %z",
  "%d %b %Y %H:%M:%S",
  "%d %b %Y %H:%M",
  "%d %b %Y %H:%M %z",
  "%b %d, %Y %I:%M %p",
  "%B %d, %Y %I:%M %p",
  "%b %d, %Y %H:%M",
  "%d.%m.%Y",
  "%d.%m.%Y %H:%M",
];

// ISO 8601 dates and times as exports and mem0 write them: `T` or a space before the time,
// seconds and their fraction optional, a zone optional.
const ISO_DATE_TIMES = ["T", " "].flatMap((sep) =>
  ["%H:%M:%S.%f", "%H:%M:%S", "%H:%M"].flatMap((time) => [
    `%Y-%m-%d${sep}${time}%z`,
    `%Y-%m-%d${sep}${time}`,
  ]),
);

/**
 * The instant an ISO 8601 date and time names, or null: a day the calendar has and a time of day,
 * from year 1 to 9999 (what PostgreSQL's timestamps hold); without a zone it is UTC. Date.parse
 * is not that check: it reads 2024-02-30 as 1 March and "1" as 1 January 2001.
 */
export function isoDateTime(s: string): Date | null {
  for (const f of ISO_DATE_TIMES) {
    const d = strptime(s, f);
    if (d) return d;
  }
  return null;
}

/**
 * An ISO 8601 date and time (as isoDateTime reads it) as text PostgreSQL reads as the same instant
 * at its full precision: microseconds kept, where a Date holds milliseconds (a mem0 import stored
 * 04:49:03.123456 as .123). Without a zone it is UTC (`Z` added), whatever the session's TimeZone.
 * Null when it is not one.
 */
export function timestampText(s: string): string | null {
  // The zoned and unzoned formats match disjoint strings, so the one that reads it says which.
  const format = ISO_DATE_TIMES.find((f) => strptime(s, f) !== null);
  if (format === undefined) return null;
  return format.endsWith("%z") ? s : `${s}Z`;
}

/**
 * Month names in French, Spanish, Portuguese, German, Italian and Russian (its genitive, as a date
 * writes it), read as the English one: "10 mars 2025", "10. März 2025", "10 de marzo de 2025",
 * "10 марта 2025 г.".
 */
const FOREIGN_MONTHS = new Map(
  [
    "janvier enero janeiro januar jänner gennaio января",
    "février febrero fevereiro februar febbraio февраля",
    "mars marzo março märz марта",
    "avril abril aprile апреля",
    "mai mayo maio maggio мая",
    "juin junio junho juni giugno июня",
    "juillet julio julho juli luglio июля",
    "août agosto августа",
    "septembre septiembre setiembre setembro settembre сентября",
    "octobre octubre outubro oktober ottobre октября",
    "novembre noviembre novembro ноября",
    "décembre diciembre dezembro dezember dicembre декабря",
  ].flatMap((names, month) => names.split(" ").map((n) => [n, MONTH_NAMES[month]!] as const)),
);

/**
 * A date written in another language as the formats below read it: full-width digits and spaces
 * as ASCII ones (NFKC), 2025年3月10日 (also Korean 2025년 3월 10일) as 2025-03-10, another
 * language's month name as the English one.
 */
function inEnglish(raw: string): string {
  const s = raw.normalize("NFKC").trim();
  const cjk = /^(\d{4})\s*[年년]\s*(\d{1,2})\s*[月월]\s*(\d{1,2})\s*[日일]/.exec(s);
  if (cjk) return `${cjk[1]}-${cjk[2]!.padStart(2, "0")}-${cjk[3]!.padStart(2, "0")}`;
  const words = s.replace(/\p{L}+/gu, (w) => FOREIGN_MONTHS.get(w.toLowerCase()) ?? w);
  if (words === s) return s;
  return words
    .replace(/^(\d{1,2})\.\s/, "$1 ")
    .replace(/\s(?:de|del)\s/gi, " ")
    .replace(/\s*г\.?$/, "");
}

/** A message date in one of the loose formats above (or ISO 8601), else null. */
export function parseLooseDate(raw: string): Date | null {
  const s = inEnglish(raw)
    .replace(
      /^(?:mon(?:day)?|tue(?:s|sday)?|wed(?:nesday)?|thu(?:rs?|rsday)?|fri(?:day)?|sat(?:urday)?|sun(?:day)?)\.?,?\s+/i,
      "",
    )
    .replace(/\s+(?:GMT|UTC)$/i, " +0000");
  const ymd = /^(\d{4})-(\d{2})-(\d{2})(T|\s|$)/.exec(s);
  // A day the calendar has: Date.parse reads 2024-02-30 as 1 March.
  if (ymd && isDay(Number(ymd[1]), Number(ymd[2]), Number(ymd[3]))) {
    const t = Date.parse(s);
    if (!Number.isNaN(t) && t >= FIRST_INSTANT && t <= LAST_INSTANT) return new Date(t);
  }
  for (const f of LOOSE_FORMATS) {
    const d = strptime(s, f);
    if (d) return d;
  }
  // 15/03/2024 or 03/15/2024: read only when a number over 12 says which is the day (03/04/2024
  // is the 3rd of April in most of the world and the 4th of March in the United States).
  const slashed = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/.exec(s);
  if (slashed) {
    const [a, b, y] = [Number(slashed[1]), Number(slashed[2]), Number(slashed[3])];
    const [day, month] = a > 12 && b <= 12 ? [a, b] : b > 12 && a <= 12 ? [b, a] : [0, 0];
    if (day && isDay(y, month, day)) return new Date(Date.UTC(y, month - 1, day));
  }
  return null;
}

const isDay = (y: number, m: number, d: number) => {
  const t = new Date(Date.UTC(y, m - 1, d));
  return t.getUTCFullYear() === y && t.getUTCMonth() === m - 1 && t.getUTCDate() === d;
};

/**
 * The sender's wall clock of `date`, read from its raw string: when that ends with a UTC offset
 * ("2023-05-08T23:30:00-0500", "... +02:00"), the instant moved by the offset, so that its UTC
 * fields are the sender's local date and time (23:30 on 8 May, not 04:30 on 9 May). The days a
 * fact names ("On 8 May 2023, ...", "yesterday (7 May 2023)") are the sender's. Otherwise `date`.
 */
export function wallClock(date: Date, raw: string): Date {
  const m = /\d(?:\s*)([+-])(\d{2}):?(\d{2})$/.exec(raw.trim());
  if (!m || !/\d:\d{2}/.test(raw)) return date;
  const minutes = (m[1] === "-" ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3]));
  return new Date(date.getTime() + minutes * 60_000);
}

/**
 * The sender's day and time of a message's `date` as ingest reads it: `at` (the batch path's
 * `timestamp_format` reading) or else the loose formats, on the sender's clock (wallClock); null
 * when it cannot be read (03/04/2024 is read by neither). The day a fact's "On <day>" lead names
 * and the day composed context shows before it both come from here.
 */
export function saidAt(raw: string, at: Date | null = null): Date | null {
  const read = at ?? parseLooseDate(raw);
  return read ? wallClock(read, raw) : null;
}

export const formatDay = (d: Date) =>
  `${d.getUTCDate()} ${MONTH_NAMES[d.getUTCMonth()]} ${d.getUTCFullYear()}`;
const formatMonth = (d: Date) => `${MONTH_NAMES[d.getUTCMonth()]} ${d.getUTCFullYear()}`;

const addDays = (d: Date, n: number) => new Date(d.getTime() + n * 86_400_000);
const addMonths = (d: Date, n: number) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + n, 1));
const UNITS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine"];
const TEENS = [
  "ten",
  "eleven",
  "twelve",
  "thirteen",
  "fourteen",
  "fifteen",
  "sixteen",
  "seventeen",
  "eighteen",
  "nineteen",
];
const TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"];
const NUMBERS: Record<string, number> = {
  a: 1,
  an: 1,
  "a couple of": 2,
  "a couple": 2,
  "couple of": 2,
  ...Object.fromEntries(UNITS.map((w, i) => [w, i + 1])),
  ...Object.fromEntries(TEENS.map((w, i) => [w, i + 10])),
  ...Object.fromEntries(TENS.map((w, i) => [w, (i + 2) * 10])),
};
/**
 * A count of days, weeks, months or years: a number word up to ninety-nine ("ten", "twenty-five",
 * "thirty two", "a couple of") or digits. A compound is read whole, never its last word alone
 * ("twenty-five years ago" is not "five years ago"), and nothing is read from inside a word.
 */
const COUNT = String.raw`(?<![\w-])((?:${TENS.join("|")})(?:[- ](?:${UNITS.join("|")}))?|${TEENS.join("|")}|a couple of|a couple|couple of|an|a|${UNITS.join("|")}|\d+)`;
const countOf = (word: string) => {
  const [tens, unit] = word.toLowerCase().split(/[- ](?=\w+$)/);
  if (unit && NUMBERS[tens!] && NUMBERS[unit] && TENS.includes(tens!))
    return NUMBERS[tens!]! + NUMBERS[unit]!;
  return NUMBERS[word.toLowerCase()] ?? Number(word);
};
/** "twenty-five years ago", "in a couple of weeks": compiled once, not per text. */
const COUNT_AGO = new RegExp(String.raw`\b${COUNT} (day|week|month|year)s? ago\b`, "i");
const IN_COUNT = new RegExp(String.raw`\bin ${COUNT} (day|week|month|year)s?\b`, "i");
const MONTH_INDEX = new Map(MONTH_NAMES.map((m, i) => [m.toLowerCase(), i]));

/**
 * Present-tense verbs of what is scheduled ("starts a new job in 5 days", "my mom arrives on
 * Monday", "my lease ends in two months").
 */
const SCHEDULED =
  /\b(?:starts?|begins?|ends|expires?|leaves?|flies|fly|arrives?|returns?|graduates?|moves?|visits?|comes|(?:is|are|am|'s|'re|'m) (?:moving|starting|leaving|flying|visiting|coming|arriving|getting|going|having|meeting|seeing))\b/i;
/** Words of a sentence about what is ahead. */
const FUTURE =
  /\b(?:will|'ll|going to|gonna|plan|plans|planning|hope to|want to|wants to|have to|has to|need to|needs to|remind|(?:please|can you|could you|to) schedule)\b/i;
/**
 * Words of a sentence telling what happened. A feeling in -ed ("excited", "scared", "stressed")
 * is an adjective, no past tense: "Excited for Friday!" looks ahead.
 */
const PAST =
  /\b(?:was|were|did|went|had|got|came|saw|met|made|took|ran|bought|told|said|forgot|felt|ate|drank|spent|found|gave|thought|wrote|visited|played|watched|finished|started|(?!(?:tir|excit|worri|bor|scar|interest|amaz|stress|exhaust|thrill|disappoint|annoy|confus|surpris|shock|reliev|overwhelm|frustrat|obsess|pump|psych|stok|prepar|schedul|book|plann)ed\b)[a-z]{3,}ed)\b/i;
/** A feeling about what is ahead ("nervous about the exam", "can't wait for", "dreading"). */
const ANTICIPATION =
  /\b(?:excited|nervous|scared|stressed|worried|anxious|looking forward|can't wait|cannot wait|dreading|pumped|psyched|stoked|thrilled|ready for)\b/i;
/**
 * An appointment, a reservation or a place in a class one got, made or put in a calendar: it is
 * ahead ("I finally got an appointment ... on Monday", "I made a reservation at Nobu on Saturday",
 * "I signed up for a yoga class on Wednesday", "I've added the dentist appointment on Thursday to
 * your calendar"), unless the rest of the sentence tells it as past ("I made a reservation at Nobu
 * on Saturday and the food was amazing").
 */
const OBTAINED =
  /\b(?:got|booked|scheduled|made|set up|landed|arranged|added|reserved|signed up for|registered for|enrolled in)\s+(?:an?\s+|the\s+|my\s+|your\s+)?(?:[\w-]+\s+)?(?:appointment|interview|meeting|exam|call|surgery|presentation|reservation|booking|class|course|lesson|session)\b/i;
const obtainedAhead = (sentence: string) => {
  const obtained = OBTAINED.exec(sentence);
  return !!obtained && !PAST.test(sentence.replace(obtained[0], ""));
};

/**
 * Something one has on a day ("an interview on Tuesday", "Dentist on Tuesday", "the recital is
 * Thursday at 6"): ahead, unless the sentence tells it as past.
 */
const APPOINTMENT =
  /\b(?:appointment|interview|meeting|exam|call|surgery|presentation|deadline|dentist|doctor|check-?up|recital|concert|game|match|party|wedding|flight|trip|dinner|lunch|brunch|date|class|lesson|practice|rehearsal|shift|therapy|session)\b/i;

/** Where the sentence of `text` around `index` starts and ends; "Dr. Lee" and "e.g." go on. */
function sentenceBounds(text: string, index: number): [number, number] {
  let from = 0;
  for (const stop of text.matchAll(/[.!?](?:\s+|$)/g)) {
    const end = stop.index + 1;
    if (stopsInside(text.slice(0, end), text.slice(stop.index + stop[0].length))) continue;
    if (end > index) return [from, end];
    from = stop.index + stop[0].length;
  }
  return [from, text.length];
}

/** The sentence of `text` around `index`. */
function sentenceAt(text: string, index: number): string {
  const [from, to] = sentenceBounds(text, index);
  return text.slice(from, to);
}

/**
 * Where a sentence's next clause starts: "and", "but", a comma... before its own subject, a
 * pronoun or one of `subjects` (the speakers a text in the third person names: "the user went
 * hiking last week and the user has a dentist appointment on Friday").
 */
function clauseStarts(subjects: readonly string[]): RegExp {
  const names = ["I", "we", "you", "he", "she", "they", ...subjects.map(escapeRe)].join("|");
  return new RegExp(
    String.raw`(?:[,;]\s*|\s(?:and|but|so|while|whereas|though|although|because)\s+)(?=(?:${names})(?![\p{L}\p{N}_]))`,
    "gu",
  );
}

/**
 * The clause of `text` around `index` ("I have a dentist appointment on Friday" in "I went hiking
 * last week and I have a dentist appointment on Friday"), cut where `starts` (clauseStarts) finds
 * a clause: its tense is the weekday's.
 */
function clauseAt(text: string, index: number, starts: RegExp): string {
  const [from, to] = sentenceBounds(text, index);
  let start = from;
  for (const c of text.slice(from, to).matchAll(starts)) {
    const at = from + c.index;
    if (at >= index) return text.slice(start, at);
    start = at + c[0].length;
  }
  return text.slice(start, to);
}

/** A sentence telling what happened, and nothing ahead: a past tense, no future or scheduled verb. */
const toldAsPast = (sentence: string) =>
  PAST.test(sentence) && !FUTURE.test(sentence) && !SCHEDULED.test(sentence);

/**
 * A habit ("Make sure to always water the plants on Sunday", "I usually call my mom on Sunday"):
 * its weekday is any week's, no date.
 */
const HABIT = /\b(?:always|usually|normally|typically|generally|regularly|often|every)\b/i;

/**
 * Appends the absolute date after relative expressions ("yesterday" becomes
 * "yesterday (7 May 2023)"), computed from the message date, so a fact keeps its meaning when
 * read months later.
 */
export function resolveRelativeDates(
  text: string,
  at: Date | null,
  subjects: readonly string[] = [],
): string {
  if (!at) return text;
  const rules: Array<[RegExp, (m: RegExpExecArray) => string | null]> = [
    [/\bthe day before yesterday\b/i, () => formatDay(addDays(at, -2))],
    [/\bthe day after tomorrow\b/i, () => formatDay(addDays(at, 2))],
    [/(?<!day before )\byesterday\b/i, () => formatDay(addDays(at, -1))],
    [/\btoday\b|\btonight\b|\bthis morning\b|\bthis evening\b/i, () => formatDay(at)],
    [/\blast night\b/i, () => formatDay(addDays(at, -1))],
    [/(?<!day after )\btomorrow\b/i, () => formatDay(addDays(at, 1))],
    [/\blast week\b/i, () => `the week before ${formatDay(at)}`],
    // The weekend before the message's week (said on a weekend day, the one before that).
    [
      /\blast weekend\b/i,
      () => {
        const day = at.getUTCDay();
        return `the weekend of ${formatDay(addDays(at, -((day + 1) % 7) - (day === 6 || day === 0 ? 7 : 0)))}`;
      },
    ],
    [/\bnext week\b/i, () => `the week after ${formatDay(at)}`],
    [/\blast month\b/i, () => formatMonth(addMonths(at, -1))],
    [/\bnext month\b/i, () => formatMonth(addMonths(at, 1))],
    [/\bthis month\b/i, () => formatMonth(at)],
    // This weekend: the Saturday and Sunday of the message's week (on a Sunday, that day's); told
    // in the past ("We had a blast at the lake this weekend", said on a Monday), the weekend just
    // gone (said on a weekend day, that one).
    [
      /\bthis weekend\b/i,
      (m) => {
        const day = at.getUTCDay();
        const gone = toldAsPast(sentenceAt(m.input, m.index));
        const saturday = day === 0 ? -1 : gone && day !== 6 ? -(day + 1) : 6 - day;
        return `the weekend of ${formatDay(addDays(at, saturday))}`;
      },
    ],
    // "last June": the latest June before the message's month; "next June" the first after it.
    [
      /\b(last|next) (january|february|march|april|may|june|july|august|september|october|november|december)\b/i,
      (m) => {
        const month = MONTH_INDEX.get(m[2]!.toLowerCase())!;
        const now = at.getUTCMonth();
        const ahead = m[1]!.toLowerCase() === "next";
        const year = at.getUTCFullYear() + (ahead ? (month > now ? 0 : 1) : month < now ? 0 : -1);
        return `${MONTH_NAMES[month]} ${year}`;
      },
    ],
    [/\blast year\b/i, () => String(at.getUTCFullYear() - 1)],
    [/\bnext year\b/i, () => String(at.getUTCFullYear() + 1)],
    [/\bthis year\b/i, () => String(at.getUTCFullYear())],
    [
      COUNT_AGO,
      (m) => {
        const n = countOf(m[1]!);
        const unit = m[2]!.toLowerCase();
        if (unit === "day") return formatDay(addDays(at, -n));
        if (unit === "week") return `the week of ${formatDay(addDays(at, -7 * n))}`;
        if (unit === "month") return formatMonth(addMonths(at, -n));
        return String(at.getUTCFullYear() - n);
      },
    ],
    [
      IN_COUNT,
      (m) => {
        // "in a year" is as often how long something took ("grew a lot in a year"): a time ahead
        // only where the sentence speaks of the future.
        // So is a thing that "is in three months" (a birthday, a trip): due then.
        // And what is scheduled in the present tense: "starts a new job in 5 days", "has a dentist
        // appointment in three weeks".
        const due =
          /\b(?:is|are|'s|was due|is due)\s+$/i.test(text.slice(0, m.index)) ||
          SCHEDULED.test(text) ||
          /\b(?:appointment|exam|interview|surgery|flight|deadline|wedding|due date)\b/i.test(text);
        if (!due && !/\b(will|'ll|going to|gonna|plan|plans|planning|hope to|want to|wants to)\b/i.test(text))
          return null;
        const n = countOf(m[1]!);
        const unit = m[2]!.toLowerCase();
        if (unit === "day") return formatDay(addDays(at, n));
        if (unit === "week") return `the week of ${formatDay(addDays(at, 7 * n))}`;
        if (unit === "month") return formatMonth(addMonths(at, n));
        return String(at.getUTCFullYear() + n);
      },
    ],
    [
      /\bnext (sunday|monday|tuesday|wednesday|thursday|friday|saturday)\b/i,
      (m) => {
        const target = DAY_NAMES.indexOf(m[1]!.toLowerCase());
        let diff = (target - at.getUTCDay() + 7) % 7;
        if (diff === 0) diff = 7;
        return formatDay(addDays(at, diff));
      },
    ],
    [
      /\blast (sunday|monday|tuesday|wednesday|thursday|friday|saturday)\b/i,
      (m) => {
        const target = DAY_NAMES.indexOf(m[1]!.toLowerCase());
        let diff = (at.getUTCDay() - target + 7) % 7;
        if (diff === 0) diff = 7;
        return formatDay(addDays(at, -diff));
      },
    ],
  ];
  let out = text;
  for (const [re, fn] of rules) {
    const m = re.exec(out);
    if (!m) continue;
    // Capitalised inside a sentence it is a title ("Tomorrow, and Tomorrow, and Tomorrow"), no date.
    if (/^\p{Lu}/u.test(m[0]) && !/(?:^|[.!?:]\s+|["“(]\s*)$/u.test(out.slice(0, m.index))) continue;
    const abs = fn(m);
    if (!abs) continue;
    const end = m.index + m[0].length;
    out = `${out.slice(0, end)} (${abs})${out.slice(end)}`;
  }
  return withWeekdays(out, at, subjects);
}

/**
 * A weekday alone ("this Friday", "on Monday", "Monday at 9"), each one: the coming one where its
 * own sentence speaks of what is ahead, the last one where it tells what happened; neither, left as
 * said ("I saw my therapist on Tuesday. I have an interview next week." dates Tuesday past).
 * "every Monday", "Mondays" are habits, "next/last Monday" resolved before.
 */
const WEEKDAY_ALONE =
  /(?<!\b(?:next|last|every|each|most|some|one|a|first|second|third|fourth|fifth) )\b(this (?:coming )?)?(sunday|monday|tuesday|wednesday|thursday|friday|saturday)\b(?!s\b|'s\b| \(| (?:mornings|afternoons|evenings|nights)\b)/gi;

function withWeekdays(text: string, at: Date, subjects: readonly string[]): string {
  const found = [...text.matchAll(WEEKDAY_ALONE)];
  let out = text;
  // Where clauses start, built once for the text's speakers (matchAll works on a copy of it).
  const starts = found.length ? clauseStarts(subjects) : null;
  for (const m of found.reverse()) {
    const sentence = sentenceAt(text, m.index);
    if (HABIT.test(sentence)) continue;
    // A list of days ("Monday, Wednesday and Friday mornings") is a schedule, not three dates.
    const around = `${text.slice(Math.max(0, m.index - 14), m.index)}|${text.slice(m.index + m[0].length, m.index + m[0].length + 14)}`;
    if (
      /(?:day,\s*|day\s+(?:and|or|&)\s+|day[\s/]+)\|/i.test(around) ||
      /\|(?:,\s*|\s+(?:and|or|&)\s+|[\s/]+)\w+day\b/i.test(around)
    )
      continue;
    const target = DAY_NAMES.indexOf(m[2]!.toLowerCase());
    let abs: string | null = null;
    // Ahead: "this Friday", a scheduled or future verb, a day something is moved, booked or due
    // to ("rescheduled to Friday", "my interview is on Friday"), an appointment one got ("got an
    // appointment ... on Monday"); else a past tense tells what happened ("I had a job interview
    // on Tuesday"); else an appointment or a feeling about the day is ahead ("Excited for Friday!").
    const day = m[0].replace(/^this (?:coming )?/i, "");
    const past = PAST.test(clauseAt(text, m.index, starts!));
    // "this Tuesday" is the coming one, unless the sentence tells it as past: "I went to the
    // doctor this Tuesday" (said on a Friday) is the Tuesday of the same week; "this coming" is ahead.
    const thisDay = !!m[1];
    const ahead =
      /coming/i.test(m[1] ?? "") ||
      SCHEDULED.test(sentence) ||
      FUTURE.test(sentence) ||
      new RegExp(
        String.raw`\b(?:(?:to|for)(?: this)?|(?<!\btoday )(?:is|are|'s)(?: on| for)?(?: this)?)\s+${day}\b`,
        "i",
      ).test(sentence) ||
      // "until Friday" is ahead, unless the sentence tells it as past: "I worked there until Friday".
      (new RegExp(String.raw`\b(?:until|till)(?: this)?\s+${day}\b`, "i").test(sentence) && !past) ||
      obtainedAhead(sentence) ||
      (!past && (thisDay || APPOINTMENT.test(sentence) || ANTICIPATION.test(sentence)));
    if (ahead) {
      let diff = (target - at.getUTCDay() + 7) % 7;
      if (diff === 0 && !thisDay) diff = 7;
      abs = formatDay(addDays(at, diff));
    } else if (past) {
      let diff = (at.getUTCDay() - target + 7) % 7;
      if (diff === 0 && !thisDay) diff = 7;
      abs = formatDay(addDays(at, -diff));
    }
    if (!abs) continue;
    const end = m.index + m[0].length;
    out = `${out.slice(0, end)} (${abs})${out.slice(end)}`;
  }
  return out;
}
