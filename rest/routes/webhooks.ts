import { createRoute } from "@hono/zod-openapi";
import { removeWebhook } from "../../src/webhooks/delete.js";
import { getWebhook } from "../../src/webhooks/get.js";
import { listWebhookDeliveries } from "../../src/webhooks/list-deliveries.js";
import { putWebhook } from "../../src/webhooks/put.js";
import {
  DeliveryListSchema,
  LearningCompletedEventSchema,
  LearningFailedEventSchema,
  ListDeliveriesQuery,
  PutWebhookQuery,
  PutWebhookRequest,
  WebhookOrgQuery,
  WebhookSchema,
} from "../../src/wire/webhooks.js";
import { errorResponses, json } from "../schemas.js";
import type { App } from "../types.js";

/** The two deliveries, published under the document's `webhooks` (OpenAPI 3.1). */
function registerWebhookEvents(app: App) {
  const headers = {
    description:
      "Headers: `X-Webhook-Event` (the event name), `X-Webhook-Id` (stable per event), " +
      "`X-Webhook-Signature` (`sha256=` + hex HMAC-SHA256 of the raw body, keyed by the secret).",
  };
  for (const [name, schema] of [
    ["memory.learning.completed", LearningCompletedEventSchema],
    ["memory.learning.failed", LearningFailedEventSchema],
  ] as const) {
    app.openAPIRegistry.registerWebhook({
      method: "post",
      path: name,
      summary: `${name}: sent to the organisation's webhook URL`,
      ...headers,
      request: { body: { required: true, ...json(schema) } },
      responses: {
        200: { description: "Any 2xx acknowledges; other answers are retried, 4xx (not 408/429) are not." },
      },
    });
  }
}

export function registerWebhookRoutes(app: App) {
  registerWebhookEvents(app);
  app.openapi(
    createRoute({
      method: "put",
      path: "/v1/webhooks",
      tags: ["webhooks"],
      summary: "Create or replace the organisation's webhook",
      request: {
        query: PutWebhookQuery,
        body: { required: true, ...json(PutWebhookRequest) },
      },
      responses: {
        200: { description: "The webhook; the secret in full only when just minted", ...json(WebhookSchema) },
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
      request: { query: WebhookOrgQuery },
      responses: {
        200: { description: "The webhook", ...json(WebhookSchema) },
        ...errorResponses({ 404: ["webhook_not_found"] }),
      },
    }),
    async (c) =>
      c.json(await getWebhook({ ctx: c.get("ctx"), input: { orgId: c.req.valid("query").org_id } }), 200),
  );

  app.openapi(
    createRoute({
      method: "delete",
      path: "/v1/webhooks",
      tags: ["webhooks"],
      summary: "Remove the organisation's webhook (idempotent)",
      request: { query: WebhookOrgQuery },
      responses: {
        204: { description: "Removed (or there was none)" },
        ...errorResponses(),
      },
    }),
    async (c) => {
      await removeWebhook({ ctx: c.get("ctx"), input: { orgId: c.req.valid("query").org_id } });
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/webhooks/deliveries",
      tags: ["webhooks"],
      summary: "Recent delivery attempts, newest first",
      request: { query: ListDeliveriesQuery },
      responses: {
        200: { description: "A page of attempts", ...json(DeliveryListSchema) },
        ...errorResponses({ 422: ["invalid_limit", "cursor_mismatch"] }),
      },
    }),
    async (c) => {
      const q = c.req.valid("query");
      return c.json(await listWebhookDeliveries({ ctx: c.get("ctx"), input: q }), 200);
    },
  );
}
