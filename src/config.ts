import { z } from "zod";

const bool = (def: boolean) =>
  z
    .enum(["true", "false", "1", "0", "yes", "no", ""])
    .optional()
    .transform((v) => (v === undefined || v === "" ? def : v === "true" || v === "1" || v === "yes"));

const int = (def: number, min: number, max: number) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === "") return def;
      const n = Number(v);
      if (!Number.isInteger(n) || n < min || n > max) {
        ctx.addIssue({ code: "custom", message: `must be an integer from ${min} to ${max}` });
        return z.NEVER;
      }
      return n;
    });

const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === "" ? undefined : v.trim()));

const url = z
  .string()
  .optional()
  .transform((v, ctx) => {
    if (v === undefined || v.trim() === "") return undefined;
    try {
      new URL(v);
      return v.trim();
    } catch {
      ctx.addIssue({ code: "custom", message: "must be a URL" });
      return z.NEVER;
    }
  });

const limit = z.number().int().min(1).nullable();
/**
 * `{"pro": {"per_minute": 3000, "per_day": 500000}, "internal": "unlimited"}`: a null limit (or
 * the string "unlimited" for the whole tier) means no limit.
 */
const RateTiersSchema = z.record(
  z.string().min(1),
  z.union([
    z.literal("unlimited").transform(() => ({ per_minute: null, per_day: null })),
    z.object({ per_minute: limit, per_day: limit }).strict(),
  ]),
);

/**
 * Every environment variable the service reads. The README's configuration table lists the same
 * names with the same defaults; keep the two in step.
 */
export const EnvSchema = z.object({
  PORT: int(8080, 0, 65535),
  HOST: z.string().default("127.0.0.1"),
  DATABASE_URL: url,
  MNEMO_DATA_DIR: z.string().default("./.mnemo-data"),
  MNEMO_BOOTSTRAP_API_KEY: optionalString.pipe(
    z.string().min(24, "must be at least 24 characters").optional(),
  ),
  LOG_LEVEL: z.enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"]).default("info"),
  /** Key for cursors and for encrypting webhook secrets at rest; generated and stored if unset. */
  MNEMO_SECRET_KEY: optionalString.pipe(z.string().min(32, "must be at least 32 characters").optional()),
  MNEMO_DB_POOL_SIZE: int(10, 1, 200),
  MNEMO_EMBEDDING_DIM: int(384, 8, 4096),
  MNEMO_MAX_BODY_BYTES: int(1024 * 1024, 1024, 64 * 1024 * 1024),
  MNEMO_SHUTDOWN_TIMEOUT_MS: int(10_000, 0, 600_000),
  MAX_GROUPS_PER_ORG: int(100, 1, 100_000),
  MAX_GROUP_IDS_PER_INGEST: int(20, 1, 1000),
  MNEMO_BATCH_THRESHOLD: int(20, 1, 100_000),
  MNEMO_WAIT_SECONDS: int(30, 0, 600),
  MNEMO_JOB_RETENTION_HOURS: int(24, 0, 24 * 365),
  MNEMO_WORKER_CONCURRENCY: int(2, 1, 64),
  /** A running ingest job not finished in this time is taken as dead (worker killed) and retried. */
  MNEMO_JOB_EXPIRE_SECONDS: int(600, 1, 86_400),
  /** Test only: the local extractor sleeps this long, to exercise wait time-outs and worker kills. */
  MNEMO_TEST_EXTRACT_DELAY_MS: int(0, 0, 600_000),
  // Language model (OpenAI-compatible). Unset: the deterministic local providers.
  OPENAI_API_KEY: optionalString,
  MNEMO_LLM_BASE_URL: url,
  MNEMO_LLM_MODEL: z.string().default("gpt-4o-mini"),
  MNEMO_EMBEDDING_MODEL: z.string().default("text-embedding-3-small"),
  MNEMO_LLM_TIMEOUT_MS: int(60_000, 100, 600_000),
  MNEMO_LLM_MAX_RETRIES: int(3, 0, 10),
  // Webhooks
  MNEMO_WEBHOOK_ALLOW_PRIVATE: bool(false),
  MNEMO_WEBHOOK_TIMEOUT_MS: int(10_000, 100, 120_000),
  /** Delay in seconds before each delivery attempt; its length is the number of attempts. */
  MNEMO_WEBHOOK_RETRY_SCHEDULE: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === "") return [0, 5, 30, 120, 600];
      const parts = v.split(",").map((p) => Number(p.trim()));
      if (parts.length > 20 || parts.some((n) => !Number.isFinite(n) || n < 0 || n > 86_400)) {
        ctx.addIssue({
          code: "custom",
          message: "must be 1 to 20 comma-separated delays in seconds (0..86400)",
        });
        return z.NEVER;
      }
      return parts;
    }),
  // Identity-provider JWTs
  MNEMO_JWT_JWKS_URL: url,
  MNEMO_JWT_SECRET: optionalString,
  MNEMO_JWT_ISSUER: optionalString,
  MNEMO_JWT_AUDIENCE: optionalString,
  MNEMO_JWT_ORG_CLAIM: z.string().default("org_id"),
  MNEMO_JWT_USER_CLAIM: z.string().default("sub"),
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
        ctx.addIssue({ code: "custom", message: `invalid tiers: ${parsed.error.issues[0]?.message}` });
      } catch {
        ctx.addIssue({ code: "custom", message: "must be JSON" });
      }
      return z.NEVER;
    }),
  // MCP defaults
  MNEMO_URL: url,
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
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join("\n")}`);
  }
  return parsed.data;
}

/** Whether a language model is configured (OpenAI or any OpenAI-compatible server). */
export function llmConfigured(config: Config): boolean {
  return Boolean(config.OPENAI_API_KEY || config.MNEMO_LLM_BASE_URL);
}
