import { defineConfig } from "vitest/config";

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
  },
});
