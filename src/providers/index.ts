import { type Config, llmConfigured } from "../config.js";
import { createLocalClassifier } from "./local/classifier.js";
import { createLocalEmbedder } from "./local/embedder.js";
import { createLocalExtractor } from "./local/extractor.js";
import { createOpenAIProviders } from "./openai.js";
import type { Providers } from "./types.js";

/**
 * Chooses the providers once, at start-up: an OpenAI-compatible server (chat completions and
 * embeddings) when OPENAI_API_KEY or MNEMO_LLM_BASE_URL is set, else the deterministic local ones.
 */
export function createProviders(config: Config): Providers {
  if (llmConfigured(config)) {
    const p = createOpenAIProviders(config);
    return { kind: "openai", ...p };
  }
  return {
    kind: "local",
    embedder: createLocalEmbedder(config.MNEMO_EMBEDDING_DIM),
    llm: null,
    extractor: createLocalExtractor({ delayMs: config.MNEMO_TEST_EXTRACT_DELAY_MS }),
    classifier: createLocalClassifier(),
  };
}
