import { generateText } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withMemory } from "../examples/vercel-ai-sdk/with-memory.js";
import { startTestService, type TestService, waitFor } from "./helpers/harness.js";

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.stop();
});

const reply = (text: string) => ({
  content: [{ type: "text" as const, text }],
  finishReason: { unified: "stop" as const, raw: "stop" },
  usage: {
    inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: 1, text: 1, reasoning: undefined },
  },
  warnings: [],
});

describe("examples/vercel-ai-sdk/with-memory.ts", () => {
  it("ingests each exchange after the call and adds what is remembered before the next", async () => {
    const { key } = await svc.newOrg();
    const model = new MockLanguageModelV4({
      doGenerate: [reply("Noted."), reply("You like Helix."), reply("Helix.")],
    });
    const wrapped = withMemory(model, {
      baseUrl: "http://mnemo.test",
      apiKey: key,
      userId: "sdk-user",
      convId: "sdk-conv",
      fetch: (input, init) => Promise.resolve(svc.app.request(String(input), init)),
    });

    await generateText({ model: wrapped, prompt: "My favourite editor is Helix." });
    await waitFor(async () => {
      const r = await svc.request("GET", "/v1/memories?user_id=sdk-user&conv_id=sdk-conv", { key });
      return r.body?.data?.length > 0;
    });

    const { text } = await generateText({ model: wrapped, prompt: "Which editor do I like?" });
    expect(text).toBe("You like Helix.");
    const second = model.doGenerateCalls[1]!.prompt;
    expect(second[0]!.role).toBe("system");
    expect(JSON.stringify(second[0]!.content)).toMatch(/Helix/);

    // A prompt past 4,000 code points with an emoji at the cut still reaches memory: the query is
    // cut by code points, never inside the emoji (a lone surrogate is a 422).
    const long = `${"a".repeat(3999)}\u{1F600} Which editor do I like?`;
    await generateText({ model: wrapped, prompt: long });
    const third = model.doGenerateCalls[2]!.prompt;
    expect(third[0]!.role).toBe("system");
    expect(JSON.stringify(third[0]!.content)).toMatch(/Helix/);
  });
});
