import { AsyncLocalStorage } from "node:async_hooks";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { APICallError, embedMany, InvalidResponseDataError, NoObjectGeneratedError, RetryError } from "ai";
import { z } from "zod";
import type { Config } from "../config.js";
import { redactSecrets } from "../ingest/redact.js";
import { truncate } from "../truncate.js";
import {
  type Dropped,
  ExtractionSchema,
  extractSystem,
  joinWindows,
  knownHeader,
  normaliseExtraction,
  REPLY_CAPS,
  renderTurn,
  renderTurns,
} from "./openai-extraction.js";
import {
  describeModelError,
  generateStructured,
  httpStatus,
  invalidAnswer,
  ToolCallsAnswer,
} from "./structured.js";
import type { Classifier, Embedder, Extraction, Extractor, JudgeVerdict } from "./types.js";

/** A model failure with a message fit for the job's error (never secrets or prompts). */
export class ProviderError extends Error {
  override name = "ProviderError";
  /** How long the server asked to wait before calling again (its Retry-After), when it said. */
  readonly retryAfterMs: number | undefined;
  /**
   * Whether the endpoint was out of reach rather than wrong: rate-limited, failing with a 5xx, too
   * slow, the connection refused or reset. A job fails on such an error only after its attempts
   * (src/ingest/run-job.ts); an answer that does not do fails it at once.
   */
  readonly transient: boolean;
  constructor(
    message: string,
    options: { cause?: unknown; transient?: boolean; retryAfterMs?: number | undefined } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.transient = options.transient ?? false;
    this.retryAfterMs = options.retryAfterMs;
  }
}

/**
 * What a request that a model failure ended tells its caller to do: retry shortly when the model
 * was out of reach, and not when it answered what will not change by asking again (a wrong
 * dimension, a refused key, a model not found): a client that follows a Retry-After retried that
 * for ever.
 */
export const providerAdvice = (err: ProviderError) =>
  err.transient
    ? "Retry shortly."
    : "Retrying will not help until the operator fixes the model or its configuration.";

/** The model failure behind `err` (itself, or the error it wraps), if there is one. */
export function providerFailure(err: unknown): ProviderError | undefined {
  if (err instanceof ProviderError) return err;
  const cause = err instanceof Error ? err.cause : undefined;
  return cause instanceof ProviderError ? cause : undefined;
}

const PROVIDER_NAME = "llm";

/**
 * The error answers one model call has had so far: how many, the last one's HTTP status, and the
 * wait its Retry-After asked for.
 */
interface FailedAnswers {
  count: number;
  status?: number;
  retryAfterMs?: number | undefined;
}

/**
 * The current model call's error answers, noted by the provider's `fetch`. The AI SDK drops them
 * when the call's time-out fires while it waits to retry (it throws a bare AbortError), and a
 * call that kept failing is then not to be reported as one that did not answer.
 */
const failedAnswers = new AsyncLocalStorage<FailedAnswers>();

/**
 * `fetch` for the provider: an error answer noted for the call's own error (above), and an
 * `/embeddings` answer's list put in the order of its items' `index` (the OpenAI contract makes
 * `index` authoritative, and batching servers and proxies have sent the list out of order; the AI
 * SDK reads it by position, so a vector would go to another text).
 */
async function embeddingsInOrder(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
  const res = await fetch(input, init);
  const failed = res.ok ? undefined : failedAnswers.getStore();
  if (failed) {
    failed.count++;
    failed.status = res.status;
    failed.retryAfterMs = retryAfterIn(Object.fromEntries(res.headers));
  }
  const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
  if (!res.ok || !url.endsWith("/embeddings")) return res;
  const raw = await res.text();
  let text = raw;
  try {
    const body = JSON.parse(raw) as { data?: Array<{ index?: unknown }> };
    if (Array.isArray(body.data) && body.data.every((d) => typeof d?.index === "number")) {
      body.data.sort((a, b) => (a.index as number) - (b.index as number));
      text = JSON.stringify(body);
    }
  } catch {
    // Not JSON: the SDK says so, as it would have.
  }
  const headers = new Headers(res.headers);
  headers.delete("content-length");
  headers.delete("content-encoding");
  return new Response(text, { status: res.status, statusText: res.statusText, headers });
}

/** One model call, a failure of it a ProviderError saying why (see FailedAnswers). */
async function modelCall<T>(config: Config, model: string, call: () => Promise<T>): Promise<T> {
  const failed: FailedAnswers = { count: 0 };
  try {
    return await failedAnswers.run(failed, call);
  } catch (err) {
    throw withoutSecrets(asProviderError(err, config.MNEMO_LLM_MAX_RETRIES, model, failed), config);
  }
}

/**
 * A model failure's message and its cause's, with the configured key and any secret masked: a
 * server's refusal is quoted ("HTTP 401: Incorrect API key provided: sk-..."), and a proxy or a
 * self-hosted server may quote the whole key, which the job's error then showed to every key of
 * the organisation, in the webhook and the log.
 */
function withoutSecrets(err: Error, config: Config): Error {
  const key = config.OPENAI_API_KEY;
  const clean = (text: string) =>
    redactSecrets(key && key.length >= 8 ? text.split(key).join("[redacted API key]") : text).text;
  err.message = clean(err.message);
  if (err.cause instanceof Error) err.cause.message = clean(err.cause.message);
  return err;
}

/** A server's Retry-After (or OpenAI's retry-after-ms) in milliseconds, when it sent one. */
const retryAfterOf = (err: unknown) =>
  APICallError.isInstance(err) ? retryAfterIn(err.responseHeaders ?? {}) : undefined;

/** The wait an answer's headers ask for, in milliseconds, when they ask for one. */
function retryAfterIn(answer: Record<string, string>): number | undefined {
  const headers = Object.fromEntries(Object.entries(answer).map(([k, v]) => [k.toLowerCase(), v]));
  const ms = Number(headers["retry-after-ms"]);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const after = headers["retry-after"];
  if (!after) return undefined;
  const seconds = Number(after);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const at = Date.parse(after);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/**
 * A language-model call a request waits on (context selection, the relevance gate: `what`), run as
 * the service's own calls are: one that kept failing until its time-out says its HTTP status (the
 * AI SDK's own error then says only "Delay was aborted").
 */
export const requestModelCall = <T>(config: Config, what: string, call: () => Promise<T>): Promise<T> =>
  modelCall(config, chatModel(what), call);

/**
 * The chat model as a failure names it, with the call (`what`): "the language model (extraction,
 * window 2 of 5)", so an operator tuning a model's prompts knows which answer did not do. Never
 * any of the call's text.
 */
const chatModel = (what: string) => `language model (${what})`;

/** Turns in an extraction window, and cases (or memories) in one judge (or classify) call. */
const BATCH_ITEMS = 40;
/**
 * The most characters of turns (or cases, or memories) one extraction, judge or classify call is
 * sent, its instructions aside: about 8,000 tokens, a quarter of a 32k context, with room for the
 * reply. A single conversation of 200 turns made one judge prompt of 168 KB, which a server with a
 * 32k context refused, and the job failed though each extraction window fitted; and 40 turns of
 * pasted logs made one extraction window of 120 KB.
 */
const BATCH_CHARS = 32_000;

/**
 * `items` in order, in batches of at most BATCH_ITEMS whose sizes (with `fixed`, what each call
 * repeats) total at most BATCH_CHARS; an item larger than that alone is a batch of its own.
 */
function inBatches<T>(items: T[], size: (item: T) => number, fixed = 0): T[][] {
  const out: T[][] = [];
  let batch: T[] = [];
  let chars = fixed;
  for (const item of items) {
    const n = size(item) + 2;
    if (batch.length && (batch.length >= BATCH_ITEMS || chars + n > BATCH_CHARS)) {
      out.push(batch);
      batch = [];
      chars = fixed;
    }
    batch.push(item);
    chars += n;
  }
  if (batch.length) out.push(batch);
  return out;
}

export function createOpenAIProviders(config: Config) {
  const provider = createOpenAICompatible({
    name: PROVIDER_NAME,
    baseURL: (config.MNEMO_LLM_BASE_URL ?? "https://api.openai.com/v1").replace(/\/$/, ""),
    ...(config.OPENAI_API_KEY ? { apiKey: config.OPENAI_API_KEY } : {}),
    supportsStructuredOutputs: true,
    fetch: embeddingsInOrder,
  });
  const llm = provider.chatModel(config.MNEMO_LLM_MODEL);

  const structured = <T>(what: string, schema: z.ZodType<T>, system: string, prompt: string): Promise<T> =>
    modelCall(config, chatModel(what), () => generateStructured(llm, config, { schema, system, prompt }));
  /** "dedup judgement, batch 2 of 5"; the one call of one is named alone. */
  const nth = (what: string, i: number, n: number, part = "batch") =>
    n === 1 ? what : `${what}, ${part} ${i + 1} of ${n}`;

  /**
   * Whether embeddings are asked for with `dimensions`. vLLM refuses it (400) for every model that
   * cannot shorten its vectors (all-MiniLM, bge-m3, ...), even at the model's own size: after such
   * a refusal the call is made again without it, and so are the process's later ones (the length
   * check below still holds the vectors to MNEMO_EMBEDDING_DIM).
   */
  let sendDimensions = true;
  const embedder: Embedder = {
    name: `openai:${config.MNEMO_EMBEDDING_MODEL}`,
    dim: config.MNEMO_EMBEDDING_DIM,
    async embed(texts, options = {}) {
      if (texts.length === 0) return [];
      const abortSignal = AbortSignal.timeout(options.timeoutMs ?? config.MNEMO_LLM_TIMEOUT_MS);
      // Each text within the model's context (MNEMO_EMBEDDING_MAX_CHARS): a server refuses the
      // whole call for one text past it, and the job failed with nothing stored (a long
      // conversation's joined episode). The memory keeps its whole text; its vector, its start.
      const values = texts.map((t) => truncate(t, config.MNEMO_EMBEDDING_MAX_CHARS));
      const embed = (dimensions: boolean) =>
        embedMany({
          model: provider.embeddingModel(config.MNEMO_EMBEDDING_MODEL),
          values,
          maxRetries: config.MNEMO_LLM_MAX_RETRIES,
          abortSignal,
          ...(dimensions
            ? { providerOptions: { [PROVIDER_NAME]: { dimensions: config.MNEMO_EMBEDDING_DIM } } }
            : {}),
        });
      const { embeddings } = await modelCall(config, "embedding model", async () => {
        if (!sendDimensions) return embed(false);
        try {
          return await embed(true);
        } catch (err) {
          if (!(APICallError.isInstance(err) && err.statusCode === 400)) throw err;
          const out = await embed(false);
          sendDimensions = false;
          return out;
        }
      });
      return embeddings.map((v) => {
        if (v.length !== config.MNEMO_EMBEDDING_DIM) {
          throw new ProviderError(
            `The embedding model returned ${v.length} dimensions; MNEMO_EMBEDDING_DIM is ${config.MNEMO_EMBEDDING_DIM}.`,
          );
        }
        const n = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
        // A zero (or not finite) vector is no direction: stored, it is nobody's neighbour for ever.
        if (!(n > 0) || !Number.isFinite(n))
          throw new ProviderError(
            "The embedding model returned a vector of zeros or of numbers that are not finite.",
          );
        return v.map((x) => x / n);
      });
    },
  };

  const extractor: Extractor = {
    name: `openai:${config.MNEMO_LLM_MODEL}`,
    async extract(input) {
      // Long conversations go in windows so each call stays well inside the context: at most
      // BATCH_ITEMS turns and BATCH_CHARS characters (the known facts each window repeats
      // included); a turn longer than that is a window of its own.
      const windows = inBatches(input.turns, (t) => renderTurn(t).length, knownHeader(input.known).length);
      const parts: Extraction[] = [];
      const dropped: Dropped = {};
      for (const [i, w] of windows.entries()) {
        const out = await structured(
          nth("extraction", i, windows.length, "window"),
          ExtractionSchema,
          extractSystem(input),
          renderTurns(w, input.known),
        );
        parts.push(
          normaliseExtraction(
            out,
            w,
            { withArtifacts: input.extractArtifacts, redact: config.MNEMO_REDACT_SECRETS },
            dropped,
          ),
        );
      }
      if (Object.keys(dropped).length)
        input.log?.warn(
          { dropped, caps: REPLY_CAPS },
          "model reply: items over the caps or tied to no turn dropped",
        );
      return joinWindows(parts, input);
    },
    async judge(cases) {
      const verdicts: JudgeVerdict[] = cases.map(() => ({ verdict: "new" }));
      const open = cases
        .map((c, i) => ({
          c,
          i,
          line: `Case ${i}: NEW: ${c.text}\n${c.candidates.map((x) => `  EXISTING ${x.id}: ${x.text}`).join("\n")}`,
        }))
        .filter(({ c }) => c.candidates.length > 0);
      const batches = inBatches(open, (o) => o.line.length);
      for (const [i, batch] of batches.entries()) {
        const prompt = batch.map((o) => o.line).join("\n\n");
        const out = await structured(
          nth("dedup judgement", i, batches.length),
          JudgeSchema,
          JUDGE_SYSTEM,
          prompt,
        );
        const asked = new Set(batch.map((o) => o.i));
        for (const v of out.verdicts) {
          const c = cases[v.case];
          if (!c || !asked.has(v.case) || v.verdict === "new" || !v.existing_id) continue;
          if (!c.candidates.some((x) => x.id === v.existing_id)) continue;
          verdicts[v.case] = { verdict: v.verdict, id: v.existing_id };
        }
      }
      return verdicts;
    },
  };

  const classifier: Classifier = {
    name: `openai:${config.MNEMO_LLM_MODEL}`,
    async classify(items, groups) {
      const header = `Groups:\n${groups.map((g) => `- ${g.id}: ${g.prompt}`).join("\n") || "(none)"}\n\nMemories:\n`;
      const lines = items.map((m, i) => ({ i, line: `${i}. [${m.type}] ${m.text}` }));
      const results = new Map<number, z.infer<typeof ClassifySchema>["results"][number]>();
      const batches = inBatches(lines, (l) => l.line.length, header.length);
      for (const [i, batch] of batches.entries()) {
        const prompt = header + batch.map((l) => l.line).join("\n");
        const out = await structured(
          nth("classification", i, batches.length),
          ClassifySchema,
          CLASSIFY_SYSTEM,
          prompt,
        );
        const asked = new Set(batch.map((l) => l.i));
        for (const r of out.results) if (asked.has(r.index) && !results.has(r.index)) results.set(r.index, r);
      }
      const valid = new Set(groups.map((g) => g.id));
      return items.map((_m, i) => {
        const r = results.get(i);
        if (!r) return { verdict: null, matched_group_ids: [] };
        return { verdict: r.verdict, matched_group_ids: r.matched_group_ids.filter((id) => valid.has(id)) };
      });
    },
  };

  return { llm, embedder, extractor, classifier };
}

/**
 * The job's error for a failed model call, with its cause summed up for the log: the kind of
 * failure, the HTTP status, why the output did not do, its length, never what the model wrote (a
 * reply that does not parse can hold users' facts, and be megabytes long) nor the request.
 */
function asProviderError(err: unknown, retries: number, model: string, failed: FailedAnswers): Error {
  if (err instanceof ProviderError) return err;
  const cause = new Error(describeModelError(err));
  cause.name = err instanceof Error ? err.name : "Error";
  const The = `The ${model}`;
  if (NoObjectGeneratedError.isInstance(err)) {
    const cut = err.finishReason === "length" ? " (it ran out of output tokens)" : "";
    return new ProviderError(`${The} returned output that does not match the expected schema${cut}.`, {
      cause,
    });
  }
  if (RetryError.isInstance(err)) {
    const last = err.lastError;
    const status = APICallError.isInstance(last) ? ` (${httpStatus(last)})` : "";
    const transient = !APICallError.isInstance(last) || last.isRetryable;
    return new ProviderError(`${The} kept failing${status} after ${retries + 1} calls.`, {
      cause,
      transient,
      retryAfterMs: retryAfterOf(last),
    });
  }
  if (APICallError.isInstance(err)) {
    // A refusal of the request (4xx other than 429) says why without users' text (see refusal).
    const said = refusal(err);
    return new ProviderError(`${The} call failed (${httpStatus(err)}${said ? `: ${said}` : ""}).`, {
      cause,
      transient: err.isRetryable,
      retryAfterMs: retryAfterOf(err),
    });
  }
  if (err instanceof ToolCallsAnswer)
    return new ProviderError(`${The} answered with tool calls, not text.`, { cause });
  if (InvalidResponseDataError.isInstance(err)) {
    const which = invalidAnswer(err);
    return new ProviderError(`${The} returned an invalid answer${which ? `: ${which}` : "."}`, { cause });
  }
  if (err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError")) {
    // The time-out most often ends a call that keeps failing while it waits to retry (a 5xx or a
    // 429 answered at once, then the back-off or Retry-After): that call failed, it was not slow.
    // A Retry-After longer than the time-out is what the job's next attempt waits for (it was
    // dropped, and a rate-limited server was called again after the plain pause).
    if (failed.status !== undefined) {
      const tries = `${failed.count} call${failed.count === 1 ? "" : "s"}`;
      const message = `${The} kept failing (HTTP ${failed.status}) until its time-out, after ${tries}.`;
      return new ProviderError(message, { cause, transient: true, retryAfterMs: failed.retryAfterMs });
    }
    return new ProviderError(`${The} did not answer in time.`, { cause, transient: true });
  }
  // A refused or reset connection reaches here as fetch's TypeError.
  return new ProviderError(`${The} call failed.`, { cause, transient: err instanceof TypeError });
}

const JudgeSchema = z.object({
  verdicts: z.array(
    z.object({
      case: z.number().int(),
      verdict: z.enum(["new", "duplicate", "supersedes"]),
      existing_id: z.string().nullable(),
    }),
  ),
});

const ClassifySchema = z.object({
  results: z.array(
    z.object({
      index: z.number().int(),
      verdict: z.enum(["personal", "shareable"]),
      matched_group_ids: z.array(z.string()),
    }),
  ),
});

const JUDGE_SYSTEM =
  "For each case decide whether the NEW fact is new information, a duplicate (restates an EXISTING fact), or supersedes an EXISTING fact (same subject and attribute, a changed value). Give existing_id for duplicate and supersedes, else null. Reply with JSON matching the schema.";

const CLASSIFY_SYSTEM =
  "For each memory decide personal (about one person's private life: health, family, finances, credentials, contact details; if unsure, personal) or shareable (useful to a team: work, tools, code, products, shared knowledge). For shareable memories list the ids of the groups whose criterion the memory matches. Reply with JSON matching the schema.";

/**
 * Why a server refused the request (a 4xx other than 429), in words that cannot hold users' text.
 * A 401 or 404 judges the key, the URL or the model, before anything sent is read: its message
 * ("Incorrect API key provided", "model 'nomic' not found") is quoted, at most 200 characters.
 * Any other refusal judges what was sent, and a moderation or validation error of a proxy or a
 * local server may quote it ("Flagged: <the user's message>"): only the answer's `code` and
 * `type` are given, when they are identifiers ("content_filter", "invalid_request_error"), never
 * its message, which would otherwise reach the job's error, its webhook and the log.
 */
function refusal(err: APICallError): string {
  const status = err.statusCode ?? 0;
  if (status < 400 || status >= 500 || status === 429 || !err.responseBody) return "";
  try {
    const body = JSON.parse(err.responseBody) as Record<string, unknown>;
    const e = body.error as Record<string, unknown> | string | undefined;
    if (status === 401 || status === 404) {
      const said =
        typeof e === "string"
          ? e
          : typeof e?.message === "string"
            ? e.message
            : (body.detail ?? body.message);
      return typeof said === "string" ? truncate(said.replace(/\s+/g, " ").trim(), 200) : "";
    }
    const fields = typeof e === "object" && e !== null ? e : body;
    const ids = [fields.code, fields.type].filter(
      (v): v is string => typeof v === "string" && /^[A-Za-z][\w.-]{0,63}$/.test(v),
    );
    return [...new Set(ids)].join(", ");
  } catch {
    return "";
  }
}
