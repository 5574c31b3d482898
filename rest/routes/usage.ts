import { createRoute } from "@hono/zod-openapi";
import { getUsage } from "../../src/usage/get.js";
import { UsageQuery, UsageSchema } from "../../src/wire/usage.js";
import { errorResponses, json } from "../schemas.js";
import type { App } from "../types.js";

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
        200: { description: "Usage", ...json(UsageSchema) },
        ...errorResponses({ 422: ["invalid_month"] }),
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
