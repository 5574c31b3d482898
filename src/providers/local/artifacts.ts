import { truncate } from "../../truncate.js";
import type { ExtractedArtifact, Turn } from "../types.js";
import { splitSentences } from "./english.js";

/**
 * Artifacts by rule: fenced code blocks, JSON objects and long structured markdown. On the agentic
 * path, tool turns that carry file content count too. The title is what versions hang on, so it
 * prefers a stable name: a file name, then a declared function or class, then the language.
 */
const FENCE = /```([^\n`]*)\n([\s\S]*?)```/g;
const FILE_NAME =
  /(?:[\w.-]+\/)*[\w-]+(?:\.[\w-]+)*\.(?:ts|tsx|js|jsx|py|json|ya?ml|toml|md|sql|sh|go|rs|java|rb|css|html|c|cpp|h)\b/;
const DECLARED =
  /\b(?:function|def|class|interface|struct|fn|func|const|let|var|type|CREATE TABLE)\s+([A-Za-z_][\w.]*)/i;

/** A tool call as the Stop hook sends it (examples/hooks/stop.mjs): `call: {json of its input}`. */
const TOOL_CALL = /^call:\s*(\{[\s\S]*\})\s*$/;

/** The input of a tool call turn (`call: {...}`), or null for any other turn. */
export function toolCallInput(content: string): Record<string, unknown> | null {
  const call = TOOL_CALL.exec(content.trim());
  return call ? tryJson(call[1]!) : null;
}

/** The file a tool call's input names (`file_path`, `path`, `notebook_path`), if any. */
export function toolCallPath(input: Record<string, unknown>): string | undefined {
  return [input.file_path, input.path, input.notebook_path].find((p): p is string => typeof p === "string");
}
/**
 * A file a tool turn opens with: its first line the path alone, or after a label ("src/app.ts",
 * "==> src/app.ts <==", "read_file: src/app.ts").
 */
const FILE_HEADER = new RegExp(String.raw`^\s*(?:==>\s*|[\w-]+:\s+)?(${FILE_NAME.source})(?:\s*<==)?:?\s*$`);
/** A line of a file as a read tool numbers it ("    12→const x = 1;", "12\tconst x"). */
const NUMBERED_LINE = /^\s*\d+(?:→|\t)/;

export function extractArtifacts(turns: Turn[], agentic: boolean): ExtractedArtifact[] {
  const out: ExtractedArtifact[] = [];
  // The file the last tool call read (its path), for the result after it.
  let reading: string | null = null;
  for (const turn of turns) {
    if (turn.role === "tool" && !agentic) continue;
    if (turn.role === "tool") {
      const args = toolCallInput(turn.content);
      const wasReading = reading;
      reading = null;
      if (args) {
        // A call that writes a whole file is that file; one that reads it, the result after it.
        const path = toolCallPath(args);
        if (path && typeof args.content === "string" && args.content.split("\n").length >= 3)
          out.push(fileArtifact(path, args.content, turn));
        else if (path && args.content === undefined && args.old_string === undefined) reading = path;
        continue;
      }
      const lines = turn.content.split("\n");
      if (wasReading && !turn.content.startsWith("[error]") && lines.length >= 5) {
        const numbered = lines.filter((l) => NUMBERED_LINE.test(l)).length >= lines.length / 2;
        const content = numbered ? lines.map((l) => l.replace(NUMBERED_LINE, "")).join("\n") : turn.content;
        out.push(fileArtifact(wasReading, content, turn));
        continue;
      }
    }
    let found = false;
    for (const m of turn.content.matchAll(FENCE)) {
      found = true;
      const info = m[1]!.trim();
      const body = m[2]!.replace(/\s+$/, "");
      if (!body.trim()) continue;
      const before = turn.content.slice(0, m.index);
      const lang = info.split(/\s+/)[0] || "text";
      const file =
        /(?:title|file(?:name)?)=["']?([^"'\s]+)/.exec(info)?.[1] ??
        FILE_NAME.exec(info)?.[0] ??
        FILE_NAME.exec(before.split("\n").slice(-2).join(" "))?.[0];
      const declared = DECLARED.exec(body)?.[1];
      const rationale = splitSentences(before).pop() ?? null;
      const named = file ?? (declared ? `${declared} (${lang})` : null);
      const title = named ?? described(`${lang} snippet`, rationale, body);
      // A title made of the lead-in says it already: the summary gives it whole, not twice.
      const summary = !rationale ? title : named ? `${title}: ${rationale}` : `${lang} snippet: ${rationale}`;
      out.push({
        title,
        summary: truncate(summary, 300),
        rationale,
        content: body,
        source_event_ids: [turn.eventId],
      });
    }
    if (found) continue;
    const content = turn.content.trim();
    const json = tryJson(content);
    if (json && content.length >= 80) {
      const title =
        typeof json.title === "string"
          ? json.title
          : typeof json.name === "string"
            ? json.name
            : described("JSON document", null, content);
      out.push({
        title,
        summary: `${title} (JSON document)`,
        rationale: null,
        content,
        source_event_ids: [turn.eventId],
      });
      continue;
    }
    const lines = content.split("\n");
    const structured = lines.filter((l) => /^\s*(#{1,6}\s|[-*]\s|\d+[.)]\s|\|)/.test(l)).length;
    if (lines.length >= 8 && structured >= 5) {
      const heading = lines
        .find((l) => /^#{1,6}\s/.test(l))
        ?.replace(/^#+\s*/, "")
        .trim();
      const title =
        heading ?? described(turn.role === "tool" ? "Tool output document" : "Document", null, content);
      out.push({ title, summary: title, rationale: null, content, source_event_ids: [turn.eventId] });
    } else if (agentic && turn.role === "tool" && FILE_HEADER.test(lines[0] ?? "") && lines.length >= 5) {
      // A file the output opens with by its path alone ("==> src/app.ts <=="): not a log, a diff
      // or a test run that names a file in its first line (a webpack log became "chunk-0.js", a
      // failing run of tests/test_currency.py a version of that file).
      out.push(fileArtifact(FILE_HEADER.exec(lines[0]!)![1]!, lines.slice(1).join("\n"), turn));
    }
  }
  return out;
}

function fileArtifact(title: string, content: string, turn: Turn): ExtractedArtifact {
  return {
    title,
    summary: `${title} (from a tool call)`,
    rationale: null,
    content,
    source_event_ids: [turn.eventId],
  };
}

/**
 * A title for content with no name of its own: the kind, then what introduced it ("bash snippet:
 * Here is my backup script") or its first line. Versions hang on titles, so a bare "bash snippet"
 * made every snippet of a user the next version of the first.
 */
function described(kind: string, lead: string | null, content: string): string {
  const hint = (lead ?? content.split("\n").find((l) => l.trim()) ?? "")
    .trim()
    .replace(/[:.!]+$/, "")
    .replace(/\s+/g, " ");
  if (!hint) return kind;
  return `${kind}: ${truncate(hint, 60, "...")}`;
}

function tryJson(s: string): Record<string, unknown> | null {
  if (!s.startsWith("{")) return null;
  try {
    const v = JSON.parse(s);
    return v && typeof v === "object" && !Array.isArray(v) ? v : null;
  } catch {
    return null;
  }
}
