import type { App } from "../types.js";

export function registerSearchRoutes(_app: App) {}
