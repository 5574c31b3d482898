import { createHash } from "node:crypto";
import type { Embedder } from "../types.js";
import { cjkSpaced, STOPWORDS, stem } from "./english.js";

/**
 * A deterministic embedding that needs no model file: hashed features (the hashing trick, signed),
 * L2-normalised. Features are content-word stems (weighted up with length, a stand-in for rarity),
 * adjacent content-word pairs, and character 4-grams of each word for spelling variants; a run of
 * Chinese, Japanese or Korean characters counts as its two-character pieces.
 */
export function createLocalEmbedder(dim: number): Embedder {
  const bucket = (feature: string): [number, number] => {
    const h = createHash("md5").update(feature).digest();
    return [h.readUInt32LE(0) % dim, h[4]! & 1 ? 1 : -1];
  };
  const embedOne = (text: string): number[] => {
    const v = new Float64Array(dim);
    const add = (f: string, w: number) => {
      const [i, s] = bucket(f);
      v[i]! += s * w;
    };
    // CJK runs as their two-character pieces, as full text reads them (cjkSpaced); the text in
    // NFKC without default-ignorable characters, as full text reads it too (sql/105), so "café"
    // composed or not, "ﬁlm" and "Ren<U+200B>ata" are the plain words.
    const plain = text.normalize("NFKC").replace(/\p{Default_Ignorable_Code_Point}/gu, "");
    const words = (cjkSpaced(plain.toLowerCase()).match(/[\p{L}\p{N}]+/gu) ?? []).filter(
      (w) => !STOPWORDS.has(w),
    );
    const stems = words.map(stem);
    const counts = new Map<string, number>();
    for (const s of stems) counts.set(s, (counts.get(s) ?? 0) + 1);
    for (const [s, n] of counts) {
      // Sublinear in repetitions, heavier for longer (usually rarer) words.
      const weight = (1 + Math.log(n)) * Math.min(1.5, 0.4 + s.length / 6);
      add(`w:${s}`, weight);
      const padded = `#${s}#`;
      const grams = Math.max(1, padded.length - 3);
      for (let j = 0; j + 4 <= padded.length; j++)
        add(`c:${padded.slice(j, j + 4)}`, (0.35 * weight) / grams);
    }
    for (let i = 0; i + 1 < stems.length; i++) add(`b:${stems[i]} ${stems[i + 1]}`, 0.4);
    let norm = 0;
    for (const x of v) norm += x * x;
    norm = Math.sqrt(norm) || 1;
    return Array.from(v, (x) => x / norm);
  };
  return { name: "local-hash", dim, embed: async (texts) => texts.map(embedOne) };
}
