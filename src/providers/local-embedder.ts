import { createHash } from "node:crypto";
import type { Embedder } from "./types.js";

/**
 * A deterministic embedding that needs no model file: hashed word and character n-gram features,
 * signed (the hashing trick), then L2-normalised. Similar wording lands close in cosine space.
 */
export function createLocalEmbedder(dim: number): Embedder {
  const bucket = (feature: string): [number, number] => {
    const h = createHash("md5").update(feature).digest();
    return [h.readUInt32LE(0) % dim, h[4]! & 1 ? 1 : -1];
  };
  const embedOne = (text: string): number[] => {
    const v = new Float64Array(dim);
    const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
    const add = (f: string, w: number) => {
      const [i, s] = bucket(f);
      v[i]! += s * w;
    };
    for (let i = 0; i < words.length; i++) {
      add(`w:${words[i]}`, 1);
      if (i + 1 < words.length) add(`b:${words[i]} ${words[i + 1]}`, 0.5);
      const w = `#${words[i]}#`;
      for (let j = 0; j + 3 <= w.length; j++) add(`c:${w.slice(j, j + 3)}`, 0.25);
    }
    let norm = 0;
    for (const x of v) norm += x * x;
    norm = Math.sqrt(norm) || 1;
    return Array.from(v, (x) => x / norm);
  };
  return { name: "local-hash", dim, embed: async (texts) => texts.map(embedOne) };
}
