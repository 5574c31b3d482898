import { createRoute, z } from "@hono/zod-openapi";
import { getUsage } from "../../src/usage/get.js";
import { errorResponses } from "../schemas.js";
import type { App } from "../types.js";

const flag = z
  .enum(["true", "false", "1", "0"])
  .optional()
  .transform((v) => v === "true" || v === "1");

const UsageQuery = z.object({
  month: z
    .string()
    .regex(/^\d{4}-(0[1-9]|1[0-2])$/, "must be YYYY-MM")
    .optional()
    .openapi({ description: "Calendar month (UTC); the current month when omitted.", example: "2026-11" }),
  daily: flag.openapi({ description: "Add a per-day breakdown." }),
  by_api_key: flag.openapi({ description: "Add a per-key breakdown." }),
});

const Counts = {
  messages_ingested: z.number().int(),
  searches: z.number().int(),
  requests: z.number().int(),
};

const Usage = z
  .object({
    object: z.literal("usage"),
    org_id: z.string(),
    period: z.object({
      month: z.string().openapi({ example: "2026-11" }),
      start: z.string().openapi({ format: "date" }),
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
    }),
    daily: z.array(z.object({ date: z.string().openapi({ format: "date" }), ...Counts })).optional(),
    by_api_key: z
      .array(
        z.object({
          api_key_id: z.string().nullable().openapi({ description: "Null for identity-provider tokens." }),
          name: z.string().nullable(),
          kind: z.string().nullable(),
          display: z.string().nullable(),
          ...Counts,
        }),
      )
      .optional(),
  })
  .openapi("Usage");

export function registerUsageRoutes(app: App) {
  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/usage",
      tags: ["usage"],
      summary: "Usage of the caller's organisation",
      description:
        "Operation counts for a calendar month (UTC days), rows stored now per type, and the tier with its limits.",
      request: { query: UsageQuery },
      responses: {
        200: { description: "Usage", content: { "application/json": { schema: Usage } } },
        ...errorResponses(),
      },
    }),
    async (c) => {
      const q = c.req.valid("query");
      const out = await getUsage({
        ctx: c.get("ctx"),
        input: { month: q.month, daily: q.daily, byApiKey: q.by_api_key },
      });
      return c.json(out, 200);
    },
  );
}
