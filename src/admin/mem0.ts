import { z } from "zod";
import { isoDateTime, timestampText } from "../dates/dates.js";
import type { ExportMemory } from "../db/transfer.js";
import { UUID_RE, uuidFromSeed } from "../ids.js";
import { factHash } from "../ingest/assemble.js";
import { isBlank, JsonObject } from "../wire/common.js";

/** One mem0 memory as its `get_all`/export gives it; unknown fields are ignored. */
const Mem0Item = z.object({
  id: z.string().optional(),
  memory: z.string().trim().min(1),
  // A blank user id is no user the API would take (ingest refuses it), not "no user".
  user_id: z
    .string()
    .refine((s) => !isBlank(s), "must not be empty or blank")
    .nullish(),
  agent_id: z.string().nullish(),
  run_id: z.string().nullish(),
  metadata: JsonObject().nullish(),
  categories: z.array(z.string()).nullish(),
  created_at: z.string().nullish().refine(isDate, "not a date and time"),
  updated_at: z.string().nullish().refine(isDate, "not a date and time"),
});

/** A date and time as mem0 writes it, ISO 8601 (see isoDateTime); one without a zone (`2024-07-20 04:49:03`) is UTC. */
function isDate(s: string | null | undefined): boolean {
  return !s || isoDateTime(s) !== null;
}

type Item = { line: number; value: ExportMemory } | { line: number; error: string };

/**
 * Reads a mem0 export, either JSON lines (one memory a line) or one JSON document (an array, or
 * `{"results": [...]}` as mem0's `get_all` returns), and turns each memory into a fact. Numbers in
 * reports are lines for JSON lines and item positions (from 1) for a document. A mem0 id that is
 * a UUID is kept; any other id (or none) gives a UUID derived from it, so a second import of the
 * same file changes nothing. Vectors are always computed by the target's embedder.
 */
export async function* mem0Items(lines: AsyncIterable<string>, orgId: string): AsyncGenerator<Item> {
  const all: string[] = [];
  for await (const l of lines) all.push(l);
  const whole = all.join("\n").trim();
  type Raw = { line: number; raw: unknown } | { line: number; error: string };
  let items: Raw[] | undefined;
  if (whole.startsWith("[") || whole.startsWith("{")) {
    try {
      const doc = JSON.parse(whole) as unknown;
      const list = Array.isArray(doc)
        ? doc
        : Array.isArray((doc as { results?: unknown }).results)
          ? (doc as { results: unknown[] }).results
          : Array.isArray((doc as { memories?: unknown }).memories)
            ? (doc as { memories: unknown[] }).memories
            : undefined;
      if (list) items = list.map((raw, i) => ({ line: i + 1, raw }));
    } catch {
      // not one document: JSON lines
    }
  }
  items ??= all.flatMap((l, i): Raw[] => {
    if (!l.trim()) return [];
    try {
      return [{ line: i + 1, raw: JSON.parse(l) as unknown }];
    } catch {
      return [{ line: i + 1, error: "not valid JSON" }];
    }
  });
  for (const it of items) {
    if ("error" in it) {
      yield it;
      continue;
    }
    const parsed = Mem0Item.safeParse(it.raw);
    if (!parsed.success) {
      const i = parsed.error.issues[0];
      yield { line: it.line, error: `${i?.path.join(".") || "item"}: ${i?.message}` };
      continue;
    }
    yield { line: it.line, value: toFact(parsed.data, orgId) };
  }
}

function toFact(m: z.infer<typeof Mem0Item>, orgId: string): ExportMemory {
  // As a mnemo-format file's timestamps are read: the text itself, so microseconds are kept.
  const iso = (s: string | null | undefined) => (s ? timestampText(s) : null);
  const created = iso(m.created_at) ?? new Date().toISOString();
  // Without an id, a memory is its text in its scope: the same words for two agents or runs of a
  // user are two memories (the agent and run join the seed only when given, as before).
  const scope = m.agent_id || m.run_id ? `\n${m.agent_id ?? ""}\n${m.run_id ?? ""}` : "";
  const id =
    m.id && UUID_RE.test(m.id)
      ? m.id.toLowerCase()
      : uuidFromSeed(`mem0:${orgId}:${m.id ?? `${m.user_id ?? ""}\n${m.memory}${scope}`}`);
  return {
    id,
    type: "fact",
    text: m.memory,
    user_id: m.user_id ?? null,
    agent_id: m.agent_id ?? null,
    conv_id: m.run_id ?? null,
    app_id: null,
    group_ids: [],
    categories: m.categories ?? [],
    details: {
      fact_type: "other",
      source: "mem0",
      ...(m.id ? { mem0_id: m.id } : {}),
      ...(m.metadata ? { metadata: m.metadata } : {}),
    },
    status: "active",
    supersedes: null,
    namespace: null,
    trigger_entities: [],
    outcome: null,
    full_content: null,
    content_hash: factHash(m.memory),
    job_id: null,
    write_key: null,
    embedding: null,
    created_at: created,
    updated_at: iso(m.updated_at) ?? created,
  };
}
