import type { Db } from "../db/db.js";
import { memoriesAfter } from "../db/memories.js";
import { embedWith } from "../memories/vectors.js";
import type { Embedder } from "../providers/types.js";

/** Memories embedded per call of the embedder (and per statement). */
const PAGE = 100;

/** How many memories reembedAll embeds: every one. */
export async function memoriesToEmbed(db: Db): Promise<number> {
  const { rows } = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM memories");
  return rows[0]!.n;
}

/**
 * `admin reembed`: every memory of every organisation gets its vector made again by the configured
 * embedder, which is then recorded as the database's (src/db/migrate.ts, checkEmbedder): the way to
 * change the embedding model of a database that holds vectors. In id order, PAGE rows a call and a
 * statement, each its own transaction; a row whose text changed meanwhile keeps the vector its new
 * text got. Run it with the service stopped: a process of the old embedder writes its vectors
 * meanwhile. Interrupted, it is run again from the start (every vector is made again).
 */
export async function reembedAll(
  db: Db,
  embedder: Embedder,
  onRows: (n: number) => void = () => {},
): Promise<{ memories: number; embedder: string }> {
  let after = "00000000-0000-0000-0000-000000000000";
  let memories = 0;
  for (;;) {
    const rows = await memoriesAfter(db, after, PAGE);
    if (rows.length === 0) break;
    await embedWith(embedder, db, rows, { replace: true });
    memories += rows.length;
    onRows(rows.length);
    after = rows.at(-1)!.id;
  }
  await db.query(
    `INSERT INTO settings (key, value) VALUES ('embedder', $1)
     ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`,
    [embedder.name],
  );
  return { memories, embedder: embedder.name };
}
