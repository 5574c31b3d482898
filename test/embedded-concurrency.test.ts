import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type Db } from "../src/db/db.js";
import { startPgliteBare } from "./helpers/bare-db.js";

/**
 * EMBEDDED-ONLY (left out of the PostgreSQL pass in vitest.config.ts): this tests the PGlite wire
 * server (src/db/pglite-server.ts) itself, which a real server does not use.
 *
 * The embedded database serves many connections from one PGlite session: transactions and
 * extended-protocol statements from different connections must not interleave.
 */
let bare: Awaited<ReturnType<typeof startPgliteBare>>;
let db: Db;
beforeAll(async () => {
  bare = await startPgliteBare({ vector: true });
  db = createDb(bare.url, 10);
  await db.query("CREATE TABLE counter (id int PRIMARY KEY, n int NOT NULL)");
  await db.query("INSERT INTO counter VALUES (1, 0)");
});
afterAll(async () => {
  await db?.close();
  await bare?.stop();
});

describe("embedded wire server", () => {
  it("runs concurrent transactions and parameterised queries without interleaving", async () => {
    const work: Array<Promise<unknown>> = [];
    for (let i = 0; i < 40; i++) {
      work.push(
        db.tx(async (t) => {
          const { rows } = await t.query<{ n: number }>("SELECT n FROM counter WHERE id = $1", [1]);
          await t.query("UPDATE counter SET n = $1 WHERE id = $2", [rows[0]!.n + 1, 1]);
        }),
      );
      work.push(db.query("SELECT $1::int AS v", [i]).then((r) => expect(r.rows[0].v).toBe(i)));
    }
    await Promise.all(work);
    const { rows } = await db.query("SELECT n FROM counter WHERE id = 1");
    // Read-modify-write inside transactions that never interleave loses no increment.
    expect(rows[0].n).toBe(40);
  });

  it("rolls back a transaction whose connection goes away", async () => {
    const client = await db.pool.connect();
    await client.query("BEGIN");
    await client.query("UPDATE counter SET n = -1 WHERE id = 1");
    client.release(true); // destroys the connection mid-transaction
    const { rows } = await db.query("SELECT n FROM counter WHERE id = 1");
    expect(rows[0].n).toBe(40);
  });

  it("returns large results intact to concurrent readers", async () => {
    // Results far larger than a socket buffer: bytes must be copied out of PGlite's memory
    // before they are queued on the socket, or later rows overwrite earlier ones in flight.
    const sql = "SELECT g AS n, repeat(md5(g::text), 40) AS s FROM generate_series(1, 3000) AS g";
    const results = await Promise.all([0, 1, 2, 3].map(() => db.query<{ n: number; s: string }>(sql)));
    for (const { rows } of results) {
      expect(rows).toHaveLength(3000);
      rows.forEach((r, i) => {
        expect(r.n).toBe(i + 1);
        expect(r.s).toHaveLength(32 * 40);
      });
    }
    const { rows } = await db.query(
      "SELECT md5(string_agg(repeat(md5(g::text), 40), '' ORDER BY g)) AS h FROM generate_series(1, 3000) AS g",
    );
    const { createHash } = await import("node:crypto");
    const local = createHash("md5")
      .update(results[0]!.rows.map((r) => r.s).join(""))
      .digest("hex");
    expect(local).toBe(rows[0].h);
  });

  it("keeps a tool's session settings (psql, pg_dump) from the service's connections", async () => {
    // One PGlite session: `SET search_path = ''` from psql left every request of the service a 500
    // ("relation does not exist") until a restart.
    const tool = new pg.Client({ connectionString: bare.url, application_name: "psql" });
    await tool.connect();
    const path = (await db.query("SELECT current_setting('search_path') AS p")).rows[0].p;
    try {
      await tool.query("SET search_path = ''");
      expect((await db.query("SELECT n FROM counter WHERE id = 1")).rows[0].n).toBe(40);
      expect((await db.query("SELECT current_setting('search_path') AS p")).rows[0].p).toBe(path);
      // Inside the tool's own transaction its settings hold, statement after statement.
      await tool.query("BEGIN");
      await tool.query("SET statement_timeout = '7s'");
      expect((await tool.query("SHOW statement_timeout")).rows[0].statement_timeout).toBe("7s");
      await tool.query("COMMIT");
      expect((await db.query("SHOW statement_timeout")).rows[0].statement_timeout).toBe("0");
    } finally {
      await tool.end();
    }
  });

  it("refuses COPY ... FROM STDIN with an error, and keeps serving", async () => {
    // PGlite reads copied rows from the call that runs the statement; without them its one backend
    // ended ("unexpected EOF ... protocol synchronization was lost") and the process exited.
    const tool = new pg.Client({ connectionString: bare.url, application_name: "psql" });
    await tool.connect();
    try {
      await tool.query("CREATE TEMP TABLE w (id text)");
      await expect(tool.query("COPY w FROM STDIN")).rejects.toThrow(/COPY FROM STDIN is not available/);
      await expect(tool.query({ text: "copy w from stdin with (format csv)", values: [] })).rejects.toThrow(
        /COPY FROM STDIN is not available/,
      );
      expect((await tool.query("SELECT count(*)::int AS n FROM w")).rows[0].n).toBe(0);
      expect((await db.query("SELECT 3 AS three")).rows[0].three).toBe(3);
    } finally {
      await tool.end();
    }
  });

  it("keeps going after a statement error inside a batch", async () => {
    await expect(db.query("SELECT nope FROM counter")).rejects.toThrow(/nope/);
    await expect(db.tx(async (t) => t.query("SELECT 1/0"))).rejects.toThrow(/division/);
    expect((await db.query("SELECT 2 AS two")).rows[0].two).toBe(2);
  });

  it("routes each notification to the connections that LISTEN, after the notifier commits", async () => {
    const connect = async () => {
      const c = new pg.Client({ connectionString: bare.url });
      await c.connect();
      const got: string[] = [];
      c.on("notification", (n) => got.push(`${n.channel}:${n.payload}`));
      return { c, got };
    };
    const [a, b, n] = await Promise.all([connect(), connect(), connect()]);
    try {
      await a.c.query("LISTEN jobs");
      await b.c.query('LISTEN "Other"');
      await n.c.query("BEGIN");
      await n.c.query("SELECT pg_notify('jobs', 'one')");
      // Not before the commit (other connections wait for the transaction on this server).
      await n.c.query("SELECT 1");
      expect(a.got).toEqual([]);
      await n.c.query("COMMIT");
      await n.c.query("SELECT pg_notify('Other', 'two'), pg_notify('nobody', 'three')");
      // A large result while listeners exist still arrives intact around the notifications.
      const big = await n.c.query<{ g: number }>("SELECT g FROM generate_series(1, 20000) AS g");
      expect(big.rows).toHaveLength(20000);
      expect(big.rows[19999]!.g).toBe(20000);
      await a.c.query("SELECT pg_notify('jobs', 'self')");
      await b.c.query("UNLISTEN *");
      await n.c.query("SELECT pg_notify('Other', 'after-unlisten')");
      await new Promise((r) => setTimeout(r, 100));
      expect(a.got).toEqual(["jobs:one", "jobs:self"]);
      expect(b.got).toEqual(["Other:two"]);
      expect(n.got).toEqual([]);
    } finally {
      await Promise.all([a, b, n].map((x) => x.c.end()));
    }
  });
});
