import { createRoute, z } from "@hono/zod-openapi";
import { removeWebhook } from "../../src/webhooks/delete.js";
import { getWebhook } from "../../src/webhooks/get.js";
import { listWebhookDeliveries } from "../../src/webhooks/list-deliveries.js";
import { WEBHOOK_EVENTS } from "../../src/webhooks/model.js";
import { putWebhook } from "../../src/webhooks/put.js";
import { DateTime, errorResponses, Str } from "../schemas.js";
import type { App } from "../types.js";

const EventName = z.enum(WEBHOOK_EVENTS).openapi("WebhookEventName");

const Webhook = z
  .object({
    object: z.literal("webhook"),
    url: z.string(),
    events: z.array(EventName),
    enabled: z.boolean(),
    secret: z.string().openapi({
      description: "Full `whsec_` value only when freshly minted; otherwise prefix, mask and last four.",
      example: "whsec_************************a1B2",
    }),
    created_at: DateTime,
    updated_at: DateTime,
  })
  .openapi("Webhook");

const PutWebhookBody = z
  .object({
    url: Str().min(1).max(2048).openapi({ example: "https://example.com/hooks/mnemo" }),
    events: z.array(EventName).nullish().openapi({ description: "Omit or null for all events; not empty." }),
    enabled: z.boolean().optional().openapi({ description: "Default true." }),
  })
  .openapi("PutWebhook");

const queryBool = z
  .enum(["true", "false", "1", "0"])
  .optional()
  .transform((v) => v === "true" || v === "1");

const Delivery = z
  .object({
    object: z.literal("webhook_delivery"),
    id: z.string(),
    event_id: z.string().openapi({ description: "Stable per event; sent as X-Webhook-Id." }),
    event: z.string(),
    job_id: z.string().nullable(),
    url: z.string(),
    attempt: z.number().int(),
    outcome: z.enum(["delivered", "retrying", "failed"]),
    status_code: z.number().int().nullable(),
    error: z.string().nullable(),
    duration_ms: z.number().int().nullable(),
    next_attempt_at: DateTime.nullable(),
    created_at: DateTime,
  })
  .openapi("WebhookDelivery");

const DeliveryList = z
  .object({
    object: z.literal("list"),
    data: z.array(Delivery),
    has_more: z.boolean(),
    next_cursor: z.string().nullable(),
  })
  .openapi("WebhookDeliveryList");

const json = <T>(schema: T, description: string) => ({
  description,
  content: { "application/json": { schema } },
});

export function registerWebhookRoutes(app: App) {
  app.openapi(
    createRoute({
      method: "put",
      path: "/v1/webhooks",
      tags: ["webhooks"],
      summary: "Create or replace the organisation's webhook",
      request: {
        query: z.object({ rotate_secret: queryBool, org_id: z.string().optional() }),
        body: { required: true, content: { "application/json": { schema: PutWebhookBody } } },
      },
      responses: {
        200: json(Webhook, "The webhook; the secret in full only when just minted"),
        ...errorResponses({ 422: ["invalid_webhook_url", "invalid_request"] }, { body: true }),
      },
    }),
    async (c) => {
      const body = c.req.valid("json");
      const query = c.req.valid("query");
      const out = await putWebhook({
        ctx: c.get("ctx"),
        input: {
          url: body.url,
          events: body.events,
          enabled: body.enabled,
          rotateSecret: query.rotate_secret,
          orgId: query.org_id,
        },
      });
      return c.json(out, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/webhooks",
      tags: ["webhooks"],
      summary: "The organisation's webhook (secret masked)",
      responses: {
        200: json(Webhook, "The webhook"),
        ...errorResponses({ 404: ["webhook_not_found"] }),
      },
    }),
    async (c) => c.json(await getWebhook({ ctx: c.get("ctx") }), 200),
  );

  app.openapi(
    createRoute({
      method: "delete",
      path: "/v1/webhooks",
      tags: ["webhooks"],
      summary: "Remove the organisation's webhook (idempotent)",
      responses: { 204: { description: "Removed (or there was none)" }, ...errorResponses() },
    }),
    async (c) => {
      await removeWebhook({ ctx: c.get("ctx") });
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/webhooks/deliveries",
      tags: ["webhooks"],
      summary: "Recent delivery attempts, newest first",
      request: {
        query: z.object({
          limit: z.coerce.number().int().min(1).max(100).default(20),
          cursor: z.string().max(1000).optional(),
        }),
      },
      responses: {
        200: json(DeliveryList, "A page of attempts"),
        ...errorResponses({ 422: ["invalid_request", "cursor_mismatch"] }),
      },
    }),
    async (c) => {
      const q = c.req.valid("query");
      return c.json(await listWebhookDeliveries({ ctx: c.get("ctx"), input: q }), 200);
    },
  );
}
