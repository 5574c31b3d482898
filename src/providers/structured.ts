import { generateText, type LanguageModel, Output } from "ai";
import type { z } from "zod";
import type { Config } from "../config.js";

/**
 * One structured-output call to the configured chat model, with the configured retries and
 * time-out: the shape every model call of the service takes (extraction, classification,
 * context selection, the relevance gate). The time-out bounds the call with its retries:
 * MNEMO_LLM_TIMEOUT_MS, or `timeoutMs` (a request's, MNEMO_LLM_REQUEST_TIMEOUT_MS). Errors
 * propagate; each caller decides its fallback.
 */
export async function generateStructured<T>(
  model: LanguageModel,
  config: Config,
  call: { schema: z.ZodType<T>; system: string; prompt: string; timeoutMs?: number },
): Promise<T> {
  const { output } = await generateText({
    model,
    output: Output.object({ schema: call.schema }),
    maxRetries: config.MNEMO_LLM_MAX_RETRIES,
    abortSignal: AbortSignal.timeout(call.timeoutMs ?? config.MNEMO_LLM_TIMEOUT_MS),
    system: call.system,
    prompt: call.prompt,
  });
  return output as T;
}
