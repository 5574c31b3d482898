import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Ctx, Deps, Principal } from "../src/context.js";
import type { Logger } from "../src/logger.js";

export interface AppEnv {
  Variables: {
    deps: Deps;
    requestId: string;
    log: Logger;
    principal: Principal;
    /** The core context for this request; set by the auth middleware on /v1 routes. */
    ctx: Ctx;
    /** The route template a refusal (404, 405) answered for, over Hono's own match (rest/app.ts). */
    route?: string;
  };
}

export type App = OpenAPIHono<AppEnv>;
