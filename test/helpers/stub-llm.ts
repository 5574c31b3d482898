import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import type { LanguageModel } from "ai";

export interface StubLlm {
  model: LanguageModel;
  /** Request bodies received, in order. */
  requests: any[];
  /**
   * What the next completions return: a JSON-serialisable value, or a status to fail with (or a
   * promise of either: a slow model).
   */
  reply: (body: any) => unknown;
  close(): Promise<void>;
}

const readBody = async (req: IncomingMessage) => {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}");
};

/** A minimal OpenAI-compatible chat server on 127.0.0.1 returning canned JSON content. */
export async function startStubLlm(): Promise<StubLlm> {
  const stub: StubLlm = {
    model: null as unknown as LanguageModel,
    requests: [],
    reply: () => ({}),
    close: async () => {},
  };
  const server = createServer(async (req, res) => {
    const body = await readBody(req);
    stub.requests.push(body);
    const out = await stub.reply(body);
    if (typeof out === "number") {
      res.writeHead(out, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: "stub failure" } }));
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        id: "chatcmpl-stub",
        object: "chat.completion",
        created: Math.floor(Date.now() / 1000),
        model: body.model,
        choices: [
          { index: 0, message: { role: "assistant", content: JSON.stringify(out) }, finish_reason: "stop" },
        ],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      }),
    );
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  stub.model = createOpenAICompatible({
    baseURL: `http://127.0.0.1:${port}/v1`,
    name: "stub",
    supportsStructuredOutputs: true,
  }).chatModel("stub-model");
  stub.close = () => new Promise<void>((r) => server.close(() => r()));
  return stub;
}
