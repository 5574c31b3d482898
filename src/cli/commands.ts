import { existsSync } from "node:fs";
import readline from "node:readline";
import { parseArgs } from "node:util";
import { runStdio } from "../../mcp/stdio.js";
import { exportOrg } from "../admin/export.js";
import { importOrg } from "../admin/import.js";
import { migrateTo, targetProblem } from "../admin/migrate-to.js";
import { createKey, createOrg, linkOrg, listKeys, revokeKey } from "../admin/orgs.js";
import { progress } from "../admin/progress.js";
import { memoriesToEmbed, reembedAll, reembedBlocker } from "../admin/reembed.js";
import { reindexOrgText } from "../admin/reindex.js";
import { DEFAULT_ORG_ID } from "../auth/bootstrap.js";
import { ConfigError, loadConfig } from "../config.js";
import { migrate } from "../db/migrate.js";
import { openDatabase, StartupError } from "../db/open.js";
import { countMemories } from "../db/transfer.js";
import { CoreError } from "../errors.js";
import { createLogger, type Logger } from "../logger.js";
import { createProviders } from "../providers/index.js";
import { providerFailure } from "../providers/openai.js";
import { startRuntime } from "../runtime.js";
import { loadServerSecret } from "../secret.js";
import { takeHeldSignals } from "./early-signals.js";

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
      link-org --org ORG_ID [--unlink] [--json]   let identity-provider tokens enter ORG_ID
      export --org ORG_ID [--user USER_ID] > org.jsonl
      import --org ORG_ID [--format mnemo|mem0] [--json] < org.jsonl
      reindex-text --org ORG_ID [--json]   derive the full-text columns again (after replacing mnemo_memory_tsv)
      reembed [--json]   make every vector again with the configured embedder (after changing the embedding model)
      migrate-to --target postgres://... [--json]   (embedded data directory -> PostgreSQL)

Configuration is read from the environment; see the README.`;

async function main(argv: string[]): Promise<number> {
  const [command = "serve", ...rest] = argv;
  // A command that does not stop gracefully (help, admin, a wrong use) ends on a signal as any
  // process does; one held while the modules loaded ends it now.
  const graceful = ["serve", "api", "worker", "mcp"].includes(command) && argv.length <= 1;
  if (!graceful) {
    const [early] = takeHeldSignals();
    if (early) process.kill(process.pid, early);
  }
  if (command === "help" || command === "--help" || command === "-h") {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (!COMMANDS.has(command)) {
    // One line, before any configuration is read (as admin's wrong use, below).
    process.stderr.write(`mnemo: unknown command '${command}'; \`help\` lists the commands\n`);
    return 2;
  }
  if (command === "admin") {
    const code = adminUsage(rest);
    if (code !== undefined) return code;
  } else if (rest.length) {
    // The roles take no arguments: `serve --help` started a server (and created a data
    // directory), `serve --port 9000` one on 8080.
    if (rest.length === 1 && ["help", "--help", "-h"].includes(rest[0]!)) {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    process.stderr.write(
      `mnemo: ${command} takes no arguments (got '${rest[0]}'); configuration is read from the environment, see the README\n`,
    );
    return 2;
  }
  const config = loadConfig();
  const stdioMode = command === "mcp" || command === "admin";
  const log = createLogger({
    level: command === "admin" ? "warn" : config.LOG_LEVEL,
    stream: stdioMode ? "stderr" : "stdout",
    format: config.LOG_FORMAT,
  });

  switch (command) {
    case "serve":
    case "api":
    case "worker":
      return serveRoles(config, log, { api: command !== "worker", worker: command !== "api" });
    case "mcp":
      // The stop signals are handled from the start, as serveRoles does.
      await runStdio(config, log, untilStopSignal(log, config.MNEMO_SHUTDOWN_TIMEOUT_MS + 15_000));
      return 0;
    default:
      return admin(config, log, rest);
  }
}

async function serveRoles(
  config: ReturnType<typeof loadConfig>,
  log: Logger,
  roles: { api: boolean; worker: boolean },
) {
  // Listening for the stop signals from the start: a SIGTERM while the database opened or the
  // migrations ran killed the process (exit 143), leaving its lock files behind. One received
  // then stops the service as soon as it has started.
  const stopped = untilStopSignal(log, config.MNEMO_SHUTDOWN_TIMEOUT_MS + 15_000);
  const rt = await startRuntime(config, log, roles);
  if (rt.createdKey) {
    const url = rt.url ?? `http://${config.HOST}:${config.PORT}`;
    process.stdout.write(
      `\nFirst start: created organisation 'default' (id ${DEFAULT_ORG_ID}, for admin commands' --org) and this API key (shown once, keep it):\n\n  ${rt.createdKey}\n\n` +
        `Try it:\n  curl -s -H "x-api-key: ${rt.createdKey}" ${url}/v1/groups\n\n`,
    );
  }
  log.info({ roles }, "ready");
  await stopped;
  await rt.stop();
  log.flush();
  // Handles nobody owns (a keep-alive agent, a stray timer) must not keep a stopped server alive.
  setTimeout(() => process.exit(0), 200).unref();
  return 0;
}

/**
 * Resolves on the first stop signal (SIGTERM, SIGINT, SIGHUP), and ends the process (exit 1) if it
 * is still running `deadlineMs` later. Every signal is handled (a second
 * SIGTERM, from a process manager and from npm forwarding the same one, must not cut the graceful
 * stop short): the first starts the stop, later ones are noted.
 */
function untilStopSignal(log: Logger, deadlineMs: number): Promise<void> {
  return new Promise<void>((resolve) => {
    let received = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (received) {
        log.info({ signal }, "already shutting down");
        return;
      }
      received = true;
      log.info({ signal }, "shutting down");
      // A start or a stop that hangs past the stop's time-out (and a margin) must still end the
      // process.
      setTimeout(() => {
        log.error("shutdown did not finish in time; exiting");
        process.exit(1);
      }, deadlineMs).unref();
      resolve();
    };
    process.on("SIGTERM", onSignal);
    process.on("SIGINT", onSignal);
    process.on("SIGHUP", onSignal);
    // The signals that came while the modules loaded (src/cli/main.ts), in order.
    for (const signal of takeHeldSignals()) onSignal(signal);
    // Under an npm script (`npm start`), SIGTERM sent to npm alone ends npm and its shell but
    // does not reach this process, which went on serving, orphaned. The parent's going (this
    // process handed to another) counts as that SIGTERM. Only under npm: a server started in the
    // background of a shell that then exits must keep running.
    if (process.env.npm_lifecycle_event) {
      const parent = process.ppid;
      const watch = setInterval(() => {
        if (process.ppid === parent) return;
        clearInterval(watch);
        log.info({ parent }, "the npm process that started this one is gone");
        onSignal("SIGTERM");
      }, 250);
      watch.unref();
    }
  });
}

const COMMANDS = new Set(["serve", "api", "worker", "mcp", "admin"]);

/**
 * Wrong use of `admin` (help asked for, an unknown subcommand, a missing, empty or blank option
 * value, an option given twice, an unknown option, a --target of another scheme) is answered before any configuration is read or database opened: a typo must not
 * migrate a production database, nor create a data directory. Returns the exit code, or
 * undefined when the command is to run.
 */
function adminUsage(argv: string[]): number | undefined {
  const [sub, ...args] = argv;
  if (sub === "help" || sub === "--help" || sub === "-h") {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (sub === undefined || !Object.hasOwn(ADMIN_OPTIONS, sub)) {
    process.stderr.write(
      sub === undefined
        ? "mnemo: admin needs a command; `admin help` lists them\n"
        : `mnemo: unknown admin command '${sub}'; \`admin help\` lists them\n`,
    );
    return 2;
  }
  let parsed: ReturnType<typeof parseAdminArgs>;
  try {
    parsed = parseAdminArgs(args);
  } catch (err) {
    // One line: node's message without its stack (ERR_PARSE_ARGS_*).
    process.stderr.write(`mnemo: admin ${sub}: ${(err as Error).message.split("\n")[0]}\n`);
    return 2;
  }
  const { values, positionals, tokens } = parsed;
  // An option another command takes is refused too: `import --user` would import every user's.
  const given = args.filter((a) => a.startsWith("--")).map((a) => a.slice(2).split("=")[0]!);
  const foreign = given.find((o) => !ADMIN_OPTIONS[sub]!.includes(o));
  if (foreign) {
    process.stderr.write(
      `mnemo: admin ${sub}: --${foreign} is not an option of ${sub}; \`admin help\` lists them\n`,
    );
    return 2;
  }
  // parseArgs keeps the last of a repeated option (`import --org A --org B` wrote into B), and an
  // empty value is a value (`create-key --user ""` made an organisation-wide key, `export --user ""`
  // an empty file): both are refused, as is a value of spaces only.
  const seen = new Set<string>();
  for (const t of tokens) {
    if (t.kind !== "option") continue;
    const wrong = seen.has(t.name)
      ? `--${t.name} is given more than once`
      : t.value !== undefined && !t.value.trim()
        ? `--${t.name} must not be empty or blank`
        : undefined;
    if (wrong) {
      process.stderr.write(`mnemo: admin ${sub}: ${wrong}\n`);
      return 2;
    }
    seen.add(t.name);
  }
  const missing = (ADMIN_REQUIRED[sub] ?? []).find((what) =>
    what.startsWith("--") ? !values[what.slice(2) as keyof typeof values] : !positionals[0]?.trim(),
  );
  if (missing) {
    process.stderr.write(`mnemo: admin ${sub}: ${missing} is required\n`);
    return 2;
  }
  // Only revoke-key takes an argument, and one: anything else is a mistyped option or value.
  const allowed = (ADMIN_REQUIRED[sub] ?? []).filter((what) => !what.startsWith("--")).length;
  const extra = positionals[allowed];
  if (extra !== undefined) {
    process.stderr.write(`mnemo: admin ${sub}: unexpected argument '${extra}'; \`admin help\` lists them\n`);
    return 2;
  }
  if (sub === "import" && values.format !== "mnemo" && values.format !== "mem0") {
    process.stderr.write(`mnemo: admin import: --format is mnemo or mem0\n`);
    return 2;
  }
  const target = sub === "migrate-to" ? targetProblem(values.target!) : undefined;
  if (target) {
    process.stderr.write(`mnemo: admin migrate-to: ${target}\n`);
    return 2;
  }
  return undefined;
}

/** The admin commands, each with the options it takes (the usage text's). */
const ADMIN_OPTIONS: Record<string, string[]> = {
  "create-org": ["name", "tier", "json"],
  "create-key": ["org", "name", "user", "json"],
  "list-keys": ["org", "json"],
  "revoke-key": ["json"],
  "link-org": ["org", "unlink", "json"],
  export: ["org", "user"],
  import: ["org", "format", "json"],
  "reindex-text": ["org", "json"],
  reembed: ["json"],
  "migrate-to": ["target", "json"],
};

/** What each admin command cannot run without (an option, or the one positional argument). */
const ADMIN_REQUIRED: Record<string, string[]> = {
  "create-org": ["--name"],
  "create-key": ["--org"],
  "list-keys": ["--org"],
  "revoke-key": ["KEY_ID"],
  "link-org": ["--org"],
  export: ["--org"],
  import: ["--org"],
  "reindex-text": ["--org"],
  "migrate-to": ["--target"],
};

const parseAdminArgs = (args: string[]) =>
  parseArgs({
    args,
    allowPositionals: true,
    tokens: true,
    options: {
      name: { type: "string" },
      org: { type: "string" },
      tier: { type: "string" },
      user: { type: "string" },
      format: { type: "string", default: "mnemo" },
      target: { type: "string" },
      json: { type: "boolean", default: false },
      unlink: { type: "boolean", default: false },
    },
  });

async function admin(config: ReturnType<typeof loadConfig>, log: Logger, argv: string[]): Promise<number> {
  const [sub, ...args] = argv;
  const { values, positionals } = parseAdminArgs(args);
  // adminUsage refused a missing one before the database was opened.
  const need = (v: string | undefined, flag: string) => {
    if (!v) throw new CoreError("invalid_request", `admin ${sub}: ${flag} is required`);
    return v;
  };
  if (sub === "migrate-to") {
    const report = await migrateTo(config, log, { target: need(values.target, "--target") });
    process.stdout.write(values.json ? `${JSON.stringify(report)}\n` : `${report.instructions}\n`);
    return 0;
  }
  // A data directory that does not exist is a mistyped MNEMO_DATA_DIR, not one to create: the
  // command made and migrated a new database there, then said the organisation did not exist.
  // (An existing empty directory is a new database on purpose.)
  if (!config.DATABASE_URL && !existsSync(config.MNEMO_DATA_DIR)) {
    throw new StartupError(
      `no data directory at ${config.MNEMO_DATA_DIR} (MNEMO_DATA_DIR): set it to the server's, ` +
        "or start the server once (or create the directory) to make a new one",
    );
  }
  const opened = await openDatabase(config, log, { transient: true });
  const { db, kind } = opened;
  try {
    const embedder = createProviders(config).embedder;
    // The commands that make or label vectors need the database's embedder (src/db/migrate.ts);
    // the others (a key, an organisation) run whatever model the shell has configured.
    await migrate(db, {
      embeddingDim: config.MNEMO_EMBEDDING_DIM,
      ...(sub === "export" || sub === "import" ? { embedder: embedder.name } : {}),
      reembedding: sub === "reembed",
    });
    let out: unknown;
    switch (sub) {
      case "export": {
        // A reader that goes away (`| head`) ends the export with one line, not a stack trace.
        process.stdout.on("error", (err: NodeJS.ErrnoException) => {
          if (err.code !== "EPIPE") throw err;
          process.stderr.write(
            "mnemo: admin export: the output was closed before the end; the export is incomplete\n",
          );
          process.exit(1);
        });
        let bar: ReturnType<typeof progress> | undefined;
        const done = await exportOrg(
          db,
          embedder,
          // Beside a server that owns the embedded database, a snapshot would hold its one session.
          { orgId: need(values.org, "--org"), userId: values.user, paged: kind === "attached" },
          writeLine,
          (total) => {
            bar = progress("export: memories", total);
            return (n) => bar?.add(n);
          },
        );
        bar?.done(`(${done.groups} groups${done.webhook ? ", webhook" : ""})`);
        return 0;
      }
      case "import": {
        const format = values.format;
        if (format !== "mnemo" && format !== "mem0")
          throw new CoreError("invalid_request", "admin import: --format is mnemo or mem0");
        const { key } = await loadServerSecret(db, config.MNEMO_SECRET_KEY);
        const bar = progress("import: lines");
        let read = false;
        const allRead = () => {
          if (!read) bar.done();
          read = true;
        };
        const report = await importOrg(
          { db, embedder, secret: key, config },
          { orgId: need(values.org, "--org"), format },
          stdinLines(),
          () => bar.add(),
          (stage) => {
            allRead();
            process.stderr.write(`import: ${stage}\n`);
          },
        );
        allRead();
        for (const b of report.bad) process.stderr.write(`line ${b.line}: ${b.error}\n`);
        if (report.webhookSecret)
          process.stderr.write(
            `webhook imported with a NEW signing secret (exports never carry one); give it to the receiver:\n  ${report.webhookSecret}\n`,
          );
        const { webhookSecret: _secret, bad, ...summary } = report;
        process.stdout.write(
          values.json
            ? `${JSON.stringify({ ...summary, bad })}\n`
            : `${formatHuman({ ...summary, bad: bad.length })}\n`,
        );
        return bad.length ? 1 : 0;
      }
      case "reembed": {
        const blocked = await reembedBlocker(db, opened);
        if (blocked) {
          process.stderr.write(`mnemo: admin reembed: ${blocked}\n`);
          return 1;
        }
        const bar = progress("reembed: memories", await memoriesToEmbed(db, embedder));
        out = await reembedAll(db, embedder, (n) => bar.add(n));
        bar.done();
        break;
      }
      case "reindex-text": {
        const orgId = need(values.org, "--org");
        const bar = progress("reindex-text: memories", await countMemories(db, orgId, null));
        out = await reindexOrgText(db, orgId, (n) => bar.add(n));
        bar.done();
        break;
      }
      case "create-org":
        out = await createOrg(db, { name: need(values.name, "--name"), tier: values.tier });
        break;
      case "create-key":
        out = await createKey(db, {
          orgId: need(values.org, "--org"),
          name: values.name,
          userId: values.user,
        });
        break;
      case "list-keys":
        out = await listKeys(db, need(values.org, "--org"));
        break;
      case "revoke-key":
        out = await revokeKey(db, need(positionals[0], "KEY_ID"));
        break;
      case "link-org":
        out = await linkOrg(db, { orgId: need(values.org, "--org"), linked: !values.unlink });
        break;
      default:
        // adminUsage answered it before the database was opened.
        process.stderr.write(`mnemo: unknown admin command '${sub ?? ""}'; \`admin help\` lists them\n`);
        return 2;
    }
    if (values.json) process.stdout.write(`${JSON.stringify(out)}\n`);
    else process.stdout.write(`${formatHuman(out)}\n`);
    return 0;
  } catch (err) {
    // A model that failed (reembed, import, export embed with it) is said in one line, as the
    // other admin errors are, not with a stack trace.
    const model = providerFailure(err);
    if (!model) throw err;
    process.stderr.write(`mnemo: admin ${sub}: ${model.message}\n`);
    return 1;
  } finally {
    await db.close();
  }
}

/**
 * stdin line by line. The readline interface is made only when the import starts iterating: lines
 * it reads before anyone iterates are dropped (and its close with them, leaving a for-await hung).
 */
async function* stdinLines(): AsyncGenerator<string> {
  yield* readline.createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY });
}

/** One line to stdout, waiting when the pipe is full (an export can be larger than memory). */
function writeLine(line: string): Promise<void> {
  return new Promise((resolve) => {
    if (process.stdout.write(`${line}\n`)) resolve();
    else process.stdout.once("drain", () => resolve());
  });
}

function formatHuman(out: unknown): string {
  if (Array.isArray(out)) {
    if (out.length === 0) return "(none)";
    return out
      .map((o) =>
        Object.entries(o as object)
          .map(([k, v]) => `${k}: ${show(v)}`)
          .join("  "),
      )
      .join("\n");
  }
  return Object.entries(out as object)
    .map(([k, v]) => `${k}: ${show(v)}`)
    .join("\n");
}

const show = (v: unknown) =>
  v === null || v === undefined ? "-" : typeof v === "object" ? JSON.stringify(v) : String(v);

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
