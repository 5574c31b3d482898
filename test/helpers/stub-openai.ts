import { createHash } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A stub OpenAI-compatible server on 127.0.0.1: `POST /v1/chat/completions` (JSON-schema output)
 * and `POST /v1/embeddings`. By default it answers sensibly for each schema the service sends
 * (extraction: one fact per turn; judge: all new; classify: all shareable); tests queue
 * particular replies (an HTTP error, malformed content, a custom object) with `enqueue`.
 */
export type StubReply =
  | { status: number; headers?: Record<string, string>; body?: unknown }
  /** The default answer, this much later (a slow or stuck model). */
  | { delayMs: number }
  | { content: string }
  | { json: unknown }
  /** Embeddings: the list in reverse order (each item keeps its right `index`), or all zeros. */
  | { embeddings: "reversed" | "zero" };

export type SchemaKind = "extract" | "judge" | "classify" | "other";

export interface StubOpenAI {
  /** Base URL to put in MNEMO_LLM_BASE_URL (ends with /v1). */
  url: string;
  requests: Array<{ path: string; body: any; kind: SchemaKind | "embeddings" }>;
  /** Replies for the next calls of this kind, used in order before the defaults. */
  enqueue(kind: SchemaKind | "embeddings", ...replies: StubReply[]): void;
  /**
   * A chat call whose messages hold more characters than this is refused with a 400, as a server
   * refuses a prompt over its context length (vLLM's words); null: no limit.
   */
  maxPromptChars: number | null;
  /**
   * An embeddings call with an input longer than this is refused with a 400, as vLLM refuses a
   * text past the model's max_model_len; null: no limit.
   */
  maxEmbeddingChars: number | null;
  /** The answer to a call of this kind when nothing is queued, from its prompt, instead of the default. */
  answers: Partial<Record<SchemaKind, (prompt: string) => unknown>>;
  close(): Promise<void>;
}

export function kindOf(body: any): SchemaKind {
  const props = body?.response_format?.json_schema?.schema?.properties ?? {};
  if ("facts" in props) return "extract";
  if ("verdicts" in props) return "judge";
  if ("results" in props) return "classify";
  return "other";
}

function defaultReply(kind: SchemaKind, body: any): unknown {
  const prompt: string = body.messages?.find((m: any) => m.role === "user")?.content ?? "";
  const text = typeof prompt === "string" ? prompt : JSON.stringify(prompt);
  if (kind === "extract") {
    const turns = [...text.matchAll(/^\[([^\]]+)\] \(([^)]*)\) (.+)$/gm)];
    return {
      facts: turns.map((m) => ({
        text: `Stub fact: ${m[3]}`,
        fact_type: "other",
        categories: [],
        source_event_ids: [m[1]],
      })),
      episode: { title: "Stub episode", summary: `A session of ${turns.length} turns.` },
      artifacts: [],
      directives: [],
      gist: null,
    };
  }
  if (kind === "judge") return { verdicts: [] };
  if (kind === "classify") {
    const items = [...text.matchAll(/^(\d+)\. /gm)].map((m) => Number(m[1]));
    return { results: items.map((index) => ({ index, verdict: "shareable", matched_group_ids: [] })) };
  }
  return {};
}

/** A deterministic unit vector per text, of the requested dimension. */
function stubVector(text: string, dim: number): number[] {
  const out: number[] = [];
  let block = createHash("sha256").update(text).digest();
  for (let i = 0; out.length < dim; i++) {
    if (i % 32 === 0 && i > 0) block = createHash("sha256").update(block).digest();
    out.push((block[i % 32]! - 127.5) / 127.5);
  }
  const n = Math.sqrt(out.reduce((s, x) => s + x * x, 0));
  return out.map((x) => x / n);
}

export async function startStubOpenAI(options: { dim: number }): Promise<StubOpenAI> {
  const queues = new Map<string, StubReply[]>();
  const requests: StubOpenAI["requests"] = [];
  const server = http.createServer((req, res) => {
    let raw = "";
    req.on("data", (c) => {
      raw += c;
    });
    req.on("end", () => answer(raw));
    // The answer, once the request is read; `delayed`: the second time, after a `delayMs` reply
    // (neither recorded nor taken from the queue again).
    const answer = (raw: string, delayed = false) => {
      const body = raw ? JSON.parse(raw) : {};
      const path = req.url ?? "";
      const send = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { "content-type": "application/json", ...headers });
        res.end(JSON.stringify(payload));
      };
      const embeddings = path.endsWith("/embeddings");
      if (req.method !== "POST" || !(embeddings || path.endsWith("/chat/completions")))
        return send(404, { error: { message: `no stub for ${req.method} ${path}` } });
      const kind = embeddings ? "embeddings" : kindOf(body);
      if (!delayed) requests.push({ path, body, kind });
      const reply = delayed ? undefined : queues.get(kind)?.shift();
      if (reply && "delayMs" in reply) {
        setTimeout(() => answer(raw, true), reply.delayMs);
        return;
      }
      if (reply && "status" in reply)
        return send(reply.status, reply.body ?? { error: { message: "stub error" } }, reply.headers);
      const chars = embeddings
        ? 0
        : (body.messages ?? []).reduce((n: number, m: any) => n + String(m.content ?? "").length, 0);
      if (stub.maxPromptChars !== null && chars > stub.maxPromptChars)
        return send(400, {
          object: "error",
          message: `This model's maximum context length is 32768 tokens. However, you requested ${Math.ceil(chars / 3.5)} tokens in the messages.`,
          type: "BadRequestError",
          code: 400,
        });
      if (embeddings) {
        const input: string[] = Array.isArray(body.input) ? body.input : [body.input];
        const longest = Math.max(...input.map((t) => t.length));
        if (stub.maxEmbeddingChars !== null && longest > stub.maxEmbeddingChars)
          return send(400, {
            error: {
              message: `This model's maximum context length is 512 tokens. However, you requested ${Math.ceil(longest / 4)} tokens in the input.`,
              type: "invalid_request_error",
            },
          });
        const dim = body.dimensions ?? options.dim;
        const shape = reply && "embeddings" in reply ? reply.embeddings : undefined;
        const data = input.map((t, index) => ({
          object: "embedding",
          index,
          embedding: shape === "zero" ? new Array<number>(dim).fill(0) : stubVector(t, dim),
        }));
        if (shape === "reversed") data.reverse();
        return send(200, {
          object: "list",
          data,
          model: body.model,
          usage: { prompt_tokens: input.length, total_tokens: input.length },
        });
      }
      const answerOf = stub.answers[kindOf(body)];
      const prompt = body.messages?.find((m: any) => m.role === "user")?.content ?? "";
      const content =
        reply && "content" in reply
          ? reply.content
          : JSON.stringify(
              reply && "json" in reply
                ? reply.json
                : answerOf
                  ? answerOf(typeof prompt === "string" ? prompt : JSON.stringify(prompt))
                  : defaultReply(kindOf(body), body),
            );
      send(200, {
        id: "chatcmpl-stub",
        object: "chat.completion",
        created: Math.floor(Date.now() / 1000),
        model: body.model,
        choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
        usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
      });
    };
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const stub: StubOpenAI = {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    maxPromptChars: null,
    maxEmbeddingChars: null,
    answers: {},
    enqueue(kind, ...replies) {
      queues.set(kind, [...(queues.get(kind) ?? []), ...replies]);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return stub;
}
