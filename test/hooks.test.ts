import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { linkOrg } from "../src/admin/orgs.js";
import { authenticate } from "../src/auth/authenticate.js";
import { createApiKey } from "../src/auth/keys.js";
import { loadConfig } from "../src/config.js";
import type { Deps } from "../src/context.js";
import { systemCtx } from "../src/context.js";
import { createDb } from "../src/db/db.js";
import { silentLogger } from "../src/logger.js";
import { writeMemories } from "../src/memories/write.js";
import { createProviders } from "../src/providers/index.js";
import { waitFor } from "./helpers/harness.js";
import { JWT_AUDIENCE, JWT_ISSUER, JWT_SECRET, signToken } from "./helpers/jwks-server.js";
import { freePort, ROOT, type ServerProcess, startServerProcess } from "./helpers/process.js";
import { startReceiver } from "./helpers/webhook-receiver.js";

const PRE = path.join(ROOT, "examples/hooks/pre-tool-use.mjs");
const STOP = path.join(ROOT, "examples/hooks/stop.mjs");

let server: ServerProcess;
let tmp: string;

beforeAll(async () => {
  server = await startServerProcess({
    MNEMO_JWT_SECRET: JWT_SECRET,
    MNEMO_JWT_ISSUER: JWT_ISSUER,
    MNEMO_JWT_AUDIENCE: JWT_AUDIENCE,
  });
  tmp = mkdtempSync(path.join(os.tmpdir(), "mnemo-hooks-"));
});
afterAll(async () => {
  await server?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

/** Runs a hook script the way Claude Code does: event JSON on stdin, env of the user's shell. */
function runHook(script: string, event: unknown, env: Record<string, string>) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [script], {
      env: { PATH: process.env.PATH ?? "", HOME: os.tmpdir(), ...env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(JSON.stringify(event));
  });
}

/**
 * Writes `entries` as a Claude Code transcript and runs the Stop hook on it, the way Claude Code
 * does at the end of a turn (`event` adds to the hook's event).
 */
function runStop(session: string, entries: unknown[], env: Record<string, string>, event: object = {}) {
  const transcript = path.join(tmp, `${session}.jsonl`);
  writeFileSync(transcript, entries.map((l) => JSON.stringify(l)).join("\n"));
  return runHook(
    STOP,
    {
      session_id: session,
      transcript_path: transcript,
      hook_event_name: "Stop",
      stop_hook_active: false,
      ...event,
    },
    env,
  );
}

/** Writes a directive through the core write, attached to the running server's database. */
async function seedDirective(user: string, text: string, triggers: string[]) {
  const db = createDb(server.databaseUrl, 2);
  try {
    const { orgId } = await authenticate(db, { apiKey: server.key });
    const config = loadConfig({});
    const deps = { config, db, log: silentLogger(), providers: createProviders(config) } as unknown as Deps;
    const [row] = await writeMemories(systemCtx(deps, orgId, "seed"), [
      { type: "lesson", text, user_id: user, trigger_entities: triggers, outcome: "resolved" },
    ]);
    return row!;
  } finally {
    await db.close();
  }
}

const preEvent = (tool: string, input: Record<string, unknown>) => ({
  session_id: "s-1",
  transcript_path: path.join(tmp, "none.jsonl"),
  cwd: ROOT,
  hook_event_name: "PreToolUse",
  tool_name: tool,
  tool_input: input,
});

describe("Claude Code hooks against a real server", () => {
  it("PreToolUse prints a matching directive as additional context, and nothing for an unrelated call", async () => {
    const user = "hook-user";
    const lesson = "Run the schema migrations before starting the API server.";
    await seedDirective(user, lesson, ["migrate_schema.py"]);
    const env = { MNEMO_URL: server.url, MNEMO_API_KEY: server.key, MNEMO_DEFAULT_USER_ID: user };

    const hit = await runHook(
      PRE,
      preEvent("Bash", { command: "python scripts/migrate_schema.py --up" }),
      env,
    );
    expect(hit.code).toBe(0);
    const out = JSON.parse(hit.stdout);
    expect(out.hookSpecificOutput.hookEventName).toBe("PreToolUse");
    expect(out.hookSpecificOutput.additionalContext).toContain("migrations before starting");

    const miss = await runHook(PRE, preEvent("Bash", { command: "ls -la docs" }), env);
    expect(miss).toMatchObject({ code: 0, stdout: "" });
  });

  it("both hooks act as the user a key was made for, without MNEMO_DEFAULT_USER_ID", async () => {
    const user = "hook-alice";
    await seedDirective(user, "Rotate the staging tokens with rotate_tokens.sh, never by hand.", [
      "rotate_tokens.sh",
    ]);
    const db = createDb(server.databaseUrl, 2);
    let key: string;
    try {
      const { orgId } = await authenticate(db, { apiKey: server.key });
      key = (await createApiKey(db, { orgId, userId: user, kind: "service" })).key;
    } finally {
      await db.close();
    }
    const env = { MNEMO_URL: server.url, MNEMO_API_KEY: key };
    const hit = await runHook(PRE, preEvent("Bash", { command: "bash rotate_tokens.sh staging" }), env);
    expect(hit.code).toBe(0);
    expect(JSON.parse(hit.stdout).hookSpecificOutput.additionalContext).toContain(
      "Rotate the staging tokens",
    );

    const turn = [
      { type: "user", message: { role: "user", content: "My team deploys the billing service on Fridays." } },
      { type: "assistant", message: { role: "assistant", content: [{ type: "text", text: "Noted." }] } },
    ];
    expect(await runStop("sess-alice", turn, env)).toMatchObject({ code: 0, stdout: "" });
    const rows = await waitFor(async () => {
      const r = await fetch(`${server.url}/v1/memories?conv_id=sess-alice`, {
        headers: { "x-api-key": key },
      });
      const body = (await r.json()) as { data?: { user_id: string }[] };
      return body.data?.length ? body.data : undefined;
    });
    expect(rows.every((m) => m.user_id === user)).toBe(true);
  });

  it("both hooks act as a JWT's user, and as a user's key's, ahead of MNEMO_DEFAULT_USER_ID", async () => {
    const db = createDb(server.databaseUrl, 2);
    let orgId: string;
    let bobKey: string;
    try {
      ({ orgId } = await authenticate(db, { apiKey: server.key }));
      await linkOrg(db, { orgId, linked: true });
      bobKey = (await createApiKey(db, { orgId, userId: "hook-bob", kind: "service" })).key;
    } finally {
      await db.close();
    }
    const token = await signToken("secret", { org: orgId, sub: "hook-erin" });
    // The JWT was sent as "me" (403 user_mismatch), and the key list named no key of hers: the
    // turn was silently not stored. A user's key with a default user set was refused the same way.
    for (const [user, key] of [
      ["hook-erin", token],
      ["hook-bob", bobKey],
    ] as const) {
      await seedDirective(user, `Tag the release with tag_release.sh, ${user}.`, ["tag_release.sh"]);
      const env = { MNEMO_URL: server.url, MNEMO_API_KEY: key, MNEMO_DEFAULT_USER_ID: "me" };
      const hit = await runHook(PRE, preEvent("Bash", { command: "bash tag_release.sh v2" }), env);
      expect([user, hit.code]).toEqual([user, 0]);
      expect(JSON.parse(hit.stdout).hookSpecificOutput.additionalContext).toContain(`${user}.`);
      const turn = [
        {
          type: "user",
          message: { role: "user", content: `I am ${user} and I review pull requests on Mondays.` },
        },
        { type: "assistant", message: { role: "assistant", content: [{ type: "text", text: "Noted." }] } },
      ];
      expect(await runStop(`sess-${user}`, turn, env)).toMatchObject({ code: 0, stdout: "" });
      const rows = await waitFor(async () => {
        const r = await fetch(`${server.url}/v1/memories?conv_id=sess-${user}&user_id=${user}`, {
          headers: { "x-api-key": server.key },
        });
        const body = (await r.json()) as { data?: { user_id: string }[] };
        return body.data?.length ? body.data : undefined;
      });
      expect(rows.every((m) => m.user_id === user)).toBe(true);
    }
  });

  it("PreToolUse takes the user's last prompt as the task, not a slash command's entries", async () => {
    const user = "hook-task-user";
    await seedDirective(user, "Run the schema migrations before starting the API server.", [
      "migrate_schema.py",
    ]);
    const env = { MNEMO_URL: server.url, MNEMO_API_KEY: server.key, MNEMO_DEFAULT_USER_ID: user };
    const transcript = path.join(tmp, "slash.jsonl");
    const entries = [
      {
        type: "user",
        message: { role: "user", content: "Start the API server after the schema migrations" },
      },
      { type: "assistant", message: { role: "assistant", content: [{ type: "text", text: "On it." }] } },
      // What Claude Code writes for `/model` typed mid-session.
      {
        type: "user",
        isMeta: true,
        message: {
          role: "user",
          content: "Caveat: The messages below were generated by the user while running local commands.",
        },
      },
      {
        type: "user",
        message: {
          role: "user",
          content: "<command-name>/model</command-name>\n<command-message>model</command-message>",
        },
      },
      {
        type: "user",
        message: { role: "user", content: "<local-command-stdout>Set model to Opus</local-command-stdout>" },
      },
    ];
    writeFileSync(transcript, entries.map((l) => JSON.stringify(l)).join("\n"));
    const hit = await runHook(
      PRE,
      {
        ...preEvent("Bash", { command: "python scripts/migrate_schema.py --up" }),
        transcript_path: transcript,
      },
      env,
    );
    // The slash command's output as the task shared no word with the lesson: the gate dropped it.
    expect(hit.code).toBe(0);
    expect(JSON.parse(hit.stdout).hookSpecificOutput.additionalContext).toContain(
      "migrations before starting",
    );
  });

  it("PreToolUse exits 0 with no output when the server is unreachable", async () => {
    const port = await freePort();
    const res = await runHook(PRE, preEvent("Bash", { command: "python migrate_schema.py" }), {
      MNEMO_URL: `http://127.0.0.1:${port}`,
      MNEMO_API_KEY: "whatever",
    });
    expect(res).toMatchObject({ code: 0, stdout: "", stderr: "" });
  });

  it("Stop ingests the finished turn with agentic: true", async () => {
    const lines = [
      { type: "user", message: { role: "user", content: "Old question" } },
      { type: "assistant", message: { role: "assistant", content: [{ type: "text", text: "Old answer" }] } },
      { type: "user", message: { role: "user", content: "Fix the failing build, I prefer pnpm over npm." } },
      {
        type: "assistant",
        message: {
          role: "assistant",
          content: [{ type: "tool_use", id: "t1", name: "Bash", input: { command: "pnpm build" } }],
        },
      },
      {
        type: "user",
        message: { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "Build OK" }] },
      },
      {
        type: "assistant",
        message: { role: "assistant", content: [{ type: "text", text: "Fixed the build." }] },
      },
    ];
    const res = await runStop("sess-stop-1", lines, {
      MNEMO_URL: server.url,
      MNEMO_API_KEY: server.key,
      MNEMO_DEFAULT_USER_ID: "stop-user",
    });
    expect(res).toMatchObject({ code: 0, stdout: "" });
    const rows = await waitFor(async () => {
      const r = await fetch(`${server.url}/v1/memories?user_id=stop-user&conv_id=sess-stop-1`, {
        headers: { "x-api-key": server.key },
      });
      const body = (await r.json()) as { data?: { conv_id: string; agent_id: string }[] };
      return body.data?.length ? body.data : undefined;
    });
    expect(rows.every((m) => m.conv_id === "sess-stop-1" && m.agent_id === "claude-code")).toBe(true);
  });

  it("Stop takes the user's last prompt, leaving out a slash command's entries after it", async () => {
    const rx = await startReceiver();
    try {
      const res = await runStop(
        "sess-slash",
        [
          { type: "user", message: { role: "user", content: "Add react and never use yarn" } },
          {
            type: "assistant",
            message: { role: "assistant", content: [{ type: "text", text: "Adding it." }] },
          },
          {
            type: "user",
            isMeta: true,
            message: {
              role: "user",
              content: "Caveat: The messages below were generated by the user while running local commands.",
            },
          },
          { type: "user", message: { role: "user", content: "<command-name>/model</command-name>" } },
          {
            type: "user",
            message: {
              role: "user",
              content: "<local-command-stdout>Set model to Opus</local-command-stdout>",
            },
          },
          {
            type: "assistant",
            message: {
              role: "assistant",
              content: [{ type: "tool_use", id: "t1", name: "Bash", input: { command: "pnpm add react" } }],
            },
          },
        ],
        { MNEMO_URL: rx.base, MNEMO_DEFAULT_USER_ID: "stop-user-slash" },
      );
      expect(res).toMatchObject({ code: 0, stdout: "" });
      const [sent] = rx.at("/v1/memories");
      const messages = JSON.parse(sent!.raw.toString("utf8")).messages as { role: string; content: string }[];
      expect(messages[0]).toEqual({ role: "user", content: "Add react and never use yarn" });
      expect(messages.map((m) => m.content).join("\n")).not.toMatch(/local-command|command-name|Caveat/);
      expect(messages.at(-1)).toMatchObject({
        role: "tool",
        content: expect.stringContaining("pnpm add react"),
      });
    } finally {
      await rx.close();
    }
  });

  it("PreToolUse still recalls by path when the tool input is larger than a request may be", async () => {
    const user = "hook-user-big";
    await seedDirective(user, "Regenerate the lockfile after editing big_config.yaml.", ["big_config.yaml"]);
    const env = { MNEMO_URL: server.url, MNEMO_API_KEY: server.key, MNEMO_DEFAULT_USER_ID: user };
    const hit = await runHook(
      PRE,
      preEvent("Write", { file_path: "deploy/big_config.yaml", content: "x: 1\n".repeat(400_000) }),
      env,
    );
    expect(hit.code).toBe(0);
    expect(JSON.parse(hit.stdout).hookSpecificOutput.additionalContext).toContain("Regenerate the lockfile");
  });

  it("PreToolUse recalls for a MultiEdit of many large edits, and beside arguments nested past the server's depth", async () => {
    const user = "hook-user-multi";
    await seedDirective(user, "Never edit package-lock.json by hand; run npm install.", [
      "package-lock.json",
    ]);
    await seedDirective(user, "Use pnpm, not yarn, in this repository.", ["yarn"]);
    const env = { MNEMO_URL: server.url, MNEMO_API_KEY: server.key, MNEMO_DEFAULT_USER_ID: user };
    // Twenty edits of 31 KB each: every string under the per-string cut, 1.3 MB in all (413).
    const big = '"lodash": "^4.17.21",\n'.repeat(1_200);
    const edits = Array.from({ length: 20 }, () => ({ old_string: big, new_string: big }));
    const multi = await runHook(
      PRE,
      preEvent("MultiEdit", { file_path: "/repo/package-lock.json", edits }),
      env,
    );
    expect(multi.code).toBe(0);
    expect(JSON.parse(multi.stdout).hookSpecificOutput.additionalContext).toContain(
      "Never edit package-lock.json",
    );
    // Forty levels beside the command (refused over 32 levels: 422).
    let deep: unknown = "end";
    for (let i = 0; i < 40; i++) deep = { next: deep };
    const nested = await runHook(PRE, preEvent("Bash", { command: "yarn add lodash", options: deep }), env);
    expect(nested.code).toBe(0);
    expect(JSON.parse(nested.stdout).hookSpecificOutput.additionalContext).toContain("Use pnpm, not yarn");
  });

  it("Stop sends a turn whose prompt alone is over the request limit in UTF-8, its start kept", async () => {
    // 300,000 characters of Chinese are 900,000 bytes: under a limit counted in characters, over
    // the server's 1 MiB once the reply is added.
    const rx = await startReceiver();
    try {
      const prompt = `请记住：${"我每天早上喝绿茶😀".repeat(30_000)}`;
      const reply = `好的。${"绿".repeat(120_000)}`;
      const res = await runStop(
        "sess-cjk",
        [
          { type: "user", message: { role: "user", content: prompt } },
          { type: "assistant", message: { role: "assistant", content: [{ type: "text", text: reply }] } },
        ],
        { MNEMO_URL: rx.base, MNEMO_DEFAULT_USER_ID: "stop-user-cjk" },
      );
      expect(res).toMatchObject({ code: 0, stdout: "" });
      const [sent] = rx.at("/v1/memories");
      expect(sent!.raw.length).toBeLessThanOrEqual(1024 * 1024);
      const body = JSON.parse(sent!.raw.toString("utf8")) as {
        messages: { role: string; content: string }[];
      };
      expect(body.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
      expect(body.messages[0]!.content.startsWith("请记住：我每天早上喝绿茶😀")).toBe(true);
      expect(body.messages[1]!.content.startsWith("好的。")).toBe(true);
      // No character was cut in two: no lone surrogate (the server refuses those), no U+FFFD.
      const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
      for (const m of body.messages)
        expect([loneSurrogate.test(m.content), m.content.includes("\uFFFD")]).toEqual([false, false]);
    } finally {
      await rx.close();
    }
  });

  it("Stop keeps a turn over the request limit, adds the final reply Claude Code passes, and stores no tool call as a fact", async () => {
    const big = "y".repeat(300_000);
    const lines = [
      {
        type: "user",
        message: { role: "user", content: "Write the three fixtures, I keep them under fixtures/." },
      },
      ...[1, 2, 3, 4].map((i) => ({
        type: "assistant",
        message: {
          role: "assistant",
          content: [
            {
              type: "tool_use",
              id: `w${i}`,
              name: "Write",
              input: { file_path: `fixtures/f${i}.txt`, content: big },
            },
          ],
        },
      })),
    ];
    const res = await runStop(
      "sess-stop-big",
      lines,
      { MNEMO_URL: server.url, MNEMO_API_KEY: server.key, MNEMO_DEFAULT_USER_ID: "stop-user-big" },
      { last_assistant_message: "All four fixture files are written under fixtures/, each about 300 KB." },
    );
    expect(res).toMatchObject({ code: 0, stdout: "" });
    const texts = await waitFor(async () => {
      const r = await fetch(`${server.url}/v1/memories?user_id=stop-user-big&type=fact`, {
        headers: { "x-api-key": server.key },
      });
      const body = (await r.json()) as { data?: { text: string }[] };
      const all = body.data?.map((m) => m.text) ?? [];
      return all.some((t) => t.includes("four fixture files")) ? all : undefined;
    });
    expect(texts.some((t) => t.includes("keep them under fixtures"))).toBe(true);
    expect(texts.filter((t) => /tool call|file_path/.test(t))).toEqual([]);
  });
});

describe("example MCP configs", () => {
  // examples/README.md: an agent id narrows reads as well as writes, so the configs pin the user
  // only and every tool of the same user reads what the others (and the Stop hook) wrote.
  const configs = [
    "examples/claude-code/mcp.http.json",
    "examples/claude-code/mcp.stdio.json",
    "examples/claude-desktop/claude_desktop_config.json",
    "examples/cursor/mcp.json",
  ];
  it.each(configs)("%s pins the user and no agent id", (file) => {
    const text = readFileSync(path.join(ROOT, file), "utf8");
    const servers = Object.values(
      (JSON.parse(text) as { mcpServers: Record<string, Record<string, unknown>> }).mcpServers,
    );
    expect(servers.length).toBeGreaterThan(0);
    for (const server of servers) {
      const pinned = Object.keys({ ...(server.headers as object), ...(server.env as object) });
      expect(pinned.some((k) => /User-Id$|DEFAULT_USER_ID$/.test(k))).toBe(true);
      expect(pinned.filter((k) => /Agent-Id$|DEFAULT_AGENT_ID$/.test(k))).toEqual([]);
    }
  });
});
