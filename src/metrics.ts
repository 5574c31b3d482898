import { wrapLanguageModel } from "ai";
import type pg from "pg";
import type { PgBoss } from "pg-boss";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { Providers } from "./providers/types.js";

/**
 * Prometheus metrics: one registry per runtime (tests run several runtimes in one process), built
 * in the entry point and passed down in `Deps`. Label values are bounded: route templates, never
 * paths; outcomes and stage names from code; never organisation, user or memory ids.
 */
export interface Metrics {
  registry: Registry;
  httpRequests: Counter<"route" | "method" | "status">;
  httpDuration: Histogram<"route" | "method" | "status">;
  ingestJobs: Counter<"outcome">;
  ingestQueueWait: Histogram;
  ingestStage: Histogram<"stage">;
  webhookDeliveries: Counter<"outcome" | "attempt">;
  searchDuration: Histogram;
  triggerDuration: Histogram;
  rateLimited: Counter<"code">;
  secretsRedacted: Counter<"kind">;
  modelCalls: Counter<"kind" | "outcome">;
  modelDuration: Histogram<"kind" | "outcome">;
  /** Reports the pool's connections (in use, idle, waiting) at every scrape. */
  watchPool(pool: pg.Pool): void;
  /** Reports queue depth by queue and state at every scrape (pg-boss's cached counts). */
  watchQueues(boss: PgBoss): void;
}

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const JOB_SECONDS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];

  let pool: pg.Pool | undefined;
  new Gauge({
    name: "mnemo_db_pool_connections",
    help: "Database pool connections by state (in_use, idle, waiting = requests queued for a connection).",
    labelNames: ["state"] as const,
    registers,
    collect() {
      if (!pool) return;
      this.set({ state: "in_use" }, pool.totalCount - pool.idleCount);
      this.set({ state: "idle" }, pool.idleCount);
      this.set({ state: "waiting" }, pool.waitingCount);
    },
  });

  let boss: PgBoss | undefined;
  new Gauge({
    name: "mnemo_queue_jobs",
    help: "Jobs per queue and state (pg-boss's counts, refreshed by its monitor every few seconds).",
    labelNames: ["queue", "state"] as const,
    registers,
    async collect() {
      if (!boss) return;
      try {
        for (const q of await boss.getQueues()) {
          // pg-boss's own queues (`__pgboss__send-it`) are not ours to report.
          if (q.name.startsWith("__pgboss")) continue;
          this.set({ queue: q.name, state: "ready" }, q.readyCount);
          this.set({ queue: q.name, state: "deferred" }, q.deferredCount);
          this.set({ queue: q.name, state: "active" }, q.activeCount);
          this.set({ queue: q.name, state: "failed" }, q.failedCount);
        }
      } catch {
        // The database being away must not fail the scrape; the series keep their last values.
      }
    },
  });

  return {
    registry,
    httpRequests: new Counter({
      name: "mnemo_http_requests_total",
      help: "HTTP requests by route template, method and status.",
      labelNames: ["route", "method", "status"] as const,
      registers,
    }),
    httpDuration: new Histogram({
      name: "mnemo_http_request_duration_seconds",
      help: "HTTP request latency by route template, method and status.",
      labelNames: ["route", "method", "status"] as const,
      buckets: SECONDS,
      registers,
    }),
    ingestJobs: new Counter({
      name: "mnemo_ingest_jobs_total",
      help: "Ingest job runs by outcome (succeeded, failed, gave_up, interrupted: the database or the model's endpoint was unavailable, retried).",
      labelNames: ["outcome"] as const,
      registers,
    }),
    ingestQueueWait: new Histogram({
      name: "mnemo_ingest_queue_wait_seconds",
      help: "Time from an ingest job's submission to a worker starting it.",
      buckets: JOB_SECONDS,
      registers,
    }),
    ingestStage: new Histogram({
      name: "mnemo_ingest_stage_duration_seconds",
      help: "Ingest pipeline stage durations (extract, embed, dedup, classify, store).",
      labelNames: ["stage"] as const,
      buckets: JOB_SECONDS,
      registers,
    }),
    webhookDeliveries: new Counter({
      name: "mnemo_webhook_deliveries_total",
      help: "Webhook delivery attempts by outcome (delivered, retrying, failed, skipped) and attempt number.",
      labelNames: ["outcome", "attempt"] as const,
      registers,
    }),
    searchDuration: new Histogram({
      name: "mnemo_search_duration_seconds",
      help: "Search latency inside the service (embed, retrieve, rerank, compose).",
      buckets: SECONDS,
      registers,
    }),
    triggerDuration: new Histogram({
      name: "mnemo_trigger_duration_seconds",
      help: "Trigger (symbol-triggered recall) latency inside the service.",
      buckets: SECONDS,
      registers,
    }),
    rateLimited: new Counter({
      name: "mnemo_rate_limited_total",
      help: "Requests refused by the rate limiter, by error code (rate_limited, daily_cap_exceeded, monthly_quota_exceeded).",
      labelNames: ["code"] as const,
      registers,
    }),
    secretsRedacted: new Counter({
      name: "mnemo_secrets_redacted_total",
      help: "Secrets masked in ingested messages when accepted, by kind (GitHub token, password, ...).",
      labelNames: ["kind"] as const,
      registers,
    }),
    modelCalls: new Counter({
      name: "mnemo_model_calls_total",
      help: "Calls to the configured model server by kind (embed, extract, judge, classify, generate) and outcome.",
      labelNames: ["kind", "outcome"] as const,
      registers,
    }),
    modelDuration: new Histogram({
      name: "mnemo_model_call_duration_seconds",
      help: "Latency of calls to the configured model server by kind and outcome.",
      labelNames: ["kind", "outcome"] as const,
      buckets: JOB_SECONDS,
      registers,
    }),
    watchPool(p) {
      pool = p;
    },
    watchQueues(b) {
      boss = b;
    },
  };
}

/**
 * Times every call the providers make to a configured model server (kind and outcome). The local
 * providers are left alone: they call no model.
 */
export function instrumentProviders(providers: Providers, metrics: Metrics): Providers {
  if (providers.kind === "local") return providers;
  const timed = async <T>(kind: string, fn: () => PromiseLike<T>): Promise<T> => {
    const end = metrics.modelDuration.startTimer({ kind });
    try {
      const out = await fn();
      end({ outcome: "ok" });
      metrics.modelCalls.inc({ kind, outcome: "ok" });
      return out;
    } catch (err) {
      end({ outcome: "error" });
      metrics.modelCalls.inc({ kind, outcome: "error" });
      throw err;
    }
  };
  const { embedder, extractor, classifier, llm } = providers;
  // An operation with nothing to send (no texts; no case with an existing fact to judge against)
  // asks the server nothing, and is not counted as a call to it.
  return {
    ...providers,
    embedder: {
      name: embedder.name,
      dim: embedder.dim,
      embed: (texts, options) =>
        texts.length ? timed("embed", () => embedder.embed(texts, options)) : embedder.embed(texts, options),
    },
    extractor: {
      name: extractor.name,
      extract: (input) => timed("extract", () => extractor.extract(input)),
      judge: (cases) =>
        cases.some((c) => c.candidates.length)
          ? timed("judge", () => extractor.judge(cases))
          : extractor.judge(cases),
    },
    classifier: {
      name: classifier.name,
      classify: (items, groups) =>
        items.length
          ? timed("classify", () => classifier.classify(items, groups))
          : classifier.classify(items, groups),
    },
    // Search's context selection and the trigger gate call the chat model directly.
    llm:
      llm && typeof llm === "object"
        ? wrapLanguageModel({
            model: llm,
            middleware: {
              specificationVersion: "v4",
              wrapGenerate: ({ doGenerate }) => timed("generate", doGenerate),
            },
          })
        : llm,
  };
}
