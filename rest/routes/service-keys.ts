import type { App } from "../types.js";

export function registerServiceKeyRoutes(_app: App) {}
