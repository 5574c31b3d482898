import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createAdaptorServer } from "@hono/node-server";
import { Hono } from "hono";
import { registerMetricsRoute } from "../rest/routes/metrics.js";
import type { Config } from "./config.js";
import { listenOn } from "./http-server.js";
import type { Logger } from "./logger.js";
import type { Metrics } from "./metrics.js";

/**
 * The small HTTP server on MNEMO_METRICS_PORT (bound to HOST, like the API): `/metrics` and
 * `/healthz`, for processes with no API port (`mnemo worker`) or for scraping apart from the API.
 */
export async function serveMetrics(
  metrics: Metrics,
  config: Config,
  log: Logger,
): Promise<{ url: string; close(): Promise<void> }> {
  const app = new Hono();
  app.get("/healthz", (c) => c.json({ status: "ok" }));
  registerMetricsRoute(app, metrics, config.MNEMO_METRICS_TOKEN);
  const server = createAdaptorServer({ fetch: app.fetch, hostname: config.HOST }) as Server;
  await listenOn(server, config.MNEMO_METRICS_PORT ?? 0, config.HOST, "MNEMO_METRICS_PORT");
  const addr = server.address() as AddressInfo;
  const host = addr.family === "IPv6" ? `[${addr.address}]` : addr.address;
  const url = `http://${host}:${addr.port}`;
  log.info({ metricsUrl: url }, "metrics listening");
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
