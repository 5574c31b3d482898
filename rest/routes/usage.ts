import type { App } from "../types.js";

export function registerUsageRoutes(_app: App) {}
