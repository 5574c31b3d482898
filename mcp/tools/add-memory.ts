import { randomUUID } from "node:crypto";
import { z } from "zod";
import { JsonObject } from "../../src/wire/common.js";
import { IngestJobSchema } from "../../src/wire/ingest.js";
import { ToolFailure } from "../errors.js";
import { jobText } from "../render.js";
import { agentId, appId, namespace, userId } from "../schemas.js";
import { defineTool, writeScope } from "../tool.js";

const Message = z.object({
  role: z.string().describe("Who spoke: usually user, assistant, system or tool."),
  content: z.string().describe("What was said."),
  date: z.string().nullable().optional().describe("When it was said (optional)."),
  name: z
    .string()
    .nullable()
    .optional()
    .describe("The speaker's name, when the role does not say who spoke (several people in one chat)."),
  dia_id: z
    .string()
    .nullable()
    .optional()
    .describe("Your id for this turn, returned in details.source_event_ids."),
});

export const addMemoryTool = defineTool({
  name: "add_memory",
  title: "Remember a conversation",
  description:
    "Store what was said so it can be recalled later. Send the conversation turns in `messages`, or a single " +
    "note in `text` (stored as one user turn). Facts, a session summary and, for agent transcripts " +
    "(`agentic: true`), lessons and procedures are extracted in the background. With `wait` (default true) the " +
    "call waits for extraction up to the server's bound and returns what was stored; otherwise, or if it takes " +
    "longer, it returns a job id to pass to get_ingest_job.",
  input: {
    messages: z
      .array(Message)
      .optional()
      .describe("Conversation turns, oldest first. Use this or `text`, not both."),
    text: z
      .string()
      .optional()
      .describe("A single note to remember, stored as one user turn (instead of `messages`)."),
    user_id: userId,
    conv_id: z
      .string()
      .min(1)
      .optional()
      .describe("Conversation id to anchor the memories to. Omit to start a new conversation."),
    agent_id: agentId,
    app_id: appId,
    group_ids: z
      .array(z.string())
      .optional()
      .describe("Group ids (grp_...) to share shareable memories with. Unknown or archived ids are ignored."),
    namespace,
    outcome: z
      .enum(["resolved", "failed"])
      .optional()
      .describe("For agent work: did the approach in this turn work (`resolved`) or not (`failed`)?"),
    agentic: z
      .boolean()
      .optional()
      .describe("True for tool-using or coding-agent transcripts: also extracts lessons and procedures."),
    extract_artifacts: z
      .boolean()
      .optional()
      .describe("True to also store code, documents and other structured objects as artifacts."),
    timestamp_format: z
      .string()
      .optional()
      .describe("strptime format of the messages' dates for long imports, e.g. %Y-%m-%d %H:%M."),
    metadata: JsonObject()
      .optional()
      .describe(
        "Optional JSON object stored on every memory this call writes, filterable later as metadata.<key> " +
          "(search_memory and list_memories `filters`). At most 64 keys and 16 KB.",
      ),
    wait: z
      .boolean()
      .default(true)
      .describe(
        "Wait for extraction to finish (up to the server's bound). False returns the job id at once.",
      ),
  },
  output: IngestJobSchema,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async run(args, env) {
    const scope = writeScope(args, env.scope);
    if (!scope.user_id) {
      // REST's code for the same request (POST /v1/memories without a user).
      throw new ToolFailure(
        "missing_user_id",
        "add_memory needs user_id: pass it, or pin a default with MNEMO_DEFAULT_USER_ID (or the X-Mnemo-User-Id header on /mcp).",
      );
    }
    // `text` is the one turn when `messages` holds none (an empty list too); both at once would
    // leave one of them unsaid.
    if (args.messages?.length && args.text !== undefined) {
      throw new ToolFailure("invalid_request", "Pass either `messages` or `text`, not both.");
    }
    const messages = args.messages?.length
      ? args.messages
      : args.text !== undefined
        ? [{ role: "user", content: args.text }]
        : [];
    const ns = args.namespace ?? env.scope.namespace;
    const body = {
      messages,
      ...scope,
      user_id: scope.user_id,
      conv_id: args.conv_id ?? `mcp_${randomUUID()}`,
      ...(args.group_ids ? { group_ids: args.group_ids } : {}),
      ...(ns ? { namespace: ns } : {}),
      ...(args.outcome ? { outcome: args.outcome } : {}),
      ...(args.agentic !== undefined ? { agentic: args.agentic } : {}),
      ...(args.extract_artifacts !== undefined ? { extract_artifacts: args.extract_artifacts } : {}),
      ...(args.metadata ? { metadata: args.metadata } : {}),
      ...(args.timestamp_format ? { timestamp_format: args.timestamp_format } : {}),
    };
    const job = await env.service.ingest(body, { wait: args.wait });
    // Nothing was stored: an error result, so an agent that checks only isError does not take the
    // memory as kept (the job's own code, its id in the message for get_ingest_job).
    if (job.status === "failed") throw new ToolFailure(job.error?.code ?? "ingest_failed", jobText(job));
    return { structured: job, text: jobText(job) };
  },
});
