import { z } from "@hono/zod-openapi";
import { Str } from "./common.js";

export const GenerateServiceKeyRequest = z
  .object({ name: Str().min(1).max(120).nullish().openapi({ example: "ci-pipeline" }) })
  .openapi("GenerateServiceKeyRequest");

export const NewServiceKeySchema = z
  .object({
    object: z.literal("service_key"),
    id: z.string(),
    key: z.string().openapi({ description: "The full key. Shown only in this response." }),
    prefix: z.string(),
    last_four: z.string(),
    org_id: z.string(),
    user_id: z.string().nullable(),
    name: z.string().nullable(),
    created_at: z.string().openapi({ format: "date-time" }),
  })
  .openapi("NewServiceKey");
export type NewServiceKey = z.infer<typeof NewServiceKeySchema>;

export const ServiceKeySchema = z
  .object({
    object: z.literal("service_key"),
    id: z.string(),
    name: z.string().nullable(),
    kind: z.enum(["api", "service"]),
    prefix: z.string(),
    last_four: z.string(),
    display: z.string().openapi({ example: "mnemo_...x9Qa" }),
    org_id: z.string(),
    user_id: z.string().nullable(),
    created_at: z.string().openapi({ format: "date-time" }),
    last_used_at: z.string().nullable().openapi({ format: "date-time" }),
  })
  .openapi("ServiceKey");
export type ServiceKey = z.infer<typeof ServiceKeySchema>;

export const ServiceKeyListSchema = z
  .object({
    object: z.literal("list"),
    data: z.array(ServiceKeySchema),
    has_more: z.boolean(),
    // The spec's list envelope (2.6); the keys come in one page, so always null.
    next_cursor: z.string().nullable(),
  })
  .openapi("ServiceKeyList");
export type ServiceKeyList = z.infer<typeof ServiceKeyListSchema>;
