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
}
