import type { App } from "../types.js";

export function registerMemoryRoutes(_app: App) {}
