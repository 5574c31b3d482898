import { CoreError } from "../src/errors.js";

export interface TranscriptMessage {
  role: string;
  content: string;
  name?: string;
  date?: string;
}

const ROLES: Record<string, string> = {
  user: "user",
  human: "user",
  assistant: "assistant",
  ai: "assistant",
  bot: "assistant",
  system: "system",
};

/**
 * A speaker other than a role: one to three words of letters ("Caroline", "Dr. Ana Lima"), then
 * the colon and a space (or the line's end). Not a sentence before a colon ("Here is the plan:"),
 * nor a time ("at 10:15") or an address ("https://...").
 */
const NAME_LABEL = /^\p{L}[\p{L}\p{M}'’.-]*(?:\s+\p{L}[\p{L}\p{M}'’.-]*){0,2}$/u;

/**
 * A pasted transcript: a JSON array of messages (or `{"messages": [...]}`), or `Speaker: text`
 * lines, where a line without a speaker continues the previous message. User/Assistant map to
 * those roles; any other speaker name is kept as the role, which the extractor reads as a name.
 */
export function parseTranscript(text: string): TranscriptMessage[] {
  const trimmed = text.trim();
  if (!trimmed) throw new CoreError("invalid_messages", "Paste at least one message.");
  if (trimmed.startsWith("[") || trimmed.startsWith("{")) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch {
      throw new CoreError("invalid_messages", "The transcript starts like JSON but is not valid JSON.");
    }
    const list = Array.isArray(parsed) ? parsed : (parsed as { messages?: unknown })?.messages;
    if (!Array.isArray(list)) {
      throw new CoreError("invalid_messages", "JSON transcripts are an array of {role, content} messages.");
    }
    return list as TranscriptMessage[];
  }
  const out: TranscriptMessage[] = [];
  for (const line of trimmed.split(/\r?\n/)) {
    const m = /^\s*([^:\n]{1,64}?)\s*:(\s*)(.*)$/.exec(line);
    const speaker = m ? m[1]!.trim() : "";
    const role = ROLES[speaker.toLowerCase()];
    if (m && (role || ((m[2] || !m[3]) && NAME_LABEL.test(speaker)))) {
      out.push({ role: role ?? speaker, content: m[3]!.trim() });
    } else if (out.length > 0) {
      const last = out[out.length - 1]!;
      last.content = `${last.content}\n${line.trim()}`.trim();
    } else if (line.trim()) {
      throw new CoreError(
        "invalid_messages",
        "Start each message with its speaker, e.g. `User: I moved to Lisbon.`, or paste a JSON array.",
      );
    }
  }
  return out;
}
