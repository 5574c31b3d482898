/**
 * Secrets said in a conversation are masked before anything is kept or sent to a model: an ingest's
 * messages are redacted when it is accepted (src/ingest/submit.ts), so the job row, the facts,
 * episodes, gists and lessons made from them, and the extraction model's prompt never hold them.
 * A memory service shares what it learns with other agents, groups and keys; it is no password
 * store.
 *
 * The rules are precise rather than exhaustive: token formats that the issuers made recognisable
 * (prefixes such as `ghp_`, `sk-`, `AKIA`, `xoxb-`), private key blocks, credentials in URLs and
 * Authorization headers, and values assigned to a credential's name (`PGPASSWORD=...`,
 * `"api_key": "..."`, `--password ...`, "my password is ..."). A value there is masked only when
 * it looks like a secret (quoted, or holding a digit or a symbol), so "the password is too short"
 * stays as said. Each is replaced by a marker naming what it was (`[redacted GitHub token]`), so a
 * memory still says that the user has one. (secretlint's recommended preset was tried first: it
 * missed AWS key ids, `sk-proj-` keys and private keys, and its range for an AWS secret key left
 * part of the key in place.)
 */

/** A secret's replacement: what it was, never any of it. */
const marker = (kind: string) => `[redacted ${kind}]`;

/** Looks like a secret rather than a word: a digit or a symbol in it, or quoted (see CREDENTIAL). */
const SECRET_LIKE = /[\d!#$%&*+/=?@^_~.-]/;

/** A credential's name, alone or as the end of a longer identifier (`DB_PASSWORD`, `githubToken`). */
const NAME =
  /(?:password|passwd|passphrase|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credentials?)$/i;

/** A value that names no secret: a variable (`$PASSWORD`, `${TOKEN}`, `process.env.X`), a placeholder (`<token>`, `{{ secret }}`), a marker already. */
const VARIABLE = /^(?:\$|process\.env\.|os\.environ|<|\{\{|\[redacted\b)/;
/** A property path in code (`token: config.apiToken`): words and dots, no digit. */
const PROPERTY_PATH = /^[A-Za-z_$]+(?:\.[A-Za-z_$]+)+$/;

interface Rule {
  kind: string;
  pattern: RegExp;
  /** The replacement of one match; by default the whole match becomes the marker. */
  replace?: (kind: string, ...groups: string[]) => string;
}

const RULES: Rule[] = [
  {
    kind: "private key",
    pattern: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END [A-Z0-9 ]*-----|$)/g,
  },
  { kind: "AWS access key", pattern: /\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b/g },
  { kind: "GitHub token", pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b/g },
  { kind: "GitLab token", pattern: /(?<![A-Za-z0-9_-])glpat-[A-Za-z0-9_-]{20,}/g },
  {
    kind: "API key",
    pattern: /(?<![A-Za-z0-9_-])sk-(?:ant-|proj-|svcacct-|admin-)?(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{20,}/g,
  },
  { kind: "Stripe key", pattern: /\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}\b/g },
  { kind: "Slack token", pattern: /(?<![A-Za-z0-9_-])xox[abposr]-[A-Za-z0-9-]{10,}/g },
  { kind: "Slack webhook", pattern: /https:\/\/hooks\.slack\.com\/services\/[A-Za-z0-9/_-]+/g },
  { kind: "Google API key", pattern: /\bAIza[0-9A-Za-z_-]{35}\b/g },
  { kind: "npm token", pattern: /\bnpm_[A-Za-z0-9]{36}\b/g },
  { kind: "Hugging Face token", pattern: /\bhf_[A-Za-z0-9]{30,}\b/g },
  { kind: "Vault token", pattern: /\bhv[sbr]\.[A-Za-z0-9_-]{20,}/g },
  { kind: "Mnemo key", pattern: /\b(?:mnemo|whsec)_[A-Za-z0-9]{24,}\b/g },
  { kind: "JSON web token", pattern: /\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/g },
  {
    // scheme://user:password@host: the user and the host stay, they say what the account is.
    kind: "password",
    pattern: /(?<![a-z0-9+.-])([a-z][a-z0-9+.-]*:\/\/[^\s/:@]+):([^\s@/]+)@/gi,
    replace: (kind, head) => `${head}:${marker(kind)}@`,
  },
  {
    // An Authorization header's credentials; a plain word after "Basic" is no token.
    kind: "token",
    pattern:
      /\b(Bearer|Basic|Token)\s+((?=[A-Za-z0-9._~+/=-]*\d)[A-Za-z0-9._~+/=-]{16,}|[A-Za-z0-9._~+/=-]{24,})/g,
    replace: (kind, scheme) => `${scheme} ${marker(kind)}`,
  },
  {
    // A credential's name given a value: `PGPASSWORD=...`, `"api_key": "..."`, `token: ...`.
    kind: "secret",
    // Identifiers are read whole (the look-behind): starting again inside one made a long run of
    // `a-a-a-...` quadratic.
    pattern:
      /(?<![A-Za-z0-9_-])((["']?)([A-Za-z0-9_-]+)\2\s*[:=]\s*)(?:(["'`])([^"'`\n]{3,})\4|([^\s"'`,;)}\]]{3,}))/g,
    replace: (kind, head, _q, name, quote, quoted, bare) => {
      const value = quoted ?? bare ?? "";
      const q = quote ?? "";
      if (
        !NAME.test(name!) ||
        VARIABLE.test(value) ||
        PROPERTY_PATH.test(value) ||
        (!q && !SECRET_LIKE.test(value))
      )
        return `${head}${q}${value}${q}`;
      return `${head}${q}${marker(kind)}${q}`;
    },
  },
  {
    // Command-line options: `--password hunter2`, `--token=...`.
    kind: "secret",
    pattern: /(\s--(?:password|passwd|pass|token|api-key|apikey|secret|client-secret)(?:=|\s+))(\S+)/gi,
    replace: (kind, head, value) =>
      VARIABLE.test(value!) || value!.startsWith("-") ? `${head}${value}` : `${head}${marker(kind)}`,
  },
  {
    // mysql's password glued to `-p` (`-P3306` is the port: case matters).
    kind: "password",
    pattern: /(\bmysql(?:dump|admin)?\b[^\n]{0,200}?\s-p)(\S+)/g,
    replace: (kind, head) => `${head}${marker(kind)}`,
  },
  {
    // "My password is hunter2", "the wifi passcode was 8812": said, not assigned.
    kind: "password",
    pattern:
      /\b((?:password|passcode|passphrase|pin(?: code)?)\s+(?:is|was|will be)\s+)(["'“]?)([^\s"'”]{3,})\2/gi,
    replace: (kind, head, quote, value) =>
      quote || SECRET_LIKE.test(value!.replace(/[.,;:!?]+$/, ""))
        ? `${head}${quote}${marker(kind)}${quote}${/[.,;:!?]+$/.exec(value!)?.[0] ?? ""}`
        : `${head}${quote}${value}${quote}`,
  },
];

/** A text with its secrets masked, and the kinds masked (one entry per secret). */
export function redactSecrets(text: string): { text: string; kinds: string[] } {
  const kinds: string[] = [];
  let out = text;
  for (const rule of RULES) {
    out = out.replace(rule.pattern, (match: string, ...rest: unknown[]) => {
      // `rest` is the groups, then the offset, the whole string (and named groups, none here).
      const groups = rest.slice(0, -2) as (string | undefined)[];
      const replaced = rule.replace ? rule.replace(rule.kind, ...(groups as string[])) : marker(rule.kind);
      if (replaced !== match) kinds.push(rule.kind);
      return replaced;
    });
  }
  return { text: out, kinds };
}
