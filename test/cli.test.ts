import { existsSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.js";
import { runMnemo } from "./helpers/process.js";

/**
 * The configuration and the command line before any database is opened: the same on either
 * database, so this file runs in the embedded pass only (vitest.config.ts, SAME_IN_BOTH).
 */
describe("configuration", () => {
  it("names the variable that is wrong", () => {
    expect(() => loadConfig({ PORT: "eighty" })).toThrow(ConfigError);
    expect(() => loadConfig({ PORT: "eighty" })).toThrow(/PORT/);
    expect(() => loadConfig({ LOG_LEVEL: "loud" })).toThrow(/LOG_LEVEL/);
    expect(() => loadConfig({ DATABASE_URL: "not a url" })).toThrow(/DATABASE_URL/);
    expect(() => loadConfig({ MNEMO_BOOTSTRAP_API_KEY: "short" })).toThrow(/MNEMO_BOOTSTRAP_API_KEY/);
    // More than pgvector's HNSW index takes: refused before any migration, not half-way through.
    expect(() => loadConfig({ MNEMO_EMBEDDING_DIM: "3072" })).toThrow(/MNEMO_EMBEDDING_DIM.*2000/);
    // 0 closed the connections before a wait=true hold could answer (no response at all).
    expect(() => loadConfig({ MNEMO_SHUTDOWN_TIMEOUT_MS: "0" })).toThrow(/MNEMO_SHUTDOWN_TIMEOUT_MS.*1000/);
    expect(loadConfig({ MNEMO_SHUTDOWN_TIMEOUT_MS: "1000" }).MNEMO_SHUTDOWN_TIMEOUT_MS).toBe(1000);
  });

  it("refuses a URL of the wrong scheme, a number not in decimal digits, and names a rate tier's missing field", () => {
    // "db.internal:5432/mnemo" parses as a URL of the scheme "db.internal:": the client connected
    // to 127.0.0.1:5432 instead.
    expect(() => loadConfig({ DATABASE_URL: "db.internal:5432/mnemo" })).toThrow(
      /DATABASE_URL: must be a URL starting with postgres:\/\/ or postgresql:\/\//,
    );
    expect(loadConfig({ DATABASE_URL: "postgresql://u@h/db" }).DATABASE_URL).toBe("postgresql://u@h/db");
    for (const name of ["MNEMO_LLM_BASE_URL", "MNEMO_JWT_JWKS_URL", "MNEMO_URL"]) {
      expect(() => loadConfig({ [name]: "localhost:11434/v1" }), name).toThrow(
        new RegExp(`${name}: must be a URL starting with http:// or https://`),
      );
      expect(() => loadConfig({ [name]: "ftp://x/y" }), name).toThrow(new RegExp(name));
    }
    expect(loadConfig({ MNEMO_URL: "http://127.0.0.1:8080" }).MNEMO_URL).toBe("http://127.0.0.1:8080");
    // A model URL with a user name or password: no request can be sent to it (fetch refuses), and
    // the refusal must not quote the password.
    const withPassword = () =>
      loadConfig({ MNEMO_LLM_BASE_URL: "http://proxyuser:Pr0xyPassw0rd@127.0.0.1:9/v1" });
    expect(withPassword).toThrow(/MNEMO_LLM_BASE_URL: must not carry a user name or password/);
    expect(() => withPassword()).not.toThrow(/Pr0xyPassw0rd/);
    expect(loadConfig({ MNEMO_LLM_BASE_URL: "http://127.0.0.1:9/v1" }).MNEMO_LLM_BASE_URL).toBe(
      "http://127.0.0.1:9/v1",
    );
    // Number() read 0x1F90 as 8080.
    for (const v of ["0x1F90", "1e3", "8080.0", "0b1"]) {
      expect(() => loadConfig({ PORT: v }), v).toThrow(/PORT/);
      expect(() => loadConfig({ MNEMO_METRICS_PORT: v }), v).toThrow(/MNEMO_METRICS_PORT/);
    }
    expect(loadConfig({ PORT: " 8081 " }).PORT).toBe(8081);
    // A HOST that is neither an address nor a host name is refused before anything opens.
    for (const v of ["not_a_host", "http://example.com", "[::1]", "a..b", "-x.example"])
      expect(() => loadConfig({ HOST: v }), v).toThrow(/HOST: must be an IP address or a host name/);
    for (const v of ["0.0.0.0", "::", "::1", "localhost", "mnemo-api.internal", "10.0.0.7"])
      expect(loadConfig({ HOST: v }).HOST, v).toBe(v);
    expect(() => loadConfig({ MNEMO_RATE_TIERS: '{"pro":{"per_minute":10}}' })).toThrow(
      /MNEMO_RATE_TIERS: invalid tiers: pro\.per_day: required/,
    );
    expect(() => loadConfig({ MNEMO_RATE_TIERS: '{"pro":{"per_minute":0,"per_day":5}}' })).toThrow(
      /pro\.per_minute: Too small/,
    );
  });

  it("has the documented defaults", () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      PORT: 8080,
      HOST: "127.0.0.1",
      MNEMO_DATA_DIR: "./.mnemo-data",
      LOG_LEVEL: "info",
    });
    expect(c.DATABASE_URL).toBeUndefined();
  });

  it("stops the process with the variable's name, in one line", async () => {
    const r = await runMnemo(["serve"], { PORT: "eighty", LOG_LEVEL: "loud" });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/invalid configuration[\s\S]*PORT/);
    const lines = r.stderr.trimEnd().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^mnemo: invalid configuration: PORT: .*; LOG_LEVEL: /);
  });

  it("takes an empty value as unset: the default, never every interface or the working directory", () => {
    const empty = Object.fromEntries(
      [
        "HOST",
        "MNEMO_DATA_DIR",
        "LOG_LEVEL",
        "LOG_FORMAT",
        "MNEMO_LLM_MODEL",
        "MNEMO_EMBEDDING_MODEL",
        "MNEMO_JWT_ORG_CLAIM",
        "MNEMO_JWT_USER_CLAIM",
        "MNEMO_WEBHOOK_RETRY_SCHEDULE",
      ].map((k) => [k, ""]),
    );
    const defaults = loadConfig({});
    expect(loadConfig(empty)).toEqual(defaults);
    expect(loadConfig({ ...empty, HOST: " " }).HOST).toBe("127.0.0.1");
    // All interfaces only when asked.
    expect(loadConfig({ HOST: "0.0.0.0" }).HOST).toBe("0.0.0.0");
    expect(loadConfig({ HOST: "::" }).HOST).toBe("::");
  });

  it("refuses an empty entry in MNEMO_WEBHOOK_RETRY_SCHEDULE (it was an extra immediate attempt), and a delay not in decimal digits", () => {
    for (const v of [",", "5,", "5,,30", " ,5"])
      expect(() => loadConfig({ MNEMO_WEBHOOK_RETRY_SCHEDULE: v }), v).toThrow(
        /MNEMO_WEBHOOK_RETRY_SCHEDULE/,
      );
    expect(loadConfig({ MNEMO_WEBHOOK_RETRY_SCHEDULE: "5, 30" }).MNEMO_WEBHOOK_RETRY_SCHEDULE).toEqual([
      5, 30,
    ]);
    // Decimal digits only: not hexadecimal or an exponent, which Number() reads.
    for (const v of ["0x10", "1e2", "5,0x10", "+5", "-1", "Infinity", "5.", ".5"])
      expect(() => loadConfig({ MNEMO_WEBHOOK_RETRY_SCHEDULE: v }), v).toThrow(
        /MNEMO_WEBHOOK_RETRY_SCHEDULE/,
      );
    expect(loadConfig({ MNEMO_WEBHOOK_RETRY_SCHEDULE: "0,1.5,30" }).MNEMO_WEBHOOK_RETRY_SCHEDULE).toEqual([
      0, 1.5, 30,
    ]);
  });
});

describe("admin CLI: wrong use", { timeout: 60_000 }, () => {
  // A data directory that does not exist: nothing may create it (nor open or migrate a database).
  const env = () => ({ MNEMO_DATA_DIR: path.join(os.tmpdir(), `mn-admin-typo-${process.pid}`) });
  afterEach(() => rmSync(env().MNEMO_DATA_DIR, { recursive: true, force: true }));

  it("a missing option value or an unknown option: one line naming it, exit 2, no stack", async () => {
    const cases = [
      [["create-org", "--name"], "--name"],
      [["create-org", "--name", "x", "--bogus"], "--bogus"],
      [["list-keys", "--org"], "--org"],
    ] as const;
    // A required option left out, or a value out of its set, is wrong use too, refused before any
    // database is opened (or a data directory created).
    const required = [
      [["create-org"], "mnemo: admin create-org: --name is required"],
      [["revoke-key"], "mnemo: admin revoke-key: KEY_ID is required"],
      [["export", "--user", "u"], "mnemo: admin export: --org is required"],
      [["migrate-to"], "mnemo: admin migrate-to: --target is required"],
      [["import", "--org", "o", "--format", "csv"], "mnemo: admin import: --format is mnemo or mem0"],
      // An option of another command: `import --user` would have imported every user's memories.
      [
        ["import", "--org", "o", "--user", "bob"],
        "mnemo: admin import: --user is not an option of import; `admin help` lists them",
      ],
      // A stray word: a mistyped option or value, never silently dropped.
      [
        ["export", "--org", "o", "bob"],
        "mnemo: admin export: unexpected argument 'bob'; `admin help` lists them",
      ],
      [
        ["revoke-key", "key_1", "key_2"],
        "mnemo: admin revoke-key: unexpected argument 'key_2'; `admin help` lists them",
      ],
      // An empty or blank value is no value: `create-key --user ""` made an organisation-wide key,
      // `export --user ""` an empty file with exit 0, `create-org --name "   "` a blank name.
      [
        ["create-key", "--org", "org_default", "--user", ""],
        "mnemo: admin create-key: --user must not be empty or blank",
      ],
      [
        ["create-key", "--org", "org_default", "--user", "   "],
        "mnemo: admin create-key: --user must not be empty or blank",
      ],
      [
        ["export", "--org", "org_default", "--user="],
        "mnemo: admin export: --user must not be empty or blank",
      ],
      [["create-org", "--name", "   "], "mnemo: admin create-org: --name must not be empty or blank"],
      [
        ["create-org", "--name", "x", "--tier", ""],
        "mnemo: admin create-org: --tier must not be empty or blank",
      ],
      [["list-keys", "--org="], "mnemo: admin list-keys: --org must not be empty or blank"],
      [["import", "--org", "o", "--format", " "], "mnemo: admin import: --format must not be empty or blank"],
      [["migrate-to", "--target", ""], "mnemo: admin migrate-to: --target must not be empty or blank"],
      [["revoke-key", " "], "mnemo: admin revoke-key: KEY_ID is required"],
      // A repeated option took its last value: `import --org A --org B` wrote into B.
      [
        ["create-org", "--name", "x", "--name", "y"],
        "mnemo: admin create-org: --name is given more than once",
      ],
      [["import", "--org", "A", "--org=B"], "mnemo: admin import: --org is given more than once"],
      [
        ["list-keys", "--org", "o", "--json", "--json"],
        "mnemo: admin list-keys: --json is given more than once",
      ],
      // A target of another scheme, refused as DATABASE_URL is, before any connection (it tried
      // mysql://x/y's host, exit 1; `127.0.0.1:54329/db` parses as a URL of the scheme "127.0.0.1:").
      [
        ["migrate-to", "--target", "mysql://x/y"],
        "mnemo: admin migrate-to: --target must be a URL starting with postgres:// or postgresql://",
      ],
      [
        ["migrate-to", "--target", "127.0.0.1:54329/db"],
        "mnemo: admin migrate-to: --target must be a URL starting with postgres:// or postgresql://",
      ],
    ] as const;
    const refused = await Promise.all(required.map(([args]) => runMnemo(["admin", ...args], env())));
    required.forEach(([args, said], i) => {
      expect([args, refused[i]!.code, refused[i]!.stderr]).toEqual([args, 2, `${said}\n`]);
    });
    // At once: each is a process start, and none touches anything.
    const runs = await Promise.all(cases.map(([args]) => runMnemo(["admin", ...args], env())));
    cases.forEach(([args, named], i) => {
      const r = runs[i]!;
      expect(r.code, args.join(" ")).toBe(2);
      const lines = r.stderr.trimEnd().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(new RegExp(`^mnemo: admin ${args[0]}: .*'${named}`));
    });
    expect(existsSync(env().MNEMO_DATA_DIR)).toBe(false);
  });

  it("an admin command on a data directory that does not exist refuses, creating nothing", async () => {
    const r = await runMnemo(["admin", "list-keys", "--org", "org_default"], env());
    expect([r.code, r.stderr]).toEqual([
      1,
      `mnemo: no data directory at ${env().MNEMO_DATA_DIR} (MNEMO_DATA_DIR): set it to the server's, or start the server once (or create the directory) to make a new one\n`,
    ]);
    expect(existsSync(env().MNEMO_DATA_DIR)).toBe(false);
  });

  it("serve, api, worker and mcp take no arguments: help answers, anything else is refused, nothing started", async () => {
    const [help, port, mcp, worker] = await Promise.all([
      runMnemo(["serve", "--help"], env()),
      runMnemo(["serve", "--port", "9000"], env()),
      runMnemo(["mcp", "--http"], env()),
      runMnemo(["worker", "help"], env()),
    ]);
    expect(help!.code).toBe(0);
    expect(help!.stdout).toContain("mnemo worker");
    expect(worker!.code).toBe(0);
    expect([port!.code, port!.stderr]).toEqual([
      2,
      "mnemo: serve takes no arguments (got '--port'); configuration is read from the environment, see the README\n",
    ]);
    expect(mcp!.code).toBe(2);
    expect(mcp!.stderr).toMatch(/^mnemo: mcp takes no arguments \(got '--http'\)/);
    expect(existsSync(env().MNEMO_DATA_DIR)).toBe(false);
  });

  it("admin help, --help and an unknown command answer without opening or creating a database", async () => {
    const subs = ["help", "--help", "-h"];
    // A top-level typo is not read as anything either, even with a configuration that is wrong.
    const [typo, topTypo, none, ...helps] = await Promise.all([
      runMnemo(["admin", "lsit-keys", "--org", "x"], env()),
      runMnemo(["--version"], { ...env(), PORT: "not-a-port" }),
      runMnemo(["admin"], env()),
      ...subs.map((sub) => runMnemo(["admin", sub], env())),
    ]);
    helps.forEach((r, i) => {
      expect(r!.code, subs[i]).toBe(0);
      expect(r!.stdout).toContain("migrate-to --target");
    });
    // One line each, naming the word and where the commands are listed.
    expect([typo!.code, typo!.stderr]).toEqual([
      2,
      "mnemo: unknown admin command 'lsit-keys'; `admin help` lists them\n",
    ]);
    expect([topTypo!.code, topTypo!.stderr]).toEqual([
      2,
      "mnemo: unknown command '--version'; `help` lists the commands\n",
    ]);
    expect([none!.code, none!.stderr]).toEqual([
      2,
      "mnemo: admin needs a command; `admin help` lists them\n",
    ]);
    expect(existsSync(env().MNEMO_DATA_DIR)).toBe(false);
  });
});
