import type { App } from "../types.js";

export function registerWebhookRoutes(_app: App) {}
