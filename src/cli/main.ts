import { parseArgs } from "node:util";
import { runStdio } from "../../mcp/stdio.js";
import { createKey, createOrg, listKeys, revokeKey } from "../admin/orgs.js";
import { ConfigError, loadConfig } from "../config.js";
import { migrate } from "../db/migrate.js";
import { openDatabase, StartupError } from "../db/open.js";
import { CoreError } from "../errors.js";
import { createLogger, type Logger } from "../logger.js";
import { startRuntime } from "../runtime.js";

const USAGE = `mnemo: long-term memory service for AI agents

Usage:
  mnemo [serve]      API and background workers in one process (default)
  mnemo api          API only
  mnemo worker       background workers only
  mnemo mcp          MCP server over stdio
  mnemo admin ...    operator commands:
      create-org --name NAME [--tier TIER] [--json]
      create-key --org ORG_ID [--name NAME] [--user USER_ID] [--json]
      list-keys --org ORG_ID [--json]
      revoke-key KEY_ID [--json]

Configuration is read from the environment; see the README.`;

async function main(argv: string[]): Promise<number> {
  const [command = "serve", ...rest] = argv;
  if (command === "help" || command === "--help" || command === "-h") {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const config = loadConfig();
  const stdioMode = command === "mcp" || command === "admin";
  const log = createLogger({
    level: stdioMode ? "warn" : config.LOG_LEVEL,
    stream: stdioMode ? "stderr" : "stdout",
  });

  switch (command) {
    case "serve":
    case "api":
    case "worker":
      return serveRoles(config, log, { api: command !== "worker", worker: command !== "api" });
    case "mcp":
      await runStdio(config);
      return 0;
    case "admin":
      return admin(config, log, rest);
    default:
      process.stderr.write(`unknown command '${command}'\n\n${USAGE}\n`);
      return 2;
  }
}

async function serveRoles(
  config: ReturnType<typeof loadConfig>,
  log: Logger,
  roles: { api: boolean; worker: boolean },
) {
  const rt = await startRuntime(config, log, roles);
  if (rt.createdKey) {
    const url = rt.url ?? `http://${config.HOST}:${config.PORT}`;
    process.stdout.write(
      `\nFirst start: created organisation 'default' and this API key (shown once, keep it):\n\n  ${rt.createdKey}\n\n` +
        `Try it:\n  curl -s -H "x-api-key: ${rt.createdKey}" ${url}/v1/groups\n\n`,
    );
  }
  log.info({ roles }, "ready");
  await new Promise<void>((resolve) => {
    const onSignal = (sig: string) => {
      log.info({ signal: sig }, "shutting down");
      resolve();
    };
    process.once("SIGTERM", () => onSignal("SIGTERM"));
    process.once("SIGINT", () => onSignal("SIGINT"));
  });
  await rt.stop();
  return 0;
}

async function admin(config: ReturnType<typeof loadConfig>, log: Logger, argv: string[]): Promise<number> {
  const [sub, ...args] = argv;
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      name: { type: "string" },
      org: { type: "string" },
      tier: { type: "string" },
      user: { type: "string" },
      json: { type: "boolean", default: false },
    },
  });
  const need = (v: string | undefined, flag: string) => {
    if (!v) throw new CoreError("invalid_request", `admin ${sub}: ${flag} is required`);
    return v;
  };
  const { db } = await openDatabase(config, log);
  try {
    await migrate(db, { embeddingDim: config.MNEMO_EMBEDDING_DIM });
    let out: unknown;
    switch (sub) {
      case "create-org":
        out = await createOrg(db, {
          name: need(values.name, "--name"),
          ...(values.tier ? { tier: values.tier } : {}),
        });
        break;
      case "create-key":
        out = await createKey(db, {
          orgId: need(values.org, "--org"),
          ...(values.name ? { name: values.name } : {}),
          ...(values.user ? { userId: values.user } : {}),
        });
        break;
      case "list-keys":
        out = await listKeys(db, need(values.org, "--org"));
        break;
      case "revoke-key":
        out = await revokeKey(db, need(positionals[0], "KEY_ID"));
        break;
      default:
        process.stderr.write(`unknown admin command '${sub ?? ""}'\n\n${USAGE}\n`);
        return 2;
    }
    if (values.json) process.stdout.write(`${JSON.stringify(out)}\n`);
    else process.stdout.write(`${formatHuman(out)}\n`);
    return 0;
  } finally {
    await db.close();
  }
}

function formatHuman(out: unknown): string {
  if (Array.isArray(out)) {
    if (out.length === 0) return "(none)";
    return out
      .map((o) =>
        Object.entries(o as object)
          .map(([k, v]) => `${k}: ${v ?? "-"}`)
          .join("  "),
      )
      .join("\n");
  }
  return Object.entries(out as object)
    .map(([k, v]) => `${k}: ${v ?? "-"}`)
    .join("\n");
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    if (err instanceof ConfigError || err instanceof StartupError)
      process.stderr.write(`mnemo: ${err.message}\n`);
    else if (err instanceof CoreError) process.stderr.write(`mnemo: ${err.code}: ${err.message}\n`);
    else process.stderr.write(`mnemo: ${(err as Error)?.stack ?? String(err)}\n`);
    process.exitCode = 1;
  },
);
