import { identifiersInText } from "../trigger/extract.js";

/**
 * The exact identifiers a directive is triggered by. Ingest uses the trigger's own rules
 * (src/trigger/extract.ts, DECISIONS.md "Trigger matching"), so a directive is stored with
 * precisely the identifiers that a tool call can produce. A backticked span with spaces is a
 * command line: its command name counts too (`npm run build` gives `npm`).
 */
export function extractIdentifiers(text: string): string[] {
  const found = new Set<string>();
  for (const m of text.matchAll(/`([^`\n]+)`/g)) identifiersInText(m[1]!, found, true);
  identifiersInText(text, found);
  return [...found];
}
