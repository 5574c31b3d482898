import type { App } from "../types.js";

export function registerIngestRoutes(_app: App) {}
