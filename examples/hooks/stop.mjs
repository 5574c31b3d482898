#!/usr/bin/env node
// Claude Code Stop hook: when the agent finishes a turn, sends that turn (the user's prompt, the
// agent's replies, its tool calls and their results) to Mnemo with `agentic: true`, so lessons
// and procedures are learned from it in the background.
//
// Plain Node (18+), no dependencies; does not wait for extraction; exits 0 silently on any
// failure. Environment: as pre-tool-use.mjs, plus MNEMO_HOOK_OUTCOME (resolved|failed, optional).
import { readFileSync } from "node:fs";

const env = process.env;
const MAX_CHARS = 4000; // per tool call and tool result
const MAX_BODY_BYTES = 800_000; // the whole turn in UTF-8, under the server's 1 MiB request limit

async function main() {
  const event = JSON.parse(await readStdin());
  if (!event.transcript_path) return;
  const messages = lastTurn(readFileSync(event.transcript_path, "utf8"));
  // Claude Code may call the hook before the final reply reaches the transcript; it passes it here.
  const final = typeof event.last_assistant_message === "string" ? event.last_assistant_message.trim() : "";
  if (final && !messages.some((m) => m.role === "assistant" && m.content.trim() === final))
    messages.push({ role: "assistant", content: final });
  if (messages.length === 0) return;
  // A long turn keeps its prompt and its latest messages; a prompt or a reply too long by itself
  // keeps its start.
  const bytes = () => Buffer.byteLength(JSON.stringify(messages));
  while (messages.length > 2 && bytes() > MAX_BODY_BYTES) messages.splice(1, 1);
  while (bytes() > MAX_BODY_BYTES) {
    const longest = messages.reduce((a, b) => (b.content.length > a.content.length ? b : a));
    const size = Buffer.byteLength(longest.content);
    if (size <= 64) break;
    longest.content = clipBytes(longest.content, size - Math.ceil((bytes() - MAX_BODY_BYTES) * 1.1) - 64);
  }
  const body = {
    messages,
    user_id: env.MNEMO_DEFAULT_USER_ID || "me",
    conv_id: event.session_id || `claude-code-${Date.now()}`,
    agentic: true,
    ...(env.MNEMO_DEFAULT_AGENT_ID ? { agent_id: env.MNEMO_DEFAULT_AGENT_ID } : { agent_id: "claude-code" }),
    ...(env.MNEMO_DEFAULT_APP_ID ? { app_id: env.MNEMO_DEFAULT_APP_ID } : {}),
    ...(env.MNEMO_DEFAULT_NAMESPACE ? { namespace: env.MNEMO_DEFAULT_NAMESPACE } : {}),
    ...(env.MNEMO_HOOK_OUTCOME ? { outcome: env.MNEMO_HOOK_OUTCOME } : {}),
  };
  await post("/v1/memories", body, Number(env.MNEMO_HOOK_TIMEOUT_MS) || 3000);
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

/** Turns since the user's latest prompt, as chat messages. */
function lastTurn(transcript) {
  const entries = transcript
    .split("\n")
    .map((l) => {
      try {
        return JSON.parse(l);
      } catch {
        return undefined;
      }
    })
    .filter((e) => e && (e.type === "user" || e.type === "assistant") && e.message && !ownEntry(e));
  let start = -1;
  entries.forEach((e, i) => {
    if (e.type === "user" && promptText(e.message.content)) start = i;
  });
  if (start < 0) return [];
  const out = [];
  for (const e of entries.slice(start)) {
    const c = e.message.content;
    if (typeof c === "string") {
      if (c.trim()) out.push({ role: e.type, content: c });
      continue;
    }
    for (const part of Array.isArray(c) ? c : []) {
      if (part?.type === "text" && part.text?.trim()) out.push({ role: e.type, content: part.text });
      // A tool call is the tool's turn, named after it: no claim of the assistant's.
      else if (part?.type === "tool_use")
        out.push({
          role: "tool",
          name: part.name,
          content: `call: ${clip(JSON.stringify(part.input ?? {}))}`,
        });
      else if (part?.type === "tool_result")
        out.push({ role: "tool", content: clip(resultText(part.content), part.is_error) });
    }
  }
  return out;
}

/**
 * Claude Code's own entries, neither the user's words nor the agent's: meta entries (the caveat
 * before a slash command) and a slash command's name or output ("<local-command-stdout>Set model
 * to Opus</local-command-stdout>" after /model), as the PreToolUse hook skips them too.
 */
const ownEntry = (e) =>
  e.isMeta === true ||
  (e.type === "user" && /^\s*<(local-command-|command-)/.test(promptText(e.message.content)));

function promptText(c) {
  if (typeof c === "string") return c.trim();
  if (!Array.isArray(c)) return "";
  return c
    .filter((p) => p?.type === "text")
    .map((p) => p.text)
    .join("\n")
    .trim();
}

const resultText = (c) =>
  typeof c === "string" ? c : Array.isArray(c) ? c.map((p) => p?.text ?? "").join("\n") : "";
const clip = (s, isError = false) =>
  `${isError ? "[error] " : ""}${s.length > MAX_CHARS ? `${s.slice(0, MAX_CHARS)}...` : s}`;

/** The start of `s` in at most `max` UTF-8 bytes, never half a character. */
function clipBytes(s, max) {
  const cut = new TextDecoder().decode(Buffer.from(s).subarray(0, Math.max(0, max)));
  // A character cut in two decodes as U+FFFD: drop it.
  return `${cut.replace(/\uFFFD$/, "")}...`;
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

main().then(
  () => process.exit(0),
  () => process.exit(0),
);
