import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prettyLine } from "../src/logger.js";
import { startTestService, type TestService, waitFor } from "./helpers/harness.js";
import { duplicateKeys } from "./helpers/json-keys.js";

const lines: Array<Record<string, any>> = [];
/** The same lines as written, for what parsing hides (a key written twice). */
const raw: string[] = [];
let svc: TestService;
beforeAll(async () => {
  const log = pino(
    { level: "info" },
    {
      write: (l: string) => {
        raw.push(l);
        lines.push(JSON.parse(l));
      },
    },
  );
  svc = await startTestService({ log });
});
afterAll(async () => {
  await svc?.stop();
});

describe("structured logs", () => {
  it("every request line has the request id, organisation, route template and duration; job lines the job id", async () => {
    const { key, orgId } = await svc.newOrg();
    const res = await svc.request("POST", "/v1/memories?wait=true", {
      key,
      body: { user_id: "u", conv_id: "c", messages: [{ role: "user", content: "I like plums." }] },
      headers: { "x-request-id": "req-logs-1" },
    });
    expect(res.body.status).toBe("succeeded");
    const got = await svc.request("GET", `/v1/memories/${res.body.result.memories_created[0].id}`, { key });
    expect(got.status).toBe(200);
    const jobs = await svc.request("GET", "/v1/memories/jobs", {
      key,
      headers: { "x-request-id": "req-logs-jobs" },
    });
    expect(jobs.status).toBe(200);
    const requests = lines.filter((l) => l.msg === "request");
    const post = requests.find((l) => l.requestId === "req-logs-1")!;
    expect(post).toMatchObject({ orgId, route: "/v1/memories", method: "POST", status: 200 });
    expect(typeof post.durationMs).toBe("number");
    const get = requests.find((l) => l.method === "GET" && l.route === "/v1/memories/:memory_id")!;
    expect(get).toMatchObject({ orgId, status: 200 });
    expect(typeof get.requestId).toBe("string");
    // The jobs list, not the memory-id route that Hono matches after it.
    expect(requests.find((l) => l.requestId === "req-logs-jobs")).toMatchObject({
      route: "/v1/memories/jobs",
    });
    const jobLines = await waitFor(async () => {
      const found = lines.filter((l) => l.requestId === "req-logs-1" && l.msg !== "request");
      return found.some((l) => l.msg === "ingest job succeeded") ? found : undefined;
    });
    for (const l of jobLines) expect(l.jobId, l.msg).toBe(res.body.id);
    // `path` is a request line's URL path; the job line names its pipeline under its own key.
    expect(jobLines.find((l) => l.msg === "ingest job succeeded")).toMatchObject({ pipeline: "live" });
    expect(jobLines.filter((l) => "path" in l)).toEqual([]);
    const rawJobLines = raw.filter((l) => l.includes('"req-logs-1"') && !l.includes('"msg":"request"'));
    expect(rawJobLines.length).toBe(jobLines.length);
    for (const l of rawJobLines) expect(duplicateKeys(l), l).toEqual([]);
  });

  it("LOG_FORMAT=pretty renders a line for a terminal", () => {
    const line = JSON.stringify({
      level: 30,
      time: "2026-01-02T12:00:01.234Z",
      service: "mnemo",
      msg: "request",
      route: "/v1/groups",
      status: 200,
      note: "two words",
    });
    expect(prettyLine(line, false)).toBe(
      '12:00:01.234 INFO  request route=/v1/groups status=200 note="two words"\n',
    );
    expect(prettyLine("not json\n", false)).toBe("not json\n");
  });
});
