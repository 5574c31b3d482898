import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/helpers/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // PGlite is single-threaded WebAssembly: a few files at once keeps a 2-core machine busy
    // without starving the event loops that tests time.
    maxWorkers: 2,
    pool: "forks",
  },
});
