import type { ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import type { Logger } from "../src/logger.js";
import type { MemoryService } from "./port.js";
import type { DefaultScope } from "./scope.js";

/** What a tool runs with: the memory service acting for the caller, and the default scope. */
export interface ToolEnv {
  service: MemoryService;
  scope: DefaultScope;
  log: Logger;
}

export interface ToolOutput {
  structured: Record<string, unknown>;
  text: string;
}

export interface ToolDef<I extends z.ZodRawShape = z.ZodRawShape> {
  name: string;
  title: string;
  description: string;
  input: I;
  output: z.ZodType<Record<string, unknown>>;
  annotations: ToolAnnotations;
  run(args: z.output<z.ZodObject<I>>, env: ToolEnv): Promise<ToolOutput>;
}

export const defineTool = <I extends z.ZodRawShape>(def: ToolDef<I>): ToolDef<I> => def;

type Axes = { user_id?: string | undefined; agent_id?: string | undefined; app_id?: string | undefined };

/**
 * Read scope: when the call names no scope axis, the configured defaults fill in; when it names
 * any, it is taken as given (so `group_ids` alone reads a whole group across users).
 */
export function readScope(
  args: Axes & { group_ids?: string[] | undefined; conv_id?: string | undefined },
  scope: DefaultScope,
): Axes & { group_ids?: string[] } {
  const named = args.user_id || args.agent_id || args.app_id || args.group_ids?.length || args.conv_id;
  const src = named ? args : { ...args, ...pick(scope) };
  const out: Axes & { group_ids?: string[] } = {};
  if (src.user_id) out.user_id = src.user_id;
  if (src.agent_id) out.agent_id = src.agent_id;
  if (src.app_id) out.app_id = src.app_id;
  if (args.group_ids?.length) out.group_ids = args.group_ids;
  return out;
}

/** Write scope: each axis the call leaves out is filled from the defaults. */
export function writeScope(args: Axes, scope: DefaultScope): Axes {
  const out: Axes = {};
  const user = args.user_id ?? scope.user_id;
  const agent = args.agent_id ?? scope.agent_id;
  const app = args.app_id ?? scope.app_id;
  if (user) out.user_id = user;
  if (agent) out.agent_id = agent;
  if (app) out.app_id = app;
  return out;
}

function pick(s: DefaultScope): Axes {
  return { user_id: s.user_id, agent_id: s.agent_id, app_id: s.app_id };
}
