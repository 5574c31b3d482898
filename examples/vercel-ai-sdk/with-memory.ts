/**
 * Vercel AI SDK: wrap any language model with Mnemo memory.
 *
 * Before each call the user's latest message is searched (compose mode) and the returned context
 * is added as a system message; after the call the exchange is ingested in the background.
 *
 *   import { openai } from "@ai-sdk/openai";
 *   import { generateText } from "ai";
 *   const model = withMemory(openai.chat("gpt-4o-mini"), {
 *     baseUrl: "http://127.0.0.1:8080", apiKey: process.env.MNEMO_API_KEY!, userId: "alice",
 *   });
 *   const { text } = await generateText({ model, prompt: "What editor do I like?" });
 *
 * Only the REST API is used, so this file can be copied into any project that has `ai`.
 * (Streaming: wrap `wrapStream` the same way and ingest when the stream ends.)
 */
import { type LanguageModel, type LanguageModelMiddleware, wrapLanguageModel } from "ai";

export interface MemoryOptions {
  baseUrl: string;
  apiKey: string;
  userId: string;
  /** Conversation id to anchor what is learned; one per chat session. */
  convId?: string;
  agentId?: string;
  /** Give up on memory (never on the answer) after this long. Default 3000 ms. */
  timeoutMs?: number;
  /** For tests or custom transports; defaults to the global fetch. */
  fetch?: typeof fetch;
}

type WrappableModel = Parameters<typeof wrapLanguageModel>[0]["model"];
type Prompt = Parameters<NonNullable<LanguageModelMiddleware["transformParams"]>>[0]["params"]["prompt"];

export function withMemory(model: WrappableModel, options: MemoryOptions): LanguageModel {
  const doFetch = options.fetch ?? fetch;
  const post = async (path: string, body: unknown) => {
    const res = await doFetch(`${options.baseUrl.replace(/\/+$/, "")}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${options.apiKey}` },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(options.timeoutMs ?? 3000),
    });
    return res.ok ? ((await res.json()) as Record<string, unknown>) : undefined;
  };
  const scope = { user_id: options.userId, ...(options.agentId ? { agent_id: options.agentId } : {}) };

  const middleware: LanguageModelMiddleware = {
    async transformParams({ params }) {
      const query = lastUserText(params.prompt);
      if (!query) return params;
      const found = await post("/v1/memories/search", {
        // 4,000 code points (the service counts them): a cut by UTF-16 units can split an emoji,
        // and a lone surrogate is refused (422).
        query: Array.from(query).slice(0, 4000).join(""),
        mode: "compose",
        ...scope,
      }).catch(() => undefined);
      const context = typeof found?.context === "string" ? found.context.trim() : "";
      if (!context) return params;
      return {
        ...params,
        prompt: [
          { role: "system", content: `What you remember about this user:\n${context}` },
          ...params.prompt,
        ],
      };
    },
    async wrapGenerate({ doGenerate, params }) {
      const result = await doGenerate();
      const question = lastUserText(params.prompt);
      const answer = result.content
        .filter((p) => p.type === "text")
        .map((p) => (p as { text: string }).text)
        .join("");
      if (question && answer) {
        // Fire and forget: extraction runs in the background on the server.
        void post("/v1/memories", {
          messages: [
            { role: "user", content: question },
            { role: "assistant", content: answer },
          ],
          conv_id: options.convId ?? `ai-sdk-${options.userId}`,
          ...scope,
        }).catch(() => undefined);
      }
      return result;
    },
  };
  return wrapLanguageModel({ model, middleware });
}

function lastUserText(prompt: Prompt): string | undefined {
  for (let i = prompt.length - 1; i >= 0; i--) {
    const m = prompt[i]!;
    if (m.role !== "user") continue;
    const text = m.content
      .filter((p) => p.type === "text")
      .map((p) => (p as { text: string }).text)
      .join("\n")
      .trim();
    if (text) return text;
  }
  return undefined;
}
