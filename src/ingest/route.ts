import { saidAt } from "../dates/dates.js";
import { escapeRe, strptime } from "../dates/strptime.js";
import { isUtterance } from "../providers/local/english.js";
import { couldBeName, couldBeSpeaker } from "../providers/local/names.js";
import type { Turn } from "../providers/types.js";
import type { StoredRequest } from "./submit.js";

const STANDARD_ROLES = new Set([
  "user",
  "assistant",
  "system",
  "tool",
  "function",
  "developer",
  "human",
  "ai",
]);

/**
 * Stage 1, route: at most `threshold` messages is the live path, more is the batch path. On the
 * batch path each `date` is parsed with `timestamp_format`; unparseable or absent dates keep the raw
 * string. Either way a loosely read date is kept to resolve relative dates ("yesterday"); a
 * message without one was said on the day of the dated message before it in the request (a reply
 * sent without a date in a dated conversation), else, live, about when it was sent (`receivedAt`),
 * and so was a message whose date cannot be read (its raw string is kept all the same), so its
 * relative dates resolve against that (a batch without dates is history of unknown age:
 * left as said).
 */
export function routeTurns(
  request: StoredRequest,
  threshold: number,
  receivedAt: Date | null = null,
): { path: "live" | "batch"; turns: Turn[] } {
  const path = request.messages.length > threshold ? "batch" : "live";
  const format = path === "batch" ? (request.timestamp_format ?? null) : null;
  let lastDated: Date | null = null;
  // What a message sent without a date was said on: the dated message's before it in the request.
  let lastSaid: { date: string; at: Date | null } | null = null;
  const turns = request.messages.flatMap((m, index): Turn[] => {
    let content = m.content;
    let speaker = m.name ?? null;
    if (!speaker && !STANDARD_ROLES.has(m.role.toLowerCase())) speaker = m.role;
    // An assistant's message names no other speaker this way ("Fixed: the error was ...").
    const named = !speaker && m.role !== "tool" && m.role.toLowerCase() !== "assistant";
    // "Caroline: I went ..." names its speaker in the content; "Remember: ...", "Yes: ..." or "Mom:
    // ..." is a label, an interjection or the one the message is about, not a name (couldBeName).
    const prefixed = named ? SPEAKER_PREFIX.exec(content) : null;
    if (prefixed && couldBeName(prefixed[1]!) && isUtterance(prefixed[2]!.split("\n")[0]!)) {
      speaker = prefixed[1]!;
      content = prefixed[2]!;
    }
    if (m.role === "tool" && !speaker) speaker = /^\s*\[?([A-Za-z_][\w.-]*)\]?:\s/.exec(content)?.[1] ?? null;
    const at = format && m.date ? strptime(m.date, format) : null;
    const own = m.date ? saidAt(m.date, at) : null;
    if (own) {
      lastDated = own;
      lastSaid = { date: m.date!, at };
    }
    const said = m.date ? { date: m.date, at } : lastSaid;
    const turn = {
      index,
      role: m.role,
      speaker,
      content,
      date: said?.date ?? null,
      at: said?.at ?? null,
      // A date that cannot be read resolves as a missing one does ("yesterday" was left as said).
      refDate: own ?? lastDated ?? (path === "live" ? receivedAt : null),
      eventId: m.dia_id?.trim() ? m.dia_id.trim() : String(index),
    };
    const lines = named ? transcriptLines(m.content) : null;
    return lines ? lines.map((l) => ({ ...turn, ...l })) : [turn];
  });
  // A transcript's lines are turns of their own: each turn's index is its place in the list.
  return { path, turns: turns.map((t, index) => ({ ...t, index })) };
}

/** "Caroline: ..." opening a message or a line: a speaker's name (when it can be one) and what follows. */
const SPEAKER_PREFIX = /^([A-Z][\w'-]{1,30}(?: [A-Z][\w'-]{1,30})?):\s+(\S[\s\S]*)$/;

/**
 * A conversation pasted into one message, two of its lines or more naming their speaker and reading
 * as someone's words ("Alice: I live in Berlin.\nBob: I live in Rome.", isUtterance), after an
 * introduction of the sender's or not ("Here is what my roommates told me."): each speaker's words,
 * "Me:" the sender's, a line without a name going on with the line before, so each line is its
 * speaker's and not the sender's, nor the first name's. A line without a name that speaks of the
 * speaker before it or of several speakers (aboutSpeakers: "I think Bob should move." after Bob's
 * line) is no one's but the sender's. A list of "Label: value" lines ("Milk: 2 litres\nEggs: 12")
 * is none, nor are lines about the one they name ("Mom: she turns 70"). Null for anything else.
 */
function transcriptLines(content: string): Array<{ speaker: string | null; content: string }> | null {
  const lines = content.split("\n").map((line) => {
    const m = SPEAKER_PREFIX.exec(line.trim());
    return m && couldBeSpeaker(m[1]!)
      ? { line, label: m[1]!, text: m[2]! }
      : { line, label: null, text: line };
  });
  const spoken = lines.filter(
    (l) => l.label && isUtterance(l.text) && (couldBeName(l.label) || !ABOUT_LABEL.test(l.text)),
  );
  if (spoken.length < 2) return null;
  const speakers = [...new Set(spoken.map((l) => l.label!).filter((label) => !/^me$/i.test(label)))];
  const out: Array<{ speaker: string | null; content: string }> = [];
  for (const l of lines) {
    const last = out.at(-1);
    if (l.label) out.push({ speaker: /^me$/i.test(l.label) ? null : l.label, content: l.text });
    else if (last && !(last.speaker && aboutSpeakers(l.line, last.speaker, speakers)))
      last.content += `\n${l.line}`;
    else out.push({ speaker: null, content: l.line });
  }
  return out.filter((l) => l.content.trim());
}

/**
 * Whether a line without a name speaks of the speaker before it, by name ("I think Bob should
 * move." after Bob's line: no one names themselves so), or of several of the speakers, by their
 * names or as all of them ("Alice and Bob never call.", "They both should move.", "They never visit
 * each other."): the sender's comment on the conversation, not that speaker's words going on. A
 * bare "they" may be anyone ("They have great pizza there.") and goes on with the speaker.
 */
function aboutSpeakers(line: string, speaker: string, speakers: string[]): boolean {
  const names = (name: string) =>
    new RegExp(
      String.raw`(?<![\p{L}\p{N}])(?:${escapeRe(name)}|${escapeRe(name.split(" ")[0]!)})(?![\p{L}\p{N}])`,
      "u",
    ).test(line);
  return names(speaker) || speakers.filter(names).length >= 2 || ALL_OF_THEM.test(line);
}
/**
 * "They both", "they should both", "all of them", "each other": several people at once, the
 * speakers of a conversation (not "they ate all the cake").
 */
const ALL_OF_THEM =
  /\b(?:they|them|they're)(?:\s+(?:are|were|should|could|would|will|can|must|have|had|do|did))?\s+(?:both|all)\b(?!\s+(?:the|this|that|these|those|my|your|his|her|its|our|their)\b)|\b(?:both|all|each|neither|either|none|the two) of them\b|\bthey\b[^.!?]*\b(?:each other|one another)\b/i;
/** "Mom: she turns 70": a line about the one its label names, said by the sender. */
const ABOUT_LABEL = /^(?:he|she|they)\b/i;
