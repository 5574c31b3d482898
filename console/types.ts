import type { Hono } from "hono";
import type { AppEnv } from "../rest/types.js";

export interface ConsoleEnv {
  Variables: AppEnv["Variables"] & {
    /** The session's form token (CSRF), put in every state-changing form. */
    csrf: string;
    /** The versioned asset paths (cache-busting), for the layout. */
    assets: Assets;
  };
}

export interface Assets {
  css: string;
  htmx: string;
}

export type ConsoleApp = Hono<ConsoleEnv>;
