import type { Config } from "../config.js";
import { createLocalEmbedder } from "./local-embedder.js";
import type { Providers } from "./types.js";

export function createProviders(config: Config): Providers {
  return { kind: "local", embedder: createLocalEmbedder(config.MNEMO_EMBEDDING_DIM), llm: null };
}
