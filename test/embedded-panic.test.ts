import { rmSync } from "node:fs";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { PanicWatch } from "../src/db/pglite-server.js";
import { freePort, type MnemoProcess, migratedDataDir, spawnMnemo } from "./helpers/process.js";

/**
 * A PANIC of the embedded database: PostgreSQL raises one when a write of its write-ahead log
 * fails (a full disk; here a file size limit set with prlimit, which fails the same write with
 * EFBIG). PGlite carried on with a session it could no longer use, and every request hung for
 * good, even after space came back. Now the process stops with a fatal line that says what
 * happened and what to do, and the next start recovers the files as after a crash: nothing
 * stored, and no job answered 202, is lost.
 *
 * EMBEDDED-ONLY (left out of the PostgreSQL pass in vitest.config.ts): a PostgreSQL server
 * handles its own PANIC by restarting.
 */
const KEY = "mnemo_test_embedded_panic_bootstrap_01";
const dirs: string[] = [];
const procs: MnemoProcess[] = [];
afterAll(async () => {
  await Promise.all(procs.map((p) => p.kill("SIGKILL")));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function start(dataDir: string, fileSizeLimit?: number) {
  const port = await freePort();
  const p = spawnMnemo(
    ["serve"],
    {
      MNEMO_DATA_DIR: dataDir,
      PORT: String(port),
      MNEMO_BOOTSTRAP_API_KEY: KEY,
      // An attempt running when the process stopped is retried once it expires (as after a kill).
      MNEMO_JOB_EXPIRE_SECONDS: "5",
    },
    fileSizeLimit === undefined ? {} : { fileSizeLimit },
  );
  procs.push(p);
  return { p, base: `http://127.0.0.1:${port}` };
}

const call = (base: string, method: string, p: string, body?: unknown) =>
  fetch(`${base}${p}`, {
    method,
    headers: { "x-api-key": KEY, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    // Before the fix every request hung: a hang fails the test instead of stalling it.
    signal: AbortSignal.timeout(20_000),
  });

const conversation = (n: number, turns: number) => ({
  user_id: "u1",
  conv_id: `c${n}`,
  messages: Array.from({ length: turns }, (_, i) => ({
    role: "user",
    content: `Conversation ${n}: I moved to city number ${i} in ${1990 + (i % 30)} and I still like food ${i}.`,
  })),
});

/** Where the write-ahead log is being written: the offset in its current file. */
async function walOffset(dataDir: string): Promise<number> {
  const c = new pg.Client({ connectionString: `postgresql://postgres@localhost/postgres?host=${dataDir}` });
  await c.connect();
  try {
    const { rows } = await c.query(
      "SELECT file_offset::int AS n FROM pg_walfile_name_offset(pg_current_wal_insert_lsn())",
    );
    return rows[0].n as number;
  } finally {
    await c.end();
  }
}

/** The fatal line of a PANIC: it names the failed write and says what to do. */
function panicked(p: MnemoProcess) {
  const out = p.stdout() + p.stderr();
  expect(out, out).toMatch(/"level":60[^\n]*PANIC[^\n]*File too large/);
  expect(out).toMatch(/make room in MNEMO_DATA_DIR and start again/);
}

describe("a PANIC of the embedded database", () => {
  it("at start-up: exit 1 within seconds with a fatal line, and the next start serves what was stored", async () => {
    const dataDir = migratedDataDir("mn-panic-");
    dirs.push(dataDir);
    const first = await start(dataDir);
    await first.p.waitFor(/"msg":"ready"/, 170_000);
    const stored = await call(first.base, "POST", "/v1/memories?wait=true", conversation(0, 1));
    expect(((await stored.json()) as { status: string }).status).toBe("succeeded");
    expect(await first.p.kill("SIGTERM")).toBe(0);

    // The log file is written far past 1 MB: its first write fails.
    const limited = await start(dataDir, 1 << 20);
    const ended = await Promise.race([
      limited.p.exited,
      new Promise((r) => setTimeout(() => r("still running after 60 s"), 60_000)),
    ]);
    expect(ended, limited.p.stdout().slice(-3000)).toBe(1);
    panicked(limited.p);

    const again = await start(dataDir);
    await again.p.waitFor(/"msg":"ready"/, 170_000);
    const list = (await (await call(again.base, "GET", "/v1/memories?user_id=u1")).json()) as {
      data: { text: string }[];
    };
    expect(list.data.map((m) => m.text).join(" ")).toMatch(/city number 0/);
    expect(await again.p.kill("SIGTERM")).toBe(0);
  }, 240_000);

  it("while jobs are accepted: the process exits instead of hanging, and every job answered 202 succeeds after a restart", async () => {
    const dataDir = migratedDataDir("mn-panic-");
    dirs.push(dataDir);
    const first = await start(dataDir);
    await first.p.waitFor(/"msg":"ready"/, 170_000);
    const offset = await walOffset(dataDir);
    expect(await first.p.kill("SIGTERM")).toBe(0);

    // Room for the start and a few jobs, then the log's next write fails.
    const limited = await start(dataDir, offset + (4 << 20));
    await limited.p.waitFor(/"msg":"ready"/, 170_000);
    const accepted: string[] = [];
    let exited = false;
    void limited.p.exited.then(() => {
      exited = true;
    });
    // Jobs accepted (202) faster than they are worked: some are queued when the write fails.
    let failures = 0;
    for (let n = 0; n < 400 && !exited && failures < 3; n++) {
      const res = await call(limited.base, "POST", "/v1/memories", conversation(n, 20)).catch(
        () => undefined,
      );
      if (!res) {
        failures++;
        continue;
      }
      const body = (await res.json().catch(() => ({}))) as { id?: string };
      if (res.status === 202 && body.id) accepted.push(body.id);
    }
    await Promise.race([limited.p.exited, new Promise((r) => setTimeout(r, 30_000))]);
    expect(exited, limited.p.stdout().slice(-3000)).toBe(true);
    expect(await limited.p.exited).toBe(1);
    panicked(limited.p);
    expect(accepted.length).toBeGreaterThan(0);

    const again = await start(dataDir);
    await again.p.waitFor(/"msg":"ready"/, 170_000);
    for (const id of accepted) {
      let status = "";
      for (let i = 0; i < 300 && !/succeeded|failed/.test(status); i++) {
        const job = (await (await call(again.base, "GET", `/v1/memories/jobs/${id}`)).json()) as {
          status: string;
        };
        status = job.status;
        if (!/succeeded|failed/.test(status)) await new Promise((r) => setTimeout(r, 200));
      }
      expect(status, id).toBe("succeeded");
    }
    expect(await again.p.kill("SIGTERM")).toBe(0);
  }, 300_000);
});

/** A backend message: type byte, int32 length (itself included), body. */
const message = (type: string, body: Buffer) => {
  const head = Buffer.alloc(5);
  head.write(type, 0, "latin1");
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
};
const errorResponse = (severity: string, text: string) =>
  message(
    "E",
    Buffer.concat([
      ...[
        ["S", severity],
        ["V", severity],
        ["C", "53100"],
        ["M", text],
      ].map(([k, v]) => Buffer.from(`${k}${v}\0`, "utf8")),
      Buffer.from([0]),
    ]),
  );
/** A DataRow of one text column. */
const dataRow = (value: Buffer) => {
  const n = Buffer.alloc(6);
  n.writeInt16BE(1, 0);
  n.writeInt32BE(value.length, 2);
  return message("D", Buffer.concat([n, value]));
};

describe("PanicWatch (the wire server's reading of its output)", () => {
  const watch = (chunks: Buffer[]) => {
    const w = new PanicWatch();
    for (const c of chunks) w.push(c);
    return w.message;
  };

  it("finds a PANIC's message wherever the chunks are cut", () => {
    const stream = Buffer.concat([
      dataRow(Buffer.from("a row")),
      errorResponse("PANIC", 'could not write to file "pg_wal/xlogtemp.42": No space left on device'),
      message("Z", Buffer.from("I")),
    ]);
    for (let cut = 0; cut <= stream.length; cut++) {
      const found = watch([stream.subarray(0, cut), stream.subarray(cut)]);
      expect(found, `cut at ${cut}`).toBe(
        'could not write to file "pg_wal/xlogtemp.42": No space left on device',
      );
    }
    // One byte at a time.
    expect(watch([...stream].map((b) => Buffer.from([b])))).toMatch(/No space left/);
  });

  it("ignores errors of other severities, and a row whose bytes spell an ErrorResponse", () => {
    expect(
      watch([errorResponse("ERROR", "duplicate key"), errorResponse("FATAL", "terminating")]),
    ).toBeUndefined();
    const lookalike = errorResponse("PANIC", "not a real one");
    expect(watch([dataRow(lookalike), dataRow(Buffer.from("xVPANIC\0MPANIC\0"))])).toBeUndefined();
  });
});
