import { STOPWORDS } from "./english.js";

/**
 * Exact identifiers a directive is triggered by (DECISIONS.md "Trigger matching"): file paths and
 * their base names, dotted and `::` qualified names, snake_case, camelCase, PascalCase and
 * digit-bearing identifiers, error class names, command names and flags. Common words never count.
 */
const COMMANDS = new Set(
  (
    "npm npx pnpm yarn bun git docker kubectl helm pip pip3 python python3 node deno make cargo rustc go curl wget " +
    "psql pg_dump terraform brew apt apt-get tsc vitest jest pytest eslint biome prettier ssh scp rsync systemctl " +
    "journalctl grep sed awk tar gcc clang cmake gradle mvn java dotnet ruby gem bundle rails composer php"
  ).split(" "),
);
const FILE_EXT =
  "ts|tsx|js|jsx|mjs|cjs|py|json|yaml|yml|toml|md|sql|sh|go|rs|java|rb|css|scss|html|lock|env|cfg|ini|txt|c|h|cpp|hpp|cs|kt|swift|php|xml|csv|proto|tf|dockerfile";

const PATTERNS: RegExp[] = [
  // paths with a slash
  /(?:~|\.{1,2})?\/?(?:[\w.@-]+\/)+[\w.@-]+/g,
  // bare file names
  new RegExp(`\\b[\\w-]+(?:\\.[\\w-]+)*\\.(?:${FILE_EXT})\\b`, "gi"),
  // Dockerfile, Makefile
  /\b(?:Dockerfile|Makefile|Procfile|Gemfile|Rakefile)\b/g,
  // dotted / :: qualified names
  /\b[A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)+\b/g,
  // snake_case / SCREAMING_SNAKE
  /\b[A-Za-z0-9]+(?:_[A-Za-z0-9]+)+\b/g,
  // camelCase
  /\b[a-z]+[A-Z][A-Za-z0-9]*\b/g,
  // PascalCase with at least two humps, error classes
  /\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+\b/g,
  /\b[A-Z]\w*(?:Error|Exception)\b/g,
  // identifiers with digits (utf8, s3, http2), letters first
  /\b[A-Za-z]{2,}\d+[A-Za-z0-9]*\b/g,
  // flags
  /(?<![\w-])--?[A-Za-z][\w-]*(?:=[\w.-]+)?/g,
];

const NOT_IDENTIFIERS = new Set(["e.g", "i.e", "etc", "vs", "a.m", "p.m", "U.S", "Mr.", "Dr."]);

export function extractIdentifiers(text: string): string[] {
  const found = new Set<string>();
  const add = (raw: string) => {
    const v = raw.replace(/^[("'`]+|[)"'`,;:.]+$/g, "");
    if (v.length < 2 || NOT_IDENTIFIERS.has(v)) return;
    if (/^\d+([./]\d+)*$/.test(v)) return; // numbers, dates, versions alone
    if (STOPWORDS.has(v.toLowerCase())) return;
    if (/^-{1,2}$/.test(v)) return;
    found.add(v);
    if (v.includes("/")) {
      const base = v.split("/").pop()!;
      if (base && base.length > 1) found.add(base);
    }
  };
  // backticked spans: the span itself when it is one token, else its command name and flags
  for (const m of text.matchAll(/`([^`\n]+)`/g)) {
    const span = m[1]!.trim();
    if (!/\s/.test(span)) add(span);
    else {
      const first = span.split(/\s+/)[0]!;
      if (COMMANDS.has(first) || /^[\w.-]+$/.test(first)) add(first);
    }
  }
  for (const re of PATTERNS) for (const m of text.matchAll(re)) add(m[0]);
  for (const w of text.match(/[\w.-]+/g) ?? []) if (COMMANDS.has(w)) found.add(w);
  // A path's components that are plain words are not identifiers on their own.
  return [...found].filter((v) => !/^https?:/.test(v));
}
