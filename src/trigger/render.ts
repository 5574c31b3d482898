import type { MemoryRow } from "../db/memory-row.js";
import { unverified, type Verdict } from "./gate.js";

/**
 * Markdown advice for the agent: resolved directives as plain advice, those without an outcome
 * hedged as unverified; procedures with their numbered steps.
 */
export function renderDirectives(items: { row: MemoryRow; matchedOn: string[]; verdict: Verdict }[]): string {
  if (items.length === 0) return "";
  const block = (type: "lesson" | "procedure", heading: string) => {
    const of = items.filter((i) => i.row.type === type);
    if (!of.length) return "";
    const lines = of.map(({ row, matchedOn }) => {
      const hedge = unverified(row) ? "(unverified) " : "";
      const on = matchedOn.length ? ` _(matched on ${matchedOn.map((m) => `\`${m}\``).join(", ")})_` : "";
      const text = row.text.replace(/\s+/g, " ").trim();
      // Steps the text already lists (a procedure learned without a model reads "Heading: 1. ...")
      // are not listed twice.
      const given = Array.isArray(row.details?.steps) ? (row.details.steps as unknown[]).map(String) : [];
      const steps = given.every((s) => text.includes(s.replace(/\s+/g, " ").trim()))
        ? ""
        : given.map((s, n) => `   ${n + 1}. ${s}`).join("\n");
      return `- ${hedge}${text}${on}${steps ? `\n${steps}` : ""}`;
    });
    return `### ${heading}\n${lines.join("\n")}`;
  };
  const sections = [block("lesson", "Lessons"), block("procedure", "Procedures")].filter(Boolean);
  return `## Recalled for this tool call\n\n${sections.join("\n\n")}\n`;
}
