#!/usr/bin/env node
// Claude Code PreToolUse hook: asks Mnemo which lessons and procedures apply to the tool call
// about to run, and hands them to the agent as additional context.
//
// Plain Node (18+), no dependencies, one HTTP call with a short time-out. Whatever goes wrong
// (service down, bad key, nothing matched) it exits 0 and prints nothing, so it never blocks
// or slows the agent down for long.
//
// Environment: MNEMO_URL (default http://127.0.0.1:8080), MNEMO_API_KEY, MNEMO_DEFAULT_USER_ID
// (default "me", as in the MCP configs next to it; a key made for one user, or a JWT, acts as that
// user), MNEMO_DEFAULT_AGENT_ID, MNEMO_DEFAULT_APP_ID, MNEMO_DEFAULT_NAMESPACE, MNEMO_HOOK_TIMEOUT_MS
// (default 1500), MNEMO_JWT_USER_CLAIM (the claim naming a JWT's user, as on the server; default sub).
import { closeSync, openSync, readSync, statSync } from "node:fs";

const env = process.env;

async function main() {
  const event = JSON.parse(await readStdin());
  if (!event.tool_name) return;
  const body = {
    action: { tool: event.tool_name, args: clipInput(event.tool_input ?? null) },
    mode: "compose",
    user_id: env.MNEMO_DEFAULT_USER_ID || "me",
    ...(env.MNEMO_DEFAULT_AGENT_ID ? { agent_id: env.MNEMO_DEFAULT_AGENT_ID } : {}),
    ...(env.MNEMO_DEFAULT_APP_ID ? { app_id: env.MNEMO_DEFAULT_APP_ID } : {}),
    ...(env.MNEMO_DEFAULT_NAMESPACE ? { namespace: env.MNEMO_DEFAULT_NAMESPACE } : {}),
  };
  const task = lastUserPrompt(event.transcript_path);
  if (task) body.task = task.slice(0, 2000);

  const res = await post("/v1/memories/trigger", body, Number(env.MNEMO_HOOK_TIMEOUT_MS) || 1500);
  if (!res.ok) return;
  const out = await res.json();
  if (!Array.isArray(out.data) || out.data.length === 0) return;
  const context = typeof out.context === "string" && out.context.trim() ? out.context.trim() : list(out.data);
  process.stdout.write(
    `${JSON.stringify({
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        additionalContext: `Lessons from earlier work that apply to this ${event.tool_name} call (Mnemo):\n${context}`,
      },
    })}\n`,
  );
}

/**
 * POSTs `body` to Mnemo as the credential's user when it has one: a credential made for one user
 * refuses any other (403 user_mismatch), the default user ("me", or MNEMO_DEFAULT_USER_ID) too. A
 * JWT names its user itself (the claim MNEMO_JWT_USER_CLAIM names, as on the server; default
 * sub), read without verifying it (the server verifies). A key made for a user: after the 403,
 * the call is made again as the user its entry in `GET /v1/auth/service-keys` names (such a key
 * lists only its user's).
 */
async function post(path, body, timeoutMs) {
  const signal = AbortSignal.timeout(timeoutMs);
  const base = (env.MNEMO_URL || "http://127.0.0.1:8080").replace(/\/+$/, "");
  const key = env.MNEMO_API_KEY;
  const headers = { "content-type": "application/json", ...(key ? { authorization: `Bearer ${key}` } : {}) };
  const send = (b) => fetch(`${base}${path}`, { method: "POST", headers, body: JSON.stringify(b), signal });
  const tokenUser = key ? jwtUser(key) : undefined;
  if (tokenUser) return send({ ...body, user_id: tokenUser });
  const res = await send(body);
  if (res.status !== 403 || !key) return res;
  if ((await res.json().catch(() => null))?.detail?.code !== "user_mismatch") return res;
  const keys = await fetch(`${base}/v1/auth/service-keys`, { headers, signal }).then((r) => r.json());
  const own = (keys.data ?? []).find((k) => key.startsWith(k.prefix) && key.endsWith(k.last_four));
  return own?.user_id ? send({ ...body, user_id: own.user_id }) : res;
}

/** The user a JWT names (a dotted claim name reaches into a nested claim); undefined for an API key. */
function jwtUser(key) {
  const parts = key.split(".");
  if (parts.length !== 3) return undefined;
  try {
    let v = JSON.parse(Buffer.from(parts[1], "base64url").toString("utf8"));
    for (const name of (env.MNEMO_JWT_USER_CLAIM || "sub").split(".")) v = v?.[name];
    return (typeof v === "string" && v) || (typeof v === "number" ? String(v) : undefined);
  } catch {
    return undefined;
  }
}

const list = (rows) => rows.map((r) => `- ${r.text}`).join("\n");

/**
 * The tool input cut to what the server reads of it: each string to 32,000 characters and nothing
 * deeper than 12 levels (the server reads identifiers that deep, and refuses past 32), and in all
 * 128,000 characters of strings, in the input's order (the path before the edits), so the
 * request stays well under the server's 1 MiB. A Write of a large file, a MultiEdit of twenty
 * large edits (413) or arguments nested 40 deep (422) still trigger by their path or command.
 */
function clipInput(input) {
  let left = 128_000;
  const clip = (v, depth) => {
    if (typeof v === "string") {
      const s = v.slice(0, Math.min(32_000, left));
      left -= s.length;
      return s;
    }
    if (v === null || typeof v !== "object") return v;
    if (depth > 12) return null;
    if (Array.isArray(v)) return v.slice(0, 1000).map((x) => clip(x, depth + 1));
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, clip(x, depth + 1)]));
  };
  return clip(input, 0);
}

function readStdin() {
  return new Promise((resolve, reject) => {
    let data = "";
    process.stdin.setEncoding("utf8");
    process.stdin.on("data", (c) => {
      data += c;
    });
    process.stdin.on("end", () => resolve(data));
    process.stdin.on("error", reject);
  });
}

/** The user's latest prompt, read from the tail of the session transcript (JSON lines). */
function lastUserPrompt(file) {
  if (!file) return undefined;
  try {
    const size = statSync(file).size;
    const len = Math.min(size, 256 * 1024);
    const buf = Buffer.alloc(len);
    const fd = openSync(file, "r");
    readSync(fd, buf, 0, len, size - len);
    closeSync(fd);
    const lines = buf.toString("utf8").split("\n").reverse();
    for (const line of lines) {
      let entry;
      try {
        entry = JSON.parse(line);
      } catch {
        continue;
      }
      // Claude Code's own entries are not the user's task: meta entries (the caveat before a
      // slash command) and a slash command's name or output ("<local-command-stdout>Set model to
      // Opus</local-command-stdout>" after /model).
      if (entry?.type !== "user" || entry.isMeta) continue;
      const c = entry.message?.content;
      const text =
        typeof c === "string"
          ? c
          : Array.isArray(c)
            ? c
                .filter((p) => p?.type === "text")
                .map((p) => p.text)
                .join("\n")
            : "";
      if (text.trim() && !/^\s*<(local-command-|command-)/.test(text)) return text;
    }
  } catch {
    // No transcript, no task: recall still works on the tool call alone.
  }
  return undefined;
}

main().then(
  () => process.exit(0),
  () => process.exit(0),
);
