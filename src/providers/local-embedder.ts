import { createHash } from "node:crypto";
import type { Embedder } from "./types.js";

/**
 * Function words carry no topic: left in, they dominate the cosine of short texts (two turns of
 * chat match on "I", "you", "the"). Hashed features cannot learn IDF, so they are dropped here.
 */
const STOPWORDS = new Set(
  `a about above after again all also am an and any are as at be because been before being below
  between both but by can could did do does doing down during each few for from further had has
  have having he her here hers herself him himself his how i if in into is it its itself just me
  more most my myself no nor not now of off on once only or other our ours out over own same she
  should so some such than that the their theirs them then there these they this those through to
  too under until up very was we were what when where which while who whom why will with would you
  your yours yourself yeah yes oh ok okay really so just got get gonna lot lots thing things`
    .split(/\s+/)
    .filter(Boolean),
);

/** A light suffix strip so that "paints", "painted" and "painting" share a feature. */
function stem(w: string): string {
  if (w.length <= 4) return w;
  for (const suffix of ["ations", "ation", "ings", "ing", "edly", "ed", "ies", "es", "ly", "s"]) {
    if (w.endsWith(suffix) && w.length - suffix.length >= 3) {
      return suffix === "ies" ? `${w.slice(0, -3)}y` : w.slice(0, -suffix.length);
    }
  }
  return w;
}

/**
 * A deterministic embedding that needs no model file: hashed features (the hashing trick, signed),
 * L2-normalised. Features are content-word stems (weighted up with length, a stand-in for rarity),
 * adjacent content-word pairs, and character 4-grams of each word for spelling variants.
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
    const words = (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => !STOPWORDS.has(w));
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
