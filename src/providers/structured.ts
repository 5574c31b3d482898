import {
  APICallError,
  generateText,
  InvalidResponseDataError,
  type LanguageModel,
  NoObjectGeneratedError,
  Output,
  RetryError,
} from "ai";
import type { z } from "zod";
import type { Config } from "../config.js";
import { truncate } from "../truncate.js";
import { looseDeep } from "../wire/common.js";

/**
 * One structured-output call to the configured chat model, with the configured retries and
 * time-out: the shape every model call of the service takes (extraction, classification,
 * context selection, the relevance gate). The time-out bounds the call with its retries:
 * MNEMO_LLM_TIMEOUT_MS, or `timeoutMs` (a request's, MNEMO_LLM_REQUEST_TIMEOUT_MS). Errors
 * propagate; each caller decides its fallback.
 *
 * What the model writes is cleaned as a client's free text is: a NUL byte dropped, a lone
 * surrogate U+FFFD (the database stores neither). A reply that is JSON inside a markdown fence or
 * between sentences (servers that do not hold the model to the schema: older Ollama, llama.cpp
 * without a grammar) is read from there, when what is inside matches the schema.
 */
export async function generateStructured<T>(
  model: LanguageModel,
  config: Config,
  call: { schema: z.ZodType<T>; system: string; prompt: string; timeoutMs?: number },
): Promise<T> {
  try {
    const result = await generateText({
      model,
      output: Output.object({ schema: call.schema }),
      maxRetries: config.MNEMO_LLM_MAX_RETRIES,
      ...(config.MNEMO_LLM_MAX_OUTPUT_TOKENS ? { maxOutputTokens: config.MNEMO_LLM_MAX_OUTPUT_TOKENS } : {}),
      abortSignal: AbortSignal.timeout(call.timeoutMs ?? config.MNEMO_LLM_TIMEOUT_MS),
      system: call.system,
      prompt: call.prompt,
    });
    // The answer given as a tool call (`tool_calls`, content null), as some servers and chat
    // templates do when asked for JSON: said so, not "No output generated".
    if (!result.text.trim() && result.toolCalls.length > 0) throw new ToolCallsAnswer();
    return looseDeep(result.output) as T;
  } catch (err) {
    if (NoObjectGeneratedError.isInstance(err) && typeof err.text === "string") {
      for (const inner of jsonWithin(err.text)) {
        const parsed = call.schema.safeParse(inner);
        if (parsed.success) return looseDeep(parsed.data) as T;
      }
    }
    throw err;
  }
}

/** A reply that holds tool calls and no text: no answer to read. */
export class ToolCallsAnswer extends Error {
  override name = "ToolCallsAnswer";
  constructor() {
    super("the model answered with tool calls, not text");
  }
}

/**
 * The JSON objects a reply holds, the likeliest answer first: a reasoning model's `<think>` block
 * left out (it may sketch the format, braces and all), then the fenced blocks, last first (an
 * earlier one is often an example), then each object standing in the prose, last first, then the
 * span from the first `{` to the last `}`. The caller takes the first that matches its schema.
 */
export function jsonWithin(text: string): unknown[] {
  const answer = text.replace(/<think>[\s\S]*?<\/think>/gi, "");
  const spans = [...answer.matchAll(/```(?:json)?\s*\n([\s\S]*?)\n?```/g)].map((m) => m[1]!).reverse();
  spans.push(...objectsIn(answer).reverse(), answer.slice(answer.indexOf("{"), answer.lastIndexOf("}") + 1));
  const out: unknown[] = [];
  for (const span of spans) {
    if (!span.trim()) continue;
    try {
      out.push(JSON.parse(span));
    } catch {}
  }
  return out;
}

/** The outermost `{...}` spans of a text, braces inside JSON strings not counted. */
function objectsIn(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  let inString = false;
  let escaped = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (c === "\\") escaped = true;
      else if (c === '"') inString = false;
    } else if (c === '"' && depth > 0) inString = true;
    else if (c === "{" && depth++ === 0) start = i;
    else if (c === "}" && depth > 0 && --depth === 0) out.push(text.slice(start, i + 1));
  }
  return out;
}

/** "HTTP 503", or for a 2xx whose body could not be read, what happened to it. */
export const httpStatus = (err: APICallError) =>
  err.statusCode === undefined
    ? "no HTTP answer"
    : err.statusCode < 300
      ? `HTTP ${err.statusCode}, an answer that could not be read`
      : `HTTP ${err.statusCode}`;

/**
 * What an answer that parsed lacked, in the AI SDK's words ("Expected 2 embeddings, but received
 * 0.", "Response did not contain any choices."), or "" when its words would quote the answer (its
 * default message does, and the answer can hold users' facts).
 */
export const invalidAnswer = (err: InvalidResponseDataError) =>
  err.message.startsWith("Invalid response data:") ? "" : truncate(err.message, 200);

/**
 * A failed model call summed up for the log: the kind of failure, the HTTP status, why the
 * output did not do and its length; never what the model wrote (a reply that does not parse can
 * hold users' facts, and be megabytes long) nor the request.
 */
export function describeModelError(err: unknown): string {
  if (NoObjectGeneratedError.isInstance(err)) {
    const why = err.cause instanceof Error ? err.cause.name : "no object";
    return `${why}; finish reason ${err.finishReason ?? "unknown"}; ${err.text?.length ?? 0} characters of output`;
  }
  if (RetryError.isInstance(err)) {
    const last = err.lastError;
    return `${err.reason}: ${err.errors.length} attempts; last ${APICallError.isInstance(last) ? httpStatus(last) : last instanceof Error ? last.name : "error"}`;
  }
  if (APICallError.isInstance(err)) return `${httpStatus(err)}; retryable ${err.isRetryable}`;
  if (InvalidResponseDataError.isInstance(err)) return invalidAnswer(err) || "an invalid answer";
  // Other errors (a refused connection, a time-out) say nothing of the model's words; bounded all the same.
  return truncate(err instanceof Error ? err.message : String(err), 200);
}
