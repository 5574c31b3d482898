import { defineConfig } from "vitest/config";
import type { TestSpecification } from "vitest/node";
import { BaseSequencer } from "vitest/node";

/**
 * Test files that only make sense on the embedded database, left out of the PostgreSQL pass
 * (`npm run test:pg`, MNEMO_TEST_DATABASE_URL set). Each says why at its top.
 */
const EMBEDDED_ONLY = [
  "test/embedded-concurrency.test.ts", // the PGlite wire server itself
  "test/data-dir-owner.test.ts", // the data directory's lock, socket and owner record
  "test/owner-away.test.ts", // a process attached to another's data directory
  "test/embedded-panic.test.ts", // PGlite's PANIC (a server restarts after its own)
];
/**
 * Files that do the same whichever pass runs them, so they run once, in the embedded pass: the
 * command line before any database is opened, and the copy of an embedded directory onto the
 * native server (which needs both databases in any pass).
 */
const SAME_IN_BOTH = [
  "test/cli.test.ts", // configuration and admin usage, no database
  "test/migrate-to.test.ts", // embedded directory -> native PostgreSQL
];
const onServer = Boolean(process.env.MNEMO_TEST_DATABASE_URL);
/** Files that need several processes on one real server (too heavy, and not meaningful, on PGlite). */
const SERVER_ONLY = [
  "test/split-processes.test.ts",
  "test/db-connections-killed.test.ts",
  "test/db-outage.test.ts", // a TCP proxy to the server, unplugged
  "test/durability-warning.test.ts", // the server's fsync and synchronous_commit
];

/**
 * The files that take longest (most of it waiting on real processes), longest first: started
 * first, so the pass does not end with one of them running alone while the other workers are
 * idle. Vitest orders by the durations of the last run it cached, in node_modules, which CI's
 * `npm ci` removes; without them it orders by file size, and data-dir-owner (the longest, 85 s
 * of the embedded pass) started at 131 s of 360. Files not listed follow in Vitest's order.
 */
const SLOW_FIRST = [
  "test/data-dir-owner.test.ts",
  "test/shutdown.test.ts",
  "test/owner-away.test.ts",
  "test/mcp-process.test.ts",
  "test/ingest-worker.test.ts",
  "test/startup.test.ts",
  "test/providers.test.ts",
  "test/split-processes.test.ts",
  "test/transfer.test.ts",
  "test/embedded-panic.test.ts",
  "test/webhooks-delivery.test.ts",
  "test/server-process.test.ts",
  "test/ingest-pipeline.test.ts",
  "test/migrate-to.test.ts",
  "test/db-outage.test.ts",
  "test/db-connections-killed.test.ts",
];
class SlowFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification) => {
      const i = SLOW_FIRST.findIndex((f) => spec.moduleId.endsWith(f));
      return i === -1 ? SLOW_FIRST.length : i;
    };
    // Array.prototype.sort is stable: the rest keep Vitest's order.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["**/node_modules/**", ...(onServer ? [...EMBEDDED_ONLY, ...SAME_IN_BOTH] : SERVER_ONLY)],
    globalSetup: ["test/helpers/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Most files spend much of their time waiting on child processes, sockets and timers, so one
    // file more than this 2-core machine's cores keeps them busy: the embedded pass took 4.9-5.7
    // min at 3 against 6.0 at 2, the PostgreSQL pass 2.9 against 3.5; at 4 it was slower again.
    maxWorkers: 3,
    pool: "forks",
    // Files share their worker processes: each file's fresh process imported the service and
    // compiled PGlite again (a fifth of the embedded pass's CPU). A file owns what it starts and
    // stops it in afterAll; what is per process (WordNet read at a worker's start) is tested in
    // processes of its own.
    isolate: false,
    sequence: { sequencer: SlowFirst },
  },
});
