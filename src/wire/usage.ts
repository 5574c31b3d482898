import { z } from "@hono/zod-openapi";
import { DateTime, QueryBool } from "./common.js";

/** A calendar month, YYYY-MM, year 0001 to 9999 (PostgreSQL has no year 0: 0000 read as 1 BC). */
export const MONTH_RE = /^(?!0000)\d{4}-(0[1-9]|1[0-2])$/;

export const UsageQuery = z
  .object({
    month: z
      .string()
      .regex(MONTH_RE, "must be YYYY-MM, year 0001 to 9999")
      .optional()
      .openapi({ description: "Calendar month (UTC); the current month when omitted.", example: "2026-11" }),
    daily: QueryBool.openapi({ description: "Add a per-day breakdown." }),
    by_api_key: QueryBool.openapi({ description: "Add a per-key breakdown." }),
  })
  // A parameter it does not know is a 422 naming it, never dropped (as on every list).
  .strict();

const Counts = {
  messages_ingested: z.number().int(),
  searches: z.number().int(),
  requests: z.number().int(),
};

const Used = z
  .object({
    used: z.number().int(),
    limit: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "The tier's monthly cap; null when unlimited." }),
  })
  .openapi("UsageQuotaCounter");

export const UsageSchema = z
  .object({
    object: z.literal("usage"),
    org_id: z.string(),
    as_of: DateTime.openapi({ description: "When these figures were read (database clock)." }),
    period: z.object({
      key: z.string().openapi({ example: "2026-11", description: "The month, YYYY-MM (UTC)." }),
      type: z.literal("calendar_month"),
      month: z.string().openapi({ example: "2026-11", description: "Same as `key`." }),
      start: z.string().openapi({ format: "date", description: "First day of the month." }),
      end: z.string().openapi({ format: "date", description: "Last day of the month (inclusive)." }),
    }),
    tier: z.string(),
    limits: z.object({
      requests_per_minute: z.number().int().nullable(),
      requests_per_day: z.number().int().nullable(),
    }),
    operations: z.object(Counts),
    storage: z.object({
      memories_active: z.number().int().openapi({ description: "Active facts." }),
      episodes_active: z.number().int(),
      artifacts_active: z.number().int(),
      directives_active: z.number().int().openapi({ description: "Lessons and procedures." }),
      as_of: DateTime.openapi({ description: "Storage counts are current, not per period." }),
    }),
    quota: z.object({
      rate_limit_req_per_min: z.number().int().nullable().openapi({ description: "Null when unlimited." }),
      monthly: z.object({
        period_key: z.string().openapi({ example: "2026-11" }),
        resets_at: DateTime.openapi({ description: "Start of the next calendar month (UTC)." }),
        messages_ingested: Used,
        searches: Used,
      }),
    }),
    daily: z
      .array(z.object({ date: z.string().openapi({ format: "date" }), ...Counts }))
      .nullable()
      .openapi({ description: "Per UTC day with any activity; null unless `daily=true`." }),
    by_api_key: z
      .array(
        z.object({
          api_key_hash: z.string().nullable().openapi({
            description: "The stored SHA-256 hex of the key; null for identity-provider tokens.",
          }),
          first_n: z
            .string()
            .nullable()
            .openapi({ description: "The key's display prefix.", example: "mnemo_" }),
          name: z.string().nullable(),
          ...Counts,
          last_used_at: DateTime.nullable(),
          api_key_id: z.string().nullable().openapi({ description: "Null for identity-provider tokens." }),
          kind: z.string().nullable(),
          display: z.string().nullable(),
        }),
      )
      .nullable()
      .openapi({ description: "Per credential; null unless `by_api_key=true`." }),
  })
  .openapi("Usage", {
    description:
      "The organisation's usage; for a credential confined to a user (a user's key or token), its own user's: operations, daily, quota `used` and by_api_key count that user's API keys' requests only, storage that user's memories. Limits are the organisation's.",
  });
export type Usage = z.infer<typeof UsageSchema>;
