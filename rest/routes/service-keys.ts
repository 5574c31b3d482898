import { createRoute, z } from "@hono/zod-openapi";
import { generateServiceKey } from "../../src/service-keys/generate.js";
import { listServiceKeys } from "../../src/service-keys/list.js";
import { revokeServiceKey } from "../../src/service-keys/revoke.js";
import {
  GenerateServiceKeyRequest,
  NewServiceKeySchema,
  ServiceKeyListSchema,
} from "../../src/wire/service-keys.js";
import { errorResponses, json } from "../schemas.js";
import type { App } from "../types.js";

export function registerServiceKeyRoutes(app: App) {
  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/auth/generate-service-key",
      tags: ["auth"],
      summary: "Generate a service key (identity-provider JWT only)",
      description:
        "Send `Authorization: Bearer <IDENTITY_PROVIDER_JWT>`. The key belongs to the token's user in its " +
        "organisation; the full key appears only in this response. An API key as credential is 401.",
      security: [{ BearerAuth: [] }],
      request: {
        body: { ...json(GenerateServiceKeyRequest), required: false },
      },
      responses: {
        201: { description: "The new key", ...json(NewServiceKeySchema) },
        ...errorResponses({ 422: ["empty_name", "name_too_long"] }, { body: true }),
      },
    }),
    async (c) => {
      const body = c.req.valid("json") as z.infer<typeof GenerateServiceKeyRequest> | undefined;
      const out = await generateServiceKey({ ctx: c.get("ctx"), input: { name: body?.name ?? undefined } });
      return c.json(out, 201);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/auth/service-keys",
      tags: ["auth"],
      summary: "List the organisation's keys (masked)",
      responses: {
        200: { description: "Keys that still work", ...json(ServiceKeyListSchema) },
        ...errorResponses(),
      },
    }),
    async (c) => c.json(await listServiceKeys({ ctx: c.get("ctx") }), 200),
  );

  app.openapi(
    createRoute({
      method: "delete",
      path: "/v1/auth/service-keys/{id}",
      tags: ["auth"],
      summary: "Revoke a key",
      description: "The key is refused (401) from its very next request, on every API process.",
      request: { params: z.object({ id: z.string().min(1).max(200) }) },
      responses: { 204: { description: "Revoked" }, ...errorResponses({ 404: ["key_not_found"] }) },
    }),
    async (c) => {
      await revokeServiceKey({ ctx: c.get("ctx"), input: { id: c.req.valid("param").id } });
      return c.body(null, 204);
    },
  );
}
