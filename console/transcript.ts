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
 * Whether the text before a line's first colon names a speaker: a role, one token ("Caroline",
 * "SPEAKER_01", "agent-7", "@bob"), or up to six words each opening with a capital, a digit or a
 * bracket ("Speaker 2", "Dr. Ana Maria Lima", "John Smith (CEO)"), as diarised and exported
 * transcripts write them. Not a sentence before a colon ("Here is the plan:", "Now I wake at
 * 7:30": a word in lower case), a time ("10:15") or an address ("https://").
 */
function isSpeakerLabel(label: string, after: string): boolean {
  if (/^\/\//.test(after) || (/\d$/.test(label) && /^\d/.test(after))) return false;
  const words = label.split(/\s+/);
  if (words.length === 1) return true;
  return words.length <= 6 && words.every((w) => /^[\p{Lu}\p{N}([@]/u.test(w));
}

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
    const m = /^\s*([^:\n]{1,64}?)\s*:(.*)$/.exec(line);
    const speaker = m ? m[1]!.trim() : "";
    const role = ROLES[speaker.toLowerCase()];
    if (m && (role || isSpeakerLabel(speaker, m[2]!))) {
      out.push({ role: role ?? speaker, content: m[2]!.trim() });
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
