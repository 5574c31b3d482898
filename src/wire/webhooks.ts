import { z } from "@hono/zod-openapi";
import { WEBHOOK_EVENTS } from "../webhooks/model.js";
import { DateTime, DigitsLimit, listOf, QueryBool, Str } from "./common.js";
import { IngestJobError, MemoryRefSchema, MemoryTypeSchema } from "./ingest.js";

const EventName = z.enum(WEBHOOK_EVENTS).openapi("WebhookEventName");

export const WebhookSchema = z
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
export type Webhook = z.infer<typeof WebhookSchema>;

export const PutWebhookRequest = z
  .object({
    url: Str().min(1).max(2048).openapi({ example: "https://example.com/hooks/mnemo" }),
    events: z.array(EventName).nullish().openapi({ description: "Omit or null for all events; not empty." }),
    enabled: z.boolean().optional().openapi({ description: "Default true." }),
  })
  .openapi("PutWebhook");

export const PutWebhookQuery = z.object({ rotate_secret: QueryBool, org_id: z.string().optional() }).strict();
/** GET and DELETE: an `org_id` given must be the credential's organisation (403 `org_mismatch`). */
export const WebhookOrgQuery = z.object({ org_id: z.string().optional() }).strict();

export const DeliverySchema = z
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
export type Delivery = z.infer<typeof DeliverySchema>;

export const DeliveryListSchema = listOf(DeliverySchema, "WebhookDeliveryList");
export type DeliveryList = z.infer<typeof DeliveryListSchema>;

export const ListDeliveriesQuery = z
  .object({
    limit: DigitsLimit(100).default(20),
    cursor: z.string().max(1000).optional(),
  })
  // A parameter it does not know is a 422 naming it, never dropped (as on every list).
  .strict();

const EventBase = {
  job_id: z.string().openapi({ example: "job_0123456789abcdef0123456789abcdef" }),
  conv_id: z.string().openapi({ description: "As sent at ingest." }),
  user_id: z.string().openapi({ description: "As sent at ingest." }),
  timestamp: DateTime.openapi({
    description: "When the job reached its terminal state; use it to order events.",
  }),
};

/** The body of a `memory.learning.completed` delivery. */
export const LearningCompletedEventSchema = z
  .object({
    event: z.literal("memory.learning.completed"),
    ...EventBase,
    memories: z
      .array(z.object({ id: z.string().openapi({ format: "uuid" }), type: MemoryTypeSchema }))
      .openapi({ description: "Memories the job created (empty when nothing was extracted)." }),
    memories_updated: z.array(MemoryRefSchema),
  })
  .openapi("MemoryLearningCompletedEvent");
export type LearningCompletedEvent = z.infer<typeof LearningCompletedEventSchema>;

/** The body of a `memory.learning.failed` delivery. */
export const LearningFailedEventSchema = z
  .object({ event: z.literal("memory.learning.failed"), ...EventBase, error: IngestJobError })
  .openapi("MemoryLearningFailedEvent");
export type LearningFailedEvent = z.infer<typeof LearningFailedEventSchema>;
