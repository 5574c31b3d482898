import { afterEach, describe, expect, it } from "vitest";
import { conceptsLoaded } from "../src/providers/local/concepts.js";
import { startTestService, type TestService } from "./helpers/harness.js";

const started: TestService[] = [];
afterEach(async () => {
  while (started.length) await started.pop()!.stop();
});

describe("a process that runs workers", () => {
  it("reads WordNet while starting, not in the middle of its first ingest job", async () => {
    started.push(await startTestService({ workers: false }));
    expect(conceptsLoaded()).toBe(false); // an API-only process never needs it
    started.push(await startTestService({ workers: true }));
    expect(conceptsLoaded()).toBe(true);
  });
});
