import type { Db, Queryable } from "../db/db.js";
import { memoriesAfter } from "../db/memories.js";
import { reembedMark, setReembedMark } from "../db/settings.js";
import { embedWith } from "../memories/vectors.js";
import type { Embedder } from "../providers/types.js";

/** Memories embedded per call of the embedder (and per statement). */
const PAGE = 100;
const FIRST = "00000000-0000-0000-0000-000000000000";

/** Where a reembed with `embedder` starts: after the last memory an interrupted one of it did. */
async function startAfter(db: Queryable, embedder: Embedder): Promise<string> {
  const mark = await reembedMark(db);
  return mark?.to === embedder.name ? mark.after : FIRST;
}

/** How many memories reembedAll embeds: every one, or those an interrupted run left. */
export async function memoriesToEmbed(db: Db, embedder: Embedder): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM memories WHERE id > $1::uuid",
    [await startAfter(db, embedder)],
  );
  return rows[0]!.n;
}

/**
 * Why `admin reembed` must not run now, or undefined: other processes of Mnemo use the database
 * (the service, its workers, an MCP server). They keep making vectors with the old embedder meanwhile
 * (a fact ingested during a reembed kept the old model's vector for good), and search with it.
 * On the embedded database the command attached to the process that serves it; on PostgreSQL
 * their connections name themselves (application_name `mnemo`, pg-boss's `pgboss`; an admin
 * command's own is `mnemo-admin`).
 */
export async function reembedBlocker(
  db: Db,
  opened: { kind: "external" | "embedded" | "attached"; ownerPid?: number | undefined },
): Promise<string | undefined> {
  const stop =
    'stop it first, then run admin reembed again (README, "Changing the embedding model"): ' +
    "it would go on making vectors with the old embedder meanwhile";
  if (opened.kind === "attached")
    return `a running Mnemo process (pid ${opened.ownerPid ?? "unknown"}) serves this data directory: ${stop}`;
  if (opened.kind !== "external") return undefined;
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
     WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name IN ('mnemo', 'pgboss')`,
  );
  const n = rows[0]!.n;
  return n > 0
    ? `${n} connection${n === 1 ? "" : "s"} of running Mnemo processes (the service, its workers, an MCP server) use this database: ${stop.replace("stop it", "stop them")}`
    : undefined;
}

/**
 * `admin reembed`: every memory of every organisation gets its vector made again by the configured
 * embedder, which is then recorded as the database's (src/db/migrate.ts, checkEmbedder): the way to
 * change the embedding model of a database that holds vectors. In id order, PAGE rows a call and a
 * statement, each its own transaction; a row whose text changed meanwhile keeps the vector its new
 * text got. A mark is recorded before the first page and moved after each (ReembedMark): no
 * process starts while it is there, and a run interrupted is resumed where it stopped by a run of
 * the same embedder (one of another starts again from the first memory).
 */
export async function reembedAll(
  db: Db,
  embedder: Embedder,
  onRows: (n: number) => void = () => {},
): Promise<{ memories: number; embedder: string }> {
  let after = await startAfter(db, embedder);
  await setReembedMark(db, { to: embedder.name, after });
  let memories = 0;
  for (;;) {
    const rows = await memoriesAfter(db, after, PAGE);
    if (rows.length === 0) break;
    await embedWith(embedder, db, rows, { replace: true });
    memories += rows.length;
    onRows(rows.length);
    after = rows.at(-1)!.id;
    await setReembedMark(db, { to: embedder.name, after });
  }
  await db.tx(async (tx) => {
    await tx.query(
      `INSERT INTO settings (key, value) VALUES ('embedder', $1)
       ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`,
      [embedder.name],
    );
    await tx.query("DELETE FROM settings WHERE key = 'reembed'");
  });
  return { memories, embedder: embedder.name };
}
