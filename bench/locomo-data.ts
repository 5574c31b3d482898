import { readFileSync } from "node:fs";

/** One conversation of a LoCoMo-shaped file, normalised. */
export interface Conversation {
  id: string;
  speakers: [string, string];
  sessions: { n: number; date: string; turns: { speaker: string; dia_id: string; text: string }[] }[];
  questions: { question: string; category: number; evidence: string[] }[];
}

const EVIDENCE_ID = /D:?(\d+):(\d+)/g;

/**
 * Reads any file of the LoCoMo shape: sessions `session_N` with `session_N_date_time` (date keys
 * without a session are skipped), image turns carry their caption, and evidence ids are read
 * with `D:?(\d+):(\d+)`, keeping only ids that are turns of the conversation.
 */
export function loadLocomo(file: string): Conversation[] {
  const raw = JSON.parse(readFileSync(file, "utf8")) as any[];
  return raw.map((item, idx) => {
    const conv = item.conversation ?? {};
    const sessions: Conversation["sessions"] = [];
    for (const key of Object.keys(conv)) {
      const m = /^session_(\d+)$/.exec(key);
      if (!m || !Array.isArray(conv[key])) continue;
      const n = Number(m[1]);
      const turns = (conv[key] as any[])
        .filter((t) => t && typeof t.dia_id === "string")
        .map((t) => ({
          speaker: String(t.speaker ?? "speaker"),
          dia_id: t.dia_id as string,
          text: `${String(t.text ?? "")}${t.blip_caption ? ` [shares an image: ${t.blip_caption}]` : ""}`.trim(),
        }));
      sessions.push({ n, date: String(conv[`${key}_date_time`] ?? ""), turns });
    }
    sessions.sort((a, b) => a.n - b.n);
    const known = new Set(sessions.flatMap((s) => s.turns.map((t) => t.dia_id)));
    const questions = ((item.qa ?? []) as any[]).flatMap((q) => {
      const ids = new Set<string>();
      for (const e of (Array.isArray(q.evidence) ? q.evidence : []) as unknown[]) {
        for (const m of String(e).matchAll(EVIDENCE_ID)) {
          const id = `D${Number(m[1])}:${Number(m[2])}`;
          if (known.has(id)) ids.add(id);
        }
      }
      return ids.size && typeof q.question === "string"
        ? [{ question: q.question, category: Number(q.category), evidence: [...ids] }]
        : [];
    });
    return {
      id: String(item.sample_id ?? `conv-${idx}`),
      speakers: [String(conv.speaker_a ?? "A"), String(conv.speaker_b ?? "B")],
      sessions,
      questions,
    };
  });
}

/** Evidence recall@k tallies per category. */
export class RecallTable {
  readonly ks = [1, 5, 10, 20];
  private sums = new Map<number, { n: number; r: number[] }>();

  add(category: number, evidence: string[], rankedTurns: string[][]) {
    const entry = this.sums.get(category) ?? { n: 0, r: this.ks.map(() => 0) };
    this.ks.forEach((k, i) => {
      const seen = new Set(rankedTurns.slice(0, k).flat());
      entry.r[i]! += evidence.filter((e) => seen.has(e)).length / evidence.length;
    });
    entry.n += 1;
    this.sums.set(category, entry);
  }

  private row(label: string, cats: number[]): string {
    const parts = cats.map((c) => this.sums.get(c)).filter((e) => e !== undefined);
    const n = parts.reduce((s, e) => s + e.n, 0);
    const cells = this.ks.map((_, i) => (n ? parts.reduce((s, e) => s + e.r[i]!, 0) / n : 0).toFixed(3));
    return `| ${label} (n=${n}) | ${cells.join(" | ")} |`;
  }

  render(retriever: string): string {
    const names: Record<number, string> = {
      1: "multi-hop",
      2: "temporal",
      3: "open-domain",
      4: "single-hop",
      5: "adversarial",
    };
    const cats = [...this.sums.keys()].sort((a, b) => a - b);
    return [
      "| retriever | R@1 | R@5 | R@10 | R@20 |",
      "|---|---|---|---|---|",
      this.row(
        `${retriever}, categories 1-5`,
        cats.filter((c) => c >= 1 && c <= 5),
      ),
      this.row(
        `${retriever}, categories 1-4`,
        cats.filter((c) => c >= 1 && c <= 4),
      ),
      ...cats.map((c) => this.row(`${retriever}, category ${c} ${names[c] ?? ""}`.trimEnd(), [c])),
    ].join("\n");
  }
}
