import type { PgBoss } from "pg-boss";
import { bossListen, queueFor, startBoss } from "../jobs/boss.js";
import { startWorkers } from "../jobs/workers.js";
import { mcpHttpMount } from "../mcp/http.js";
import { createApp } from "../rest/app.js";
import type { App } from "../rest/types.js";
import { bootstrap, undoFirstStart } from "./auth/bootstrap.js";
import type { Config } from "./config.js";
import type { Deps } from "./context.js";
import { analyzeIfStale } from "./db/analyze.js";
import { migrate } from "./db/migrate.js";
import { durabilityWarning, type OpenedDatabase, openDatabase, StartupError } from "./db/open.js";
import { type HttpServer, startHttpServer } from "./http-server.js";
import { relayFinishedJobs, signalStopping } from "./ingest/signals.js";
import type { Logger } from "./logger.js";
import { createMetrics, instrumentProviders } from "./metrics.js";
import { serveMetrics } from "./metrics-server.js";
import { createProviders } from "./providers/index.js";
import { warmConcepts } from "./providers/local/concepts.js";
import { keyMismatch, loadServerSecret } from "./secret.js";

export interface Runtime {
  deps: Deps;
  boss: PgBoss;
  app?: App;
  /** Base URL of the HTTP server when the API role runs. */
  url?: string;
  /** Base URL of the separate metrics server (MNEMO_METRICS_PORT). */
  metricsUrl?: string;
  /** A key minted on first start, to be shown once. */
  createdKey?: string;
  /**
   * Stops: new requests refused, in-flight ones given the shutdown time-out, then the workers and
   * the database. `inFlight` waits for the requests of a surface outside this runtime (MCP over
   * stdio) until the deadline (epoch ms) it is given, as the HTTP server's are.
   */
  stop(inFlight?: (deadline: number) => Promise<void>): Promise<void>;
}

/**
 * Builds everything from configuration: database (migrated), providers, queue, then the roles
 * asked for. `api` serves HTTP; `worker` drains the queues. Both by default.
 */
export async function startRuntime(
  config: Config,
  log: Logger,
  roles: { api: boolean; worker: boolean },
  options: { opened?: OpenedDatabase; listen?: boolean; bootstrap?: boolean } = {},
): Promise<Runtime> {
  // Checked before the database opens (a first start would create and migrate it for nothing).
  if (
    roles.api &&
    options.listen !== false &&
    config.PORT !== 0 &&
    config.MNEMO_METRICS_PORT === config.PORT
  ) {
    throw new StartupError(
      `MNEMO_METRICS_PORT equals PORT (${config.PORT}), where the API listens and already serves /metrics: set another port or unset it`,
    );
  }
  if (config.MNEMO_WEBHOOK_ALLOW_PRIVATE) {
    log.warn(
      "UNSAFE: MNEMO_WEBHOOK_ALLOW_PRIVATE=true lets webhooks use http:// and private, loopback and " +
        "link-local addresses. Use it for local development only.",
    );
  }
  const opened = options.opened ?? (await openDatabase(config, log));
  const { db } = opened;
  // What has started, stopped in reverse if a later step fails (a port in use): a half-started
  // runtime must not keep the process alive, polling a database that was closed under it.
  const started: (() => Promise<unknown>)[] = [];
  try {
    const providers = createProviders(config);
    const { applied, newer } = await migrate(db, {
      embeddingDim: config.MNEMO_EMBEDDING_DIM,
      embedder: providers.embedder.name,
    });
    if (applied.length) log.info({ applied }, "migrations applied");
    if (newer.length)
      log.warn(
        { newer },
        "the database was migrated by a newer version of Mnemo than this one: finish the upgrade (run the newer version on every process); this one may fail against its schema",
      );
    // Only a process serving the API (or `mnemo mcp`, which serves its client itself) makes a first
    // key and prints it, where an operator looks for it and with a URL that answers; a worker-only
    // process leaves that to the first API start, and only makes sure of a key the operator set
    // (MNEMO_BOOTSTRAP_API_KEY: nothing to print).
    const { createdKey, bootstrapKeyRevoked }: Awaited<ReturnType<typeof bootstrap>> =
      (options.bootstrap ?? (roles.api || config.MNEMO_BOOTSTRAP_API_KEY !== undefined))
        ? await bootstrap(db, config.MNEMO_BOOTSTRAP_API_KEY)
        : {};
    if (createdKey) started.push(() => undoFirstStart(db, createdKey));
    if (bootstrapKeyRevoked)
      log.warn(
        "MNEMO_BOOTSTRAP_API_KEY names a key that was revoked: it stays revoked; unset the variable or set a new key",
      );
    if (opened.kind === "embedded") {
      // Statistics the embedded database may lack (no autovacuum there; see analyzeIfStale).
      analyzeIfStale(db).catch((err: unknown) => log.warn({ err }, "analyze at start failed"));
    }
    if (opened.kind === "external") {
      const risk = await durabilityWarning(db);
      if (risk) log.warn(risk);
    }
    const secret = await loadServerSecret(db, config.MNEMO_SECRET_KEY);
    if (secret.source === "database" && opened.kind === "external") {
      log.warn("MNEMO_SECRET_KEY is not set: using a key stored in the database; set it in production");
    }
    const mismatch = await keyMismatch(db, secret);
    if (mismatch) log.warn({ event: "server_key_mismatch" }, mismatch);
    const boss = await startBoss(opened.connectionString, log, {
      schedule: roles.worker,
      listen: config.MNEMO_LISTEN_NOTIFY,
    });
    started.push(() => boss.stop({ graceful: false }));
    const metrics = createMetrics();
    metrics.watchPool(db.pool);
    metrics.watchQueues(boss);
    const deps: Deps = {
      config,
      db,
      requestDb: db.withQueryTimeout(config.MNEMO_DB_QUERY_TIMEOUT_MS),
      log,
      metrics,
      providers: instrumentProviders(providers, metrics),
      queue: queueFor(boss),
      secret: secret.key,
    };
    if (roles.worker) {
      // WordNet, read by every memory write (src/memories/write.ts): now, not in the first job.
      const t = performance.now();
      warmConcepts();
      log.info({ ms: Math.round(performance.now() - t) }, "WordNet read");
      await startWorkers(deps, boss);
    }
    // wait=true holds end when any process finishes their job (LISTEN/NOTIFY), polling as fallback.
    const listen = config.MNEMO_LISTEN_NOTIFY && roles.api ? bossListen(boss) : undefined;
    const relay = listen
      ? await relayFinishedJobs(deps, listen).catch((err: Error) => {
          log.warn({ err }, "cannot LISTEN for finished jobs; wait=true falls back to polling");
          return undefined;
        })
      : undefined;
    if (relay) started.push(() => relay.close());

    let http: HttpServer | undefined;
    let app: App | undefined;
    if (roles.api) app = createApp(deps, { mounts: { "/mcp": mcpHttpMount(deps) } });
    if (app && options.listen !== false) {
      http = await startHttpServer(app, config, log);
      const server = http;
      started.push(() => server.drain(Date.now()));
      log.info({ url: http.url, roles }, "listening");
    }
    // A worker-only process has no API port: MNEMO_METRICS_PORT gives it /metrics and /healthz.
    const metricsServer =
      config.MNEMO_METRICS_PORT !== undefined && options.listen !== false
        ? await serveMetrics(metrics, config, log)
        : undefined;

    let stopping: Promise<void> | undefined;
    const stop = (inFlight?: (deadline: number) => Promise<void>) =>
      (stopping ??= (async () => {
        // New requests are refused at once; in-flight ones (a `wait=true` hold answers early
        // with its job pending) and running jobs get the shutdown time-out; then the database.
        const deadline = Date.now() + config.MNEMO_SHUTDOWN_TIMEOUT_MS;
        signalStopping(deps, deadline - Math.min(1000, config.MNEMO_SHUTDOWN_TIMEOUT_MS / 5));
        await http?.drain(deadline);
        await inFlight?.(deadline);
        await metricsServer?.close();
        await relay?.close();
        await boss.stop({ graceful: true, timeout: Math.max(100, deadline - Date.now()) });
        await db.close();
        log.info("stopped");
      })());

    return {
      deps,
      boss,
      ...(app ? { app } : {}),
      ...(http ? { url: http.url } : {}),
      ...(metricsServer ? { metricsUrl: metricsServer.url } : {}),
      ...(createdKey ? { createdKey } : {}),
      stop,
    };
  } catch (err) {
    for (const stop of started.reverse()) await stop().catch(() => {});
    await db.close().catch(() => {});
    throw err;
  }
}
