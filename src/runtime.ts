import type { AddressInfo } from "node:net";
import { type ServerType, serve } from "@hono/node-server";
import type { PgBoss } from "pg-boss";
import { queueFor, startBoss } from "../jobs/boss.js";
import { startWorkers } from "../jobs/workers.js";
import { createApp } from "../rest/app.js";
import type { App } from "../rest/types.js";
import { bootstrap } from "./auth/bootstrap.js";
import type { Config } from "./config.js";
import type { Deps } from "./context.js";
import { migrate } from "./db/migrate.js";
import { type OpenedDatabase, openDatabase } from "./db/open.js";
import type { Logger } from "./logger.js";
import { createProviders } from "./providers/index.js";
import { loadServerSecret } from "./secret.js";

export interface Runtime {
  deps: Deps;
  boss: PgBoss;
  app?: App;
  /** Base URL of the HTTP server when the API role runs. */
  url?: string;
  /** A key minted on first start, to be shown once. */
  createdKey?: string;
  stop(): Promise<void>;
}

/**
 * Builds everything from configuration: database (migrated), providers, queue, then the roles
 * asked for. `api` serves HTTP; `worker` drains the queues. Both by default.
 */
export async function startRuntime(
  config: Config,
  log: Logger,
  roles: { api: boolean; worker: boolean },
  options: { opened?: OpenedDatabase; listen?: boolean } = {},
): Promise<Runtime> {
  if (config.MNEMO_WEBHOOK_ALLOW_PRIVATE) {
    log.warn(
      "UNSAFE: MNEMO_WEBHOOK_ALLOW_PRIVATE=true lets webhooks use http:// and private, loopback and " +
        "link-local addresses. Use it for local development only.",
    );
  }
  const opened = options.opened ?? (await openDatabase(config, log));
  const { db } = opened;
  try {
    const { applied } = await migrate(db, { embeddingDim: config.MNEMO_EMBEDDING_DIM });
    if (applied.length) log.info({ applied }, "migrations applied");
    const { createdKey } = await bootstrap(db, config.MNEMO_BOOTSTRAP_API_KEY);
    const secret = await loadServerSecret(db, config.MNEMO_SECRET_KEY);
    if (secret.source === "database" && opened.kind === "external") {
      log.warn("MNEMO_SECRET_KEY is not set: using a key stored in the database; set it in production");
    }
    const boss = await startBoss(opened.connectionString, log, { schedule: roles.worker });
    const deps: Deps = {
      config,
      db,
      log,
      providers: createProviders(config),
      queue: queueFor(boss),
      secret: secret.key,
    };
    if (roles.worker) await startWorkers(deps, boss);

    let server: ServerType | undefined;
    let app: App | undefined;
    let url: string | undefined;
    if (roles.api) app = createApp(deps);
    if (app && options.listen !== false) {
      const a = app;
      server = await new Promise<ServerType>((resolve) => {
        const s = serve({ fetch: a.fetch, port: config.PORT, hostname: config.HOST }, () => resolve(s));
      });
      const addr = server.address() as AddressInfo;
      const host = addr.family === "IPv6" ? `[${addr.address}]` : addr.address;
      url = `http://${host}:${addr.port}`;
      log.info({ url, roles }, "listening");
    }

    let stopping: Promise<void> | undefined;
    const stop = () =>
      (stopping ??= (async () => {
        // Stop taking requests and let in-flight ones finish, then the workers, then the database.
        if (server) {
          const s = server;
          await new Promise<void>((resolve) => {
            s.close(() => resolve());
            // Idle keep-alive sockets would hold close() open; in-flight requests still finish.
            (s as unknown as { closeIdleConnections?: () => void }).closeIdleConnections?.();
          });
        }
        await boss.stop({ graceful: true, timeout: config.MNEMO_SHUTDOWN_TIMEOUT_MS });
        await db.close();
        log.info("stopped");
      })());

    return {
      deps,
      boss,
      ...(app ? { app } : {}),
      ...(url ? { url } : {}),
      ...(createdKey ? { createdKey } : {}),
      stop,
    };
  } catch (err) {
    await db.close().catch(() => {});
    throw err;
  }
}
