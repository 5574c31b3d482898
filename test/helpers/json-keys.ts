/**
 * The keys of a JSON object's top level, in the order written, duplicates kept: `JSON.parse` keeps
 * only the last of a repeated key, and a log shipper may keep the first, or refuse the line.
 */
export function topLevelKeys(raw: string): string[] {
  const keys: string[] = [];
  let depth = 0;
  for (let i = 0; i < raw.length; i++) {
    const ch = raw[i];
    if (ch === "{" || ch === "[") depth++;
    else if (ch === "}" || ch === "]") depth--;
    else if (ch === '"') {
      const start = i;
      for (i++; raw[i] !== '"'; i++) if (raw[i] === "\\") i++;
      if (depth === 1 && /^\s*:/.test(raw.slice(i + 1))) keys.push(JSON.parse(raw.slice(start, i + 1)));
    }
  }
  return keys;
}

/** The keys written more than once at a JSON object's top level. */
export const duplicateKeys = (raw: string) => topLevelKeys(raw).filter((k, i, all) => all.indexOf(k) !== i);
