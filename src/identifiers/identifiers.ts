import { foldLatin } from "../fold.js";
import { COMMON_WORDS } from "./common-words.js";

/**
 * Identifier extraction, shared by trigger (what a tool call names) and ingest (what a directive is
 * triggered by), so a directive is stored with precisely the identifiers a tool call can produce.
 */

/** The in-flight tool call: tool name, its arguments and its output, each optional. */
export interface ActionContext {
  tool?: string | null | undefined;
  args?: Record<string, unknown> | null | undefined;
  output?: string | null | undefined;
}

// Bounds on one call: the hook runs before every tool call, and outputs can be megabytes.
const MAX_SCAN_CHARS = 32_000;
const MAX_IDENTIFIERS = 512;
const MAX_DEPTH = 12;

/** Package runners: the command they run is named by their first argument. */
export const RUNNERS = new Set(["npx", "pnpx", "bunx"]);

/** Keys whose string values are shell commands: their first word is a command name. */
const COMMAND_KEYS = /^(cmd|command|commands|script|shell|exec|run)$/i;
/** Tools whose arguments are shell commands. */
const SHELL_TOOL = /(bash|shell|terminal|exec|command|run_?cmd|sh)$/i;

const SPLIT = /[\s"'`()[\]{}<>,;=|&!?*$#\u0000]+/;
const FLAG = /^--?[A-Za-z][\w-]*$/;
// Path parts and file names in any script (`src/données/schéma.sql`, `src/数据/模型.sql`): `\w`
// and combining marks beyond ASCII. File extensions stay ASCII.
const PATH = /^(?:[A-Za-z]:)?[~.\p{L}\p{M}\p{N}_@+-]*(?:[/\\][\p{L}\p{M}\p{N}_.@+-]+)+[/\\]?$/u;
const FILE_NAME = /^[\p{L}\p{M}\p{N}_+-]+(?:\.[\p{L}\p{M}\p{N}_+-]+)*\.[A-Za-z][A-Za-z0-9]{0,7}$/u;
const QUALIFIED = /^[A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)+$/;
const SNAKE = /^_*[A-Za-z][A-Za-z0-9]*(?:_+[A-Za-z0-9]+)+_*$/;
const CAMEL = /^[a-z][a-z0-9]*[A-Z][A-Za-z0-9]*$/;
const PASCAL = /^[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*$/;
const WITH_DIGITS = /^[A-Za-z][A-Za-z-]*\d[\w-]*$/;
const CONSTANT = /^[A-Z][A-Z0-9]*_?[A-Z0-9_]{2,}$/;
const KEBAB_TOOL = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)+$/;

/** A single word shaped like code: snake_case, camelCase, PascalCase, with digits, CONSTANT_CASE. */
export function isIdentifierWord(w: string): boolean {
  if (w.length < 3 || COMMON_WORDS.has(w.toLowerCase())) return false;
  return (
    SNAKE.test(w) ||
    CAMEL.test(w) ||
    PASCAL.test(w) ||
    WITH_DIGITS.test(w) ||
    CONSTANT.test(w) ||
    KEBAB_TOOL.test(w)
  );
}

/** A path's last part, without a closing `/` (`generated` of `src/generated/`). */
export const baseName = (p: string) => p.replace(/[/\\]+$/, "").replace(/^.*[/\\]/, "");

/**
 * Directory names that every project has (`/var/log/app`, `~/web/app`, `src`): a path's base name
 * counts as an identifier of its own only when it names something in particular, so a lesson about
 * `/var/log/app` is not recalled for a call on some other `app`. The whole path still counts.
 */
const GENERIC_BASES = new Set(
  `app apps src lib libs bin sbin tmp temp var etc usr opt home root log logs conf config configs
  build dist out target doc docs public static assets script scripts vendor packages pkg internal
  cmd web www server client test tests spec specs data cache node_modules`.split(/\s+/),
);

/**
 * The upper-case name of a conventional file (`README.md`, `CHANGELOG.md`, `LICENSE.txt`): a rule
 * says "README", a call edits `docs/README.md`.
 */
function shoutedStem(file: string): string | null {
  const stem = file.split(".")[0]!;
  return /^[A-Z][A-Z0-9_]{3,}$/.test(stem) && !COMMON_WORDS.has(stem.toLowerCase()) ? stem : null;
}

/** A path's base name, when it counts as an identifier of its own (see GENERIC_BASES). */
function distinctBase(path: string): string | null {
  const base = baseName(path);
  if (!base || base === "." || base === "..") return null;
  const lower = base.toLowerCase();
  return COMMON_WORDS.has(lower) || GENERIC_BASES.has(lower) ? null : base;
}

/** Dotfiles and dot-directories a rule may name (`.env`, `.npmrc`, `.github`): not a sentence's dot. */
const DOTFILE =
  /^\.(?:env(?:\.[\w-]+)?|[a-z]+rc|git(?:ignore|attributes|modules|hub|lab-ci\.yml)?|profile|editorconfig|dockerignore|npmignore|htaccess|htpasswd|pgpass|netrc|ssh|vscode|idea|aws|kube|terraform|venv|tool-versions|nvmrc)$/;

/** Identifiers in one token (already split on whitespace and punctuation). */
function fromToken(raw: string, out: Set<string>) {
  const dotfile = raw.replace(/[.:,]+$/, "");
  if (DOTFILE.test(dotfile)) {
    out.add(dotfile);
    return;
  }
  // Trailing sentence punctuation and a `:line:col` suffix are not part of the name.
  const token = raw
    .replace(/^[.:]+(?=[^./\\])/, "")
    .replace(/[.:,]+$/, "")
    .replace(/:\d+(?::\d+)?$/, "");
  if (token.length < 2 || /^[a-z]+:\/\//i.test(raw)) return;
  if (FLAG.test(token)) {
    if (token.length > 2 || /^-[A-Za-z]$/.test(token)) out.add(token);
    return;
  }
  if (PATH.test(token) && /[/\\]/.test(token)) {
    out.add(token);
    const base = distinctBase(token);
    if (base) out.add(base);
    const stem = base && shoutedStem(base);
    if (stem) out.add(stem);
    return;
  }
  if (FILE_NAME.test(token) && !/^\d/.test(token) && !QUALIFIED.test(token)) {
    out.add(token);
    const stem = shoutedStem(token);
    if (stem) out.add(stem);
    return;
  }
  if (QUALIFIED.test(token)) {
    out.add(token);
    const last = token.split(/\.|::/).pop()!;
    if (isIdentifierWord(last)) out.add(last);
    return;
  }
  if (isIdentifierWord(token)) out.add(token);
}

/** A command's name as it may count: a word, no common one. */
const isCommandName = (w: string) => /^[A-Za-z][\w.+-]*$/.test(w) && !COMMON_WORDS.has(w.toLowerCase());

/** Words after a verb in lower-case prose ("run the tests", "make sure", "go to"): no subcommand. */
const PROSE_AFTER_VERB = new Set(
  "a an the to of in on at by for with from and or but so it its this that these those is are be not no me my our your you we us them him her sure up out over into ahead back away".split(
    " ",
  ),
);

/**
 * Whether the words of a command line name their command though it is a common word (`make lint`,
 * `go test ./...`): in lower case, followed by a subcommand, a flag or a path, as prose is not
 * ("run the tests", "make sure it builds").
 */
const commandLine = (words: string[]) =>
  /^[a-z][a-z0-9]*$/.test(words[0] ?? "") &&
  words.length >= 2 &&
  /^(?:--?[A-Za-z][\w-]*|\.{0,2}\/\S*|[a-z][\w.:@/+-]*)$/.test(words[1]!) &&
  !PROSE_AFTER_VERB.has(words[1]!);

/** Identifiers in free text; `commandLike` also takes each command's first word (`npm`, `pytest`). */
function identifiersInText(text: string, out: Set<string>, commandLike = false) {
  const scanned = text.length > MAX_SCAN_CHARS ? text.slice(0, MAX_SCAN_CHARS) : text;
  if (commandLike) {
    for (const segment of scanned.split(/&&|\|\||[|;\n]/)) {
      const words = segment.trim().split(/\s+/);
      const cmd = baseName(words[0] ?? "");
      if (isCommandName(cmd) || commandLine(words)) out.add(cmd);
      // A package runner runs the command it names: `npx yarn@1 add x` runs yarn.
      if (RUNNERS.has(cmd)) {
        const ran = words
          .slice(1)
          .find((w) => !w.startsWith("-"))
          ?.replace(/(?<=.)@[^/]*$/, "");
        if (ran && isCommandName(ran)) out.add(ran);
      }
    }
  }
  for (const token of scanned.split(SPLIT)) {
    if (out.size >= MAX_IDENTIFIERS) return;
    if (token) fromToken(token, out);
  }
}

/**
 * A string is read as a command line when it sits under a command-like key, or is a direct
 * argument of a shell tool; deeper prose is not, so its first word never passes for a command.
 */
function walk(value: unknown, out: Set<string>, commandLike: boolean, depth: number, shellTool = false) {
  if (depth > MAX_DEPTH || out.size >= MAX_IDENTIFIERS) return;
  if (typeof value === "string") identifiersInText(value, out, commandLike);
  else if (Array.isArray(value)) for (const v of value) walk(v, out, commandLike, depth + 1);
  else if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      const direct = shellTool && depth === 0 && typeof v === "string";
      walk(v, out, commandLike || direct || COMMAND_KEYS.test(k), depth + 1);
    }
  }
}

/**
 * The greppable identifiers of a tool call: the tool name, every
 * string inside `args` (walked recursively) and `output` — file paths and their base names, dotted
 * and `::` qualified names, snake/camel/Pascal case and digit-bearing identifiers, error class
 * names, command names and flags. Common words never count.
 */
export function identifiersFromAction(action: ActionContext): string[] {
  const out = new Set<string>();
  const tool = action.tool?.replace(/\u0000/g, "").trim();
  if (tool) {
    out.add(tool);
    identifiersInText(tool, out);
  }
  const shell = !!tool && SHELL_TOOL.test(tool);
  if (action.args) walk(action.args, out, false, 0, shell);
  if (action.output) identifiersInText(action.output, out);
  return withPathTails(out);
}

/**
 * The identifiers plus the relative paths inside each path they hold: an agent names the file it
 * edits by its absolute path (`/home/dev/shop/src/db/migrate.ts`), a rule by the project's
 * (`src/db/migrate.ts`), and only the base name met before. Every tail of two or more parts
 * counts (`shop/src/db/migrate.ts`, `src/db/migrate.ts`, `db/migrate.ts`), and a `./` or `~/`
 * lead is dropped. So do the directories the path lies in, by the same tails, with and without a
 * closing `/`, and a rooted path's from its root (`/etc/nginx` from `/etc/nginx/conf.d/app.conf`): a
 * rule about `db/migrations` bears on `db/migrations/0042_add_orders.sql`. Only the last 8 parts
 * of a path count (the first 8 from its root), and a directory of one part (`db`, `/etc`) is no
 * identifier of its own.
 */
function withPathTails(ids: Set<string>): string[] {
  const out = new Set(ids);
  for (const id of ids) {
    if (!/[/\\]/.test(id)) continue;
    const all = id
      .replace(/^(?:\.{1,2}|~)?[/\\]+/, "")
      .split(/[/\\]+/)
      .filter(Boolean);
    const parts = all.slice(-8);
    // end: the path itself, then each directory it lies in; i: where the tail starts.
    for (let end = parts.length; end >= 2; end--) {
      for (let i = 0; i < end - 1; i++) {
        if (out.size >= MAX_IDENTIFIERS) return [...out];
        const tail = parts.slice(i, end).join("/");
        out.add(tail);
        if (end < parts.length) out.add(`${tail}/`);
      }
    }
    // A rooted path's directories as written from its root too (`/etc/nginx` for a rule about it).
    const root = /^(?:~[/\\]|[/\\])/.exec(id)?.[0];
    if (!root) continue;
    for (let end = Math.min(all.length - 1, 8); end >= 2; end--) {
      if (out.size >= MAX_IDENTIFIERS) return [...out];
      const dir = `${root}${all.slice(0, end).join("/")}`;
      out.add(dir);
      out.add(`${dir}/`);
    }
  }
  return [...out];
}

/**
 * The identifiers of free text, by the same rules as a tool call's: what ingest stores as a
 * directive's trigger entities. A backticked span with spaces is a command line: its command name
 * counts too (`npm run build` gives `npm`).
 */
export function identifiersFromText(text: string): string[] {
  const found = new Set<string>();
  const code: Array<[number, number]> = [];
  for (const m of text.matchAll(/`([^`\n]+)`/g)) {
    identifiersInText(m[1]!, found, true);
    code.push([m.index, m.index + m[0].length]);
  }
  identifiersInText(text, found);
  const scanned = text.length > MAX_SCAN_CHARS ? text.slice(0, MAX_SCAN_CHARS) : text;
  // A command named in lower case counts anywhere. Capitalised, it counts only where it is used as
  // a tool ("Never run Docker here", "Git: always rebase", see usedAsTool): a call runs it as
  // `docker`, `git`, but "I met Gem", "a silly Git", "Java island" and "Python is great" name a
  // person, a place, a topic. Only a word whose lower case is a known command counts.
  let lastTool = -1;
  for (const m of scanned.matchAll(/(?<![\w./-])[A-Za-z][a-z0-9-]*[a-z0-9](?![\w/-])/g)) {
    const command = m[0].toLowerCase();
    if (!KNOWN_COMMANDS.has(command) || found.size >= MAX_IDENTIFIERS) continue;
    const at = m.index;
    const inCode = code.some(([from, to]) => at > from && at < to);
    const tool =
      m[0] === command ||
      inCode ||
      usedAsTool(scanned.slice(scanned.lastIndexOf("\n", at) + 1, at), scanned.slice(at + m[0].length)) ||
      // Listed with a tool just named: "use Docker or Podman", "install Node, Yarn and Git".
      (lastTool >= 0 && /^\s*(?:,|\/|,?\s*(?:and|or|nor))\s*$/.test(scanned.slice(lastTool, at)));
    if (!tool) continue;
    found.add(command);
    lastTool = at + m[0].length;
  }
  return [...found];
}

/**
 * The verbs and phrases after which a capitalised word names a tool in use: "run Docker", "use
 * the Docker CLI", "switch to Yarn", "instead of Npm".
 */
const TOOL_OBJECT =
  /\b(?:use|uses|using|used|run|runs|running|install|installs|installing|reinstall|uninstall|upgrade|update|try|trying|prefer|avoid|avoiding|invoke|launch|restart|(?:switch|switched|switching|migrate|migrating)(?: back)? (?:to|from)|go(?:ing)? back to|stop using|instead of|rather than)\s+(?:the\s+)?$/i;

/**
 * Whether a capitalised word, after `before` on its line and before `after`, names a tool in use:
 * the object of use/run/install/switch to/prefer/avoid ..., a label opening a line ("Git: always
 * rebase"), or a command before a flag ("Docker --version").
 */
function usedAsTool(before: string, after: string): boolean {
  return (
    TOOL_OBJECT.test(before.slice(-40)) ||
    (/^\s*(?:[-*\u2022]\s*)?$/.test(before) && /^:\s/.test(after)) ||
    /^\s+--?[A-Za-z]/.test(after)
  );
}

/**
 * Command names that are no English word, so prose naming one means the command ("run npm test
 * before you push" is triggered by `npm`, "Never run Docker here" by `docker`): a tool call's
 * shell command yields its first word. Not `kind` (the Kubernetes tool): "what kind of", "Kind
 * regards".
 */
const KNOWN_COMMANDS = new Set(
  `npm npx pnpm yarn bun deno node nodejs tsc tsx vitest jest eslint biome prettier webpack vite
  git gh hg svn docker podman kubectl helm minikube terraform ansible vagrant pulumi
  pip pip3 pipx python python3 pytest poetry conda uv ruff mypy cargo rustc rustup gofmt
  mvn gradle javac java kotlinc dotnet nuget composer php bundler rspec gem irb
  psql pg_dump pg_restore mysql sqlite3 redis-cli mongosh
  aws gcloud az heroku flyctl vercel netlify wrangler kubectx
  curl wget ssh scp rsync systemctl journalctl brew apt apt-get dnf yum pacman
  cmake gcc clang ffmpeg jq sed awk grep
  rm rmdir mv cp chmod chown pkill killall sudo tar unzip xargs dd mkfs crontab nohup tmux vim nano`
    .split(/\s+/)
    .filter(Boolean),
);

/** Whether a word is a command name that is no English word (`npm`, `psql`, `docker`). */
export const isKnownCommand = (word: string): boolean => KNOWN_COMMANDS.has(word);

/**
 * Tools that are alternatives for one job, so that one can be said to replace the other ("We use
 * pnpm, not npm."): package managers, installers, test runners, container CLIs and the like of one
 * ecosystem. Tools of different jobs (git and pnpm, node and docker, kubectl and helm) are no such
 * pair. A member "program --flag" is that program only when run with the flag (`node --test`).
 */
const TOOL_FAMILIES: string[][] = [
  ["npm", "pnpm", "yarn", "bun"],
  ["npx", "pnpx", "bunx"],
  ["pip", "pip3", "pipx", "poetry", "uv", "pipenv", "conda"],
  ["jest", "vitest", "mocha", "ava", "jasmine", "node --test"],
  ["pytest", "nose2", "unittest"],
  ["node", "nodejs", "deno", "bun"],
  ["docker", "podman", "nerdctl"],
  ["eslint", "biome", "oxlint"],
  ["prettier", "biome", "dprint"],
  ["ruff", "flake8", "pylint"],
  ["black", "ruff", "autopep8"],
  ["mypy", "pyright"],
  ["webpack", "vite", "rollup", "esbuild", "parcel"],
  ["mvn", "gradle"],
  ["git", "hg", "svn"],
  ["curl", "wget"],
  ["brew", "apt", "apt-get", "dnf", "yum", "pacman"],
];

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The families of TOOL_FAMILIES `program` is in, as `text` runs it. */
function familiesOf(program: string, text: string): Set<number> {
  const out = new Set<number>();
  TOOL_FAMILIES.forEach((family, k) => {
    for (const member of family) {
      const [name, flag] = member.split(" ");
      if (name !== program) continue;
      if (!flag || new RegExp(`\\b${escapeRe(name)}\\b[^\\n\`]*\\s${escapeRe(flag)}\\b`).test(text))
        out.add(k);
    }
  });
  return out;
}

/**
 * Whether two programs, as the texts that name them run them, are alternatives for the same job
 * (TOOL_FAMILIES): `npm` and `pnpm`, `npx vitest` and `node --test`; not `git` and `pnpm`.
 */
export function sameJob(one: string, oneText: string, other: string, otherText: string): boolean {
  const theirs = familiesOf(other, otherText);
  return [...familiesOf(one, oneText)].some((k) => theirs.has(k));
}

/** Pre-extracted entities, as given (trimmed, deduplicated), plus the base names and tails of paths. */
export function normaliseEntities(entities: string[]): string[] {
  const out = new Set<string>();
  for (const e of entities) {
    const t = e.trim();
    if (!t) continue;
    out.add(t);
    if (/[/\\]/.test(t)) {
      const base = distinctBase(t);
      if (base) out.add(base);
    }
  }
  return withPathTails(out);
}

/**
 * Which of a directive's trigger entities a set of identifiers hit: those it names exactly (Latin
 * accents aside, as the lookup by `trigger_keys` matches: `schéma.sql` and `schema.sql`), and a
 * path it names by base name only when the directive does not carry that base name as an entity of
 * its own (then the base name is what was hit, not the path: `migrate.ts` in `lib/migrate.ts` hits
 * `migrate.ts`, not `src/db/migrate.ts`).
 */
export function matchedOn(triggerEntities: string[], identifiers: Set<string>): string[] {
  const own = new Set(triggerEntities.map(foldLatin));
  const hit = new Set([...identifiers].map(foldLatin));
  return triggerEntities.filter((e) => {
    if (hit.has(foldLatin(e))) return true;
    const base = foldLatin(baseName(e));
    return base !== foldLatin(e) && hit.has(base) && !own.has(base);
  });
}
