import { isIP } from "node:net";
import { availableParallelism } from "node:os";
import { z } from "zod";
import { TX_MS } from "./db/timed-tx.js";

const bool = (def: boolean) =>
  z
    .enum(["true", "false", "1", "0", "yes", "no", ""])
    .optional()
    .transform((v) => (v === undefined || v === "" ? def : v === "true" || v === "1" || v === "yes"));

/** A whole number written in decimal digits ("0x1F90", "1e3" and "8080.0" are not), else NaN. */
const decimal = (v: string) => (/^\s*-?\d+\s*$/.test(v) ? Number(v) : Number.NaN);

/**
 * The longest wait window (MNEMO_WAIT_SECONDS) a server takes: a client that cannot know a
 * server's own (stdio with MNEMO_URL) waits this long, and more, for an ingest with `wait`.
 */
export const MAX_WAIT_SECONDS = 600;

const int = (def: number, min: number, max: number) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === "") return def;
      const n = decimal(v);
      if (!Number.isInteger(n) || n < min || n > max) {
        ctx.addIssue({ code: "custom", message: `must be an integer from ${min} to ${max}` });
        return z.NEVER;
      }
      return n;
    });

/**
 * An empty value (`HOST=` in an env file or a systemd `Environment=` line) is the same as unset:
 * the default applies. Kept as "", it meant every interface for HOST and the working directory for
 * MNEMO_DATA_DIR.
 */
const orDefault = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => (typeof v === "string" && v.trim() === "" ? undefined : v), schema);

/** The highest MNEMO_MAX_GROUP_IDS_PER_QUERY can be set to (the published `maxItems` of `group_ids`). */
export const GROUP_IDS_PER_QUERY_CEILING = 1000;

const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === "" ? undefined : v.trim()));

/**
 * A URL of one of `schemes` ("postgres:"...). `new URL` alone reads "db.internal:5432/mnemo" as a
 * URL of the scheme "db.internal:", and a client then connects somewhere nobody named.
 */
const url = (...schemes: string[]) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === "") return undefined;
      let parsed: URL | undefined;
      try {
        parsed = new URL(v.trim());
      } catch {}
      if (!parsed || !schemes.includes(parsed.protocol)) {
        const names = schemes.map((p) => `${p}//`).join(" or ");
        ctx.addIssue({ code: "custom", message: `must be a URL starting with ${names}` });
        return z.NEVER;
      }
      return v.trim();
    });
const httpUrl = url("http:", "https:");
/** A PostgreSQL server's URL (DATABASE_URL, and `admin migrate-to --target`). */
export const PostgresUrl = url("postgres:", "postgresql:");

/** A refusal of a setting's value, for a transform. */
function fail(ctx: z.RefinementCtx, message: string): never {
  ctx.addIssue({ code: "custom", message });
  return z.NEVER as never;
}

/**
 * What is wrong in MNEMO_RATE_TIERS, naming the tier and field ("pro.per_day: required"): a tier is
 * "unlimited" or an object, and zod reports that union's failure as only "Invalid input".
 */
function tierProblem(issues: z.core.$ZodIssue[]): string {
  const issue = issues[0];
  if (!issue) return "invalid";
  const inner =
    issue.code === "invalid_union"
      ? issue.errors.find((e) => e.length && e[0]!.code !== "invalid_value")
      : undefined;
  const first = inner?.[0] ?? issue;
  const at = [...issue.path, ...(inner ? first.path : [])].map(String).join(".");
  const what =
    first.code === "invalid_type" && /received undefined/.test(first.message)
      ? "required (a number of at least 1, or null for no limit)"
      : first.message;
  return `${at ? `${at}: ` : ""}${what}; a tier is "unlimited" or {"per_minute": n|null, "per_day": n|null, "messages_per_month"?: n|null, "searches_per_month"?: n|null}`;
}

const limit = z.number().int().min(1).nullable();
/**
 * `{"pro": {"per_minute": 3000, "per_day": 500000, "messages_per_month": 1000000}, "internal":
 * "unlimited"}`: a null or omitted monthly cap (or the string "unlimited" for the whole tier)
 * means no limit; `per_minute` and `per_day` are required (null for none).
 */
const RateTiersSchema = z.record(
  z.string().min(1),
  z.union([
    z.literal("unlimited").transform(() => ({
      per_minute: null,
      per_day: null,
      messages_per_month: null,
      searches_per_month: null,
    })),
    z
      .object({
        per_minute: limit,
        per_day: limit,
        messages_per_month: limit.default(null),
        searches_per_month: limit.default(null),
      })
      .strict(),
  ]),
);

/**
 * Every environment variable the service reads. The README's configuration table lists the same
 * names with the same defaults; keep the two in step.
 */
export const EnvSchema = z.object({
  PORT: int(8080, 0, 65535),
  /** An IP address or a host name (checked here: a listen on a malformed one fails only after the database opened). */
  HOST: orDefault(
    z
      .string()
      .trim()
      .default("127.0.0.1")
      .refine(
        (v) =>
          isIP(v) !== 0 ||
          /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/.test(
            v,
          ),
        "must be an IP address or a host name",
      ),
  ),
  DATABASE_URL: PostgresUrl,
  MNEMO_DATA_DIR: orDefault(z.string().default("./.mnemo-data")),
  MNEMO_BOOTSTRAP_API_KEY: optionalString.pipe(
    z.string().min(24, "must be at least 24 characters").optional(),
  ),
  LOG_LEVEL: orDefault(
    z.enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"]).default("info"),
  ),
  /** json (one object a line, for collectors) or pretty (for a terminal). */
  LOG_FORMAT: orDefault(z.enum(["json", "pretty"]).default("json")),
  /** Bearer token required on /metrics when set. */
  MNEMO_METRICS_TOKEN: optionalString,
  /** When set, /metrics and /healthz are also served on this port (a worker-only process's only HTTP). */
  MNEMO_METRICS_PORT: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === "") return undefined;
      const n = decimal(v);
      if (!Number.isInteger(n) || n < 0 || n > 65535) {
        ctx.addIssue({ code: "custom", message: "must be a port number (0 picks a free one)" });
        return z.NEVER;
      }
      return n;
    }),
  /** Key for cursors and for encrypting webhook secrets at rest; generated and stored if unset. */
  MNEMO_SECRET_KEY: optionalString.pipe(z.string().min(32, "must be at least 32 characters").optional()),
  /** admin migrate-to only: re-encrypt webhook secrets under this key for the target. */
  MNEMO_NEW_SECRET_KEY: optionalString.pipe(z.string().min(32, "must be at least 32 characters").optional()),
  /**
   * Connections per process. By default twice the machine's cores, at least 4: PostgreSQL's own
   * sizing rule (cores x 2, plus disks), for a database on this machine (the embedded one, or a
   * server beside the service); more statements at once than the cores can run only slow each
   * other down. On this 2-core machine `bench:responsive` searched at 20 clients with p95 160 ms
   * on PostgreSQL at 10 connections, 126 ms at 4 and 106-110 ms at 2-3 (CPU per search 8.2 -> 7.2
   * -> 6.9-7.3 ms). A server elsewhere with more cores: set it to twice those.
   */
  MNEMO_DB_POOL_SIZE: int(Math.max(4, 2 * availableParallelism()), 1, 200),
  /**
   * Wake workers and wait=true holds across processes with LISTEN/NOTIFY (extra connections held
   * for it: one for pg-boss's job notifications, and one more for finished jobs in a process that
   * serves the API). Off only behind a pooler that cannot hold a session (PgBouncer transaction pooling).
   */
  MNEMO_LISTEN_NOTIFY: bool(true),
  /**
   * At most 2,000: pgvector's HNSW index takes no more dimensions of `vector`. Larger models
   * (text-embedding-3-large, 3,072) are asked for this many (the `dimensions` option, sent).
   */
  MNEMO_EMBEDDING_DIM: int(384, 8, 2000),
  MNEMO_MAX_BODY_BYTES: int(1024 * 1024, 1024, 64 * 1024 * 1024),
  /**
   * At least 1 s: a `wait=true` hold must answer (202, pending) before the time-out, and with 0
   * the connections were closed before it could (the client got no response at all).
   */
  MNEMO_SHUTDOWN_TIMEOUT_MS: int(10_000, 1000, 600_000),
  /**
   * How long a statement of a request (REST, MCP, console) may wait for the database's answer;
   * then the request is answered 503 `service_unavailable` with Retry-After and the connection is
   * dropped. A server that stopped answering with its connections open (paused, partitioned) hangs
   * requests for no longer than this. Jobs, migrations and admin commands have no such deadline.
   */
  MNEMO_DB_QUERY_TIMEOUT_MS: int(20_000, 1000, 600_000),
  /** How long `/readyz` waits for the database's answer before reporting 503 "database not answering". */
  MNEMO_READYZ_TIMEOUT_MS: int(2_000, 100, 60_000),
  /** How long a process waits for the owner of the embedded data directory to start serving it. */
  MNEMO_OWNER_WAIT_MS: int(60_000, 0, 600_000),
  /** Messages one ingest may carry; more is 422 `too_many_messages`. */
  MNEMO_MAX_MESSAGES_PER_INGEST: int(5000, 1, 1_000_000),
  /** Mask secrets (keys, tokens, passwords) in ingested messages when accepted (src/ingest/redact.ts). */
  MNEMO_REDACT_SECRETS: bool(true),
  /** A client has this long to send the request headers; then 408 and the connection closes. */
  MNEMO_HTTP_HEADERS_TIMEOUT_MS: int(10_000, 100, 600_000),
  /** A client has this long to send the whole request (headers and body); then 408. */
  MNEMO_HTTP_REQUEST_TIMEOUT_MS: int(20_000, 100, 600_000),
  /**
   * An idle kept-alive connection is closed after this. Longer than the idle time-out of the
   * proxies and clients in front (60 s on common load balancers; undici reuses a connection until
   * 2 s before the server's hint): Node's 5 s let a client send a request onto a connection the
   * server was closing ("other side closed", a 502 at a proxy).
   */
  MNEMO_HTTP_KEEP_ALIVE_TIMEOUT_MS: int(65_000, 1000, 600_000),
  MAX_GROUPS_PER_ORG: int(100, 1, 100_000),
  MAX_GROUP_IDS_PER_INGEST: int(20, 1, 1000),
  /**
   * Group ids one read may name (search, trigger, the variant forms' filters; REST and MCP alike);
   * more is 422 `invalid_request`. Unbounded, one search naming 110,000 ids held the embedded
   * database 67 s (4.5 s on PostgreSQL) while every other request waited.
   */
  MNEMO_MAX_GROUP_IDS_PER_QUERY: int(100, 1, GROUP_IDS_PER_QUERY_CEILING),
  MNEMO_BATCH_THRESHOLD: int(20, 1, 100_000),
  MNEMO_WAIT_SECONDS: int(30, 0, MAX_WAIT_SECONDS),
  MNEMO_JOB_RETENTION_HOURS: int(24, 0, 24 * 365),
  MNEMO_WORKER_CONCURRENCY: int(2, 1, 64),
  /** A running ingest attempt not finished in this time is taken as stuck and retried. */
  MNEMO_JOB_EXPIRE_SECONDS: int(600, 1, 86_400),
  /**
   * A running ingest attempt's worker refreshes the job's heartbeat every half of this; one not
   * refreshed for this long (its worker killed, its process crashed) is retried. pg-boss's floor is 10.
   */
  MNEMO_JOB_HEARTBEAT_SECONDS: int(30, 10, 3_600),
  /** Test only: the local extractor sleeps this long, to exercise wait time-outs and worker kills. */
  MNEMO_TEST_EXTRACT_DELAY_MS: int(0, 0, 600_000),
  /** Test only: the store stage pauses this long after each committed chunk of facts. */
  MNEMO_TEST_STORE_CHUNK_DELAY_MS: int(0, 0, 600_000),
  /**
   * Test only: what a write transaction on the embedded database is sized to take (TX_MS in
   * src/db/timed-tx.ts, 100 ms, by default): an ingest job's store transactions and admin import's.
   * 0 keeps each one after the first at the smallest size.
   */
  MNEMO_TEST_TX_MS: int(TX_MS, 0, 600_000),
  /**
   * Test only: the pause before an attempt the model interrupted is tried again, times the
   * attempts so far (MODEL_RETRY_PAUSE_MS in src/ingest/run-job.ts, 5 s, by default). The tests
   * of a model that keeps failing waited 5 + 10 s of it in each pass.
   */
  MNEMO_TEST_MODEL_RETRY_PAUSE_MS: int(5_000, 1, 600_000),
  // Language model (OpenAI-compatible). Unset: the deterministic local providers.
  OPENAI_API_KEY: optionalString,
  // A user name or password in the URL: fetch refuses to send such a request, so every model call
  // failed as if the server were down, and the log quoted the password in fetch's error.
  MNEMO_LLM_BASE_URL: httpUrl.refine((v) => {
    if (v === undefined) return true;
    const u = new URL(v);
    return u.username === "" && u.password === "";
  }, "must not carry a user name or password (requests cannot be sent to such a URL): put the key in OPENAI_API_KEY, sent as a bearer token"),
  MNEMO_LLM_MODEL: orDefault(z.string().trim().default("gpt-4o-mini")),
  MNEMO_EMBEDDING_MODEL: orDefault(z.string().trim().default("text-embedding-3-small")),
  /**
   * The most characters of one text the embedding model is sent; a longer memory is stored whole
   * and its vector made from its start. A text past the model's context failed the whole job.
   */
  MNEMO_EMBEDDING_MAX_CHARS: int(2_000, 100, 1_000_000),
  MNEMO_LLM_TIMEOUT_MS: int(60_000, 100, 600_000),
  /**
   * The bound for model calls a client waits on (a search's query embedding, context selection,
   * the trigger's relevance gate); background jobs keep MNEMO_LLM_TIMEOUT_MS.
   */
  MNEMO_LLM_REQUEST_TIMEOUT_MS: int(10_000, 100, 600_000),
  MNEMO_LLM_MAX_RETRIES: int(3, 0, 10),
  /**
   * `max_tokens` sent with every chat call, bounding a runaway reply at the server; 0 sends none
   * (the server's own limit; OpenAI's reasoning models refuse `max_tokens`).
   */
  MNEMO_LLM_MAX_OUTPUT_TOKENS: int(0, 0, 1_000_000),
  // Webhooks
  MNEMO_WEBHOOK_ALLOW_PRIVATE: bool(false),
  MNEMO_WEBHOOK_TIMEOUT_MS: int(10_000, 100, 120_000),
  /** Delivery attempts a worker process runs at once, each waiting on its receiver alone. */
  MNEMO_WEBHOOK_CONCURRENCY: int(8, 1, 256),
  /**
   * How many attempts of one organisation run at once, over every worker process; 0: all but one
   * of MNEMO_WEBHOOK_CONCURRENCY (at least one), so a receiver that never answers leaves a slot to
   * every other organisation.
   */
  MNEMO_WEBHOOK_CONCURRENCY_PER_ORG: int(0, 0, 256),
  MNEMO_WEBHOOK_DELIVERY_RETENTION_DAYS: int(30, 1, 3650),
  /** Delay in seconds before each delivery attempt; its length is the number of attempts. */
  MNEMO_WEBHOOK_RETRY_SCHEDULE: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === "") return [0, 5, 30, 120, 600];
      // An empty entry ("5,,30", "5,") is a mistake, not an immediate attempt (Number("") is 0);
      // a delay is decimal digits, with a fraction of a second allowed ("0.5"), never "0x10" or "1e2".
      const parts = v.split(",").map((p) => (/^\s*\d+(\.\d+)?\s*$/.test(p) ? Number(p) : Number.NaN));
      if (parts.length > 20 || parts.some((n) => Number.isNaN(n) || n > 86_400)) {
        ctx.addIssue({
          code: "custom",
          message: "must be 1 to 20 comma-separated delays in seconds (0..86400)",
        });
        return z.NEVER;
      }
      return parts;
    }),
  // Web console
  /** How long a console sign-in lasts. */
  MNEMO_CONSOLE_SESSION_HOURS: int(12, 1, 24 * 30),
  /** Trust X-Forwarded-Proto from a TLS-terminating proxy (marks the console cookie Secure). */
  MNEMO_TRUST_PROXY: bool(false),
  // Identity-provider JWTs
  MNEMO_JWT_JWKS_URL: httpUrl,
  /**
   * Taken as given (no trim: it must equal the identity provider's byte for byte), and at least
   * 32 bytes, the HS256 key size RFC 7518 §3.2 requires: a short shared secret is guessed
   * offline from one token, and then any organisation's tokens can be forged.
   */
  MNEMO_JWT_SECRET: z
    .string()
    .optional()
    .transform((v) => (v === undefined || v.trim() === "" ? undefined : v))
    .pipe(
      z
        .string()
        .refine((v) => Buffer.byteLength(v) >= 32, "must be at least 32 bytes (RFC 7518: the HS256 key size)")
        .optional(),
    ),
  MNEMO_JWT_ISSUER: optionalString,
  MNEMO_JWT_AUDIENCE: optionalString,
  MNEMO_JWT_ORG_CLAIM: orDefault(z.string().trim().default("org_id")),
  MNEMO_JWT_USER_CLAIM: orDefault(z.string().trim().default("sub")),
  MNEMO_JWT_CLOCK_TOLERANCE_S: int(30, 0, 600),
  MNEMO_JWT_JWKS_COOLDOWN_MS: int(30_000, 0, 3_600_000),
  // Rate limits: extra or overriding tiers as JSON, see rateTiers below
  MNEMO_RATE_TIERS: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === "") return {};
      try {
        const parsed = RateTiersSchema.safeParse(JSON.parse(v));
        if (parsed.success) return parsed.data;
        ctx.addIssue({ code: "custom", message: `invalid tiers: ${tierProblem(parsed.error.issues)}` });
      } catch {
        ctx.addIssue({ code: "custom", message: "must be JSON" });
      }
      return z.NEVER;
    }),
  // Browser clients (a web app, a browser MCP client): the origins allowed to call /v1 and /mcp
  // across origins, comma-separated, or "*"; none by default (no CORS headers are sent).
  MNEMO_CORS_ORIGINS: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === "") return [];
      const list = v.split(",").map((o) => o.trim());
      // An empty entry ("a,,b", "a,") is a slip, refused like in every other list.
      if (list.includes("")) return fail(ctx, "an entry is empty");
      if (list.includes("*")) return list.length === 1 ? ["*"] : fail(ctx, '"*" stands alone');
      for (const o of list) {
        let u: URL | undefined;
        try {
          u = new URL(o);
        } catch {}
        if (!u || !["http:", "https:"].includes(u.protocol) || u.origin !== o)
          return fail(
            ctx,
            `${JSON.stringify(o)} is no origin (scheme://host[:port], no path or trailing slash)`,
          );
      }
      return list;
    }),
  // MCP defaults
  MNEMO_URL: httpUrl,
  MNEMO_API_KEY: optionalString,
  MNEMO_DEFAULT_USER_ID: optionalString,
  MNEMO_DEFAULT_AGENT_ID: optionalString,
  MNEMO_DEFAULT_APP_ID: optionalString,
  MNEMO_DEFAULT_NAMESPACE: optionalString,
});

export type Config = z.output<typeof EnvSchema>;

export class ConfigError extends Error {
  override name = "ConfigError";
}

/** Parses the environment once; a wrong value throws a ConfigError naming the variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    // One line (start-up failures are one line on stderr), every wrong variable named.
    const issues = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    throw new ConfigError(`invalid configuration: ${issues.join("; ")}`);
  }
  return parsed.data;
}

/** Whether a language model is configured (OpenAI or any OpenAI-compatible server). */
export function llmConfigured(config: Config): boolean {
  return Boolean(config.OPENAI_API_KEY || config.MNEMO_LLM_BASE_URL);
}
