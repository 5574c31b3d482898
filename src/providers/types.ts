import type { LanguageModel } from "ai";

/**
 * Provider interfaces, chosen once at start-up from configuration: the deterministic local ones by
 * default, the OpenAI-compatible ones when a model endpoint is configured.
 */
export interface Embedder {
  readonly name: string;
  readonly dim: number;
  /** One unit-length vector per text, in order. */
  embed(texts: string[]): Promise<number[][]>;
}

export interface Providers {
  kind: "local" | "openai";
  embedder: Embedder;
  /**
   * The chat model (AI SDK) when one is configured, else null. Search's context selection and the
   * trigger relevance gate use it through `generateText`; without it they fall back to their
   * deterministic paths.
   */
  llm: LanguageModel | null;
}
