import type { App } from "../types.js";

export function registerGroupRoutes(_app: App) {}
