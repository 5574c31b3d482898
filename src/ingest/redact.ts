import { truncate } from "../truncate.js";

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

/** Looks like a secret rather than a word: a digit or a symbol in it. */
const SECRET_LIKE = /[\d!#$%&*+/=?@^_~.-]/;
/** Or long and of mixed case, as base64 is (`dXNlcjpwYXNz`). */
const looksSecret = (value: string) =>
  SECRET_LIKE.test(value) || (value.length >= 12 && /[a-z]/.test(value) && /[A-Z]/.test(value));

/**
 * A credential's name, alone or as the end of a longer identifier (`DB_PASSWORD`, `githubToken`,
 * `SMTP_PASS`, `MNEMO_SECRET_KEY`, docker's `"auth"`, a kubeconfig's `client-key-data`). Matched
 * within the pattern, so the value of any other key (`"command": "..."`) is read again for the
 * secrets inside it.
 */
const NAME =
  "[A-Za-z0-9_-]*?(?:password|passwd|passphrase|pass|pwd|secret|token|credentials?|auth|(?:api|access|private|secret|encryption|account|signing|master)[_-]?key|key[_-]?data|secret[_-]?key[_-]?base)";

/** A value that names no secret: a variable (`$PASSWORD`, `${TOKEN}`, `process.env.X`), a placeholder (`<token>`, `{{ secret }}`), a marker already. */
const VARIABLE = /^(?:\$|process\.env\.|os\.environ|<|\{\{|\[redacted\b)/;
/** Code, not a value: a property path (`config.apiToken`), a call or an index (`jwt.sign(...)`, `tokens[0]`). */
const CODE = /^[A-Za-z_$]+(?:\.[A-Za-z_$]+)+$|[([]/;

/**
 * A password or PIN named in another language than English (the rules below read English):
 * French, Spanish, Portuguese, German, Italian, Dutch, Russian, Chinese, Japanese, Korean. A word
 * that also means something else ("code", "clave", "codice") only with what makes it a credential.
 * The local classifier reads them too: a memory naming one is personal.
 */
export const CREDENTIAL_WORDS = [
  "mot de passe|code (?:pin|secret|confidentiel|d'accès|de (?:la )?carte)", // fr
  "contraseña|clave (?:de acceso|secreta|del? wi-?fi)|código (?:pin|secreto|de acceso)", // es
  "senha|palavra-passe", // pt
  "passwort|kennwort|geheimzahl|pin-?code|pin-nummer", // de, nl
  "parola d'ordine|codice (?:pin|segreto)", // it
  "wachtwoord", // nl
  "парол[ьяе]|пин-код", // ru
  "密码|密碼|口令", // zh
  "パスワード|暗証番号", // ja
  "비밀번호|암호", // ko
].join("|");
/** Not inside a word of a script written with spaces (a CJK word follows a letter: "我的密码"). */
const WORD_START = String.raw`(?<![\p{Script=Latin}\p{Script=Cyrillic}\p{N}])`;
/** Whether a text names a password or PIN in one of those languages. */
export const NAMES_CREDENTIAL = new RegExp(`${WORD_START}(?:${CREDENTIAL_WORDS})`, "iu");
/** "is" in those languages, also a colon or a dash; a CJK particle needs no space around it. */
const COPULA = String.raw`\s+(?:est|était|c['’]est|es|era|será|é|foi|ist|lautet|war|è|—|–)\s+`;
const COPULA_CJK = String.raw`\s*[:：是为為は는은]\s*`;
/** Up to five words between the credential and its "is" ("del wifi de la oficina", "meiner Karte"). */
const QUALIFIER = String.raw`(?:\s+[\p{L}'’-]+){0,5}?`;
/** A value said in a sentence: to a space, a quote, or CJK text or punctuation after it. */
const SAID_VALUE = String.raw`(["']?)([^\s"'”»」，。！？、；\p{Script=Han}\p{Script=Hangul}\p{Script=Hiragana}\p{Script=Katakana}]{3,})\2`;

/**
 * A password said in words ("my password is hunter2"): masked when it looks like a secret and has
 * at least four characters before the sentence's end, so "the LED pin is 13." stays.
 */
function saidSecret(kind: string, head: string, quote: string, value: string): string {
  const end = /[.,;:!?]+$/.exec(value)?.[0] ?? "";
  const core = value.slice(0, value.length - end.length);
  return core.length >= 4 && (quote || SECRET_LIKE.test(core)) && !VARIABLE.test(core)
    ? `${head}${quote}${marker(kind)}${quote}${end}`
    : `${head}${quote}${value}${quote}`;
}

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
  { kind: "Google OAuth token", pattern: /\bya29\.[0-9A-Za-z_-]{20,}/g },
  { kind: "SendGrid key", pattern: /\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}/g },
  {
    kind: "Discord webhook",
    pattern: /https:\/\/(?:canary\.|ptb\.)?discord(?:app)?\.com\/api\/webhooks\/\d+\/[A-Za-z0-9_-]+/g,
  },
  { kind: "Vault token", pattern: /\bhv[sbr]\.[A-Za-z0-9_-]{20,}/g },
  { kind: "Mnemo key", pattern: /\b(?:mnemo|whsec)_[A-Za-z0-9]{24,}\b/g },
  { kind: "JSON web token", pattern: /\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/g },
  {
    // scheme://user:password@host: the user and the host stay, they say what the account is.
    kind: "password",
    pattern: /(?<![a-z0-9+.-])([a-z][a-z0-9+.-]*:\/\/[^\s/:@]*):([^\s@/]+)@/gi,
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
    // A credential's name given a value: `PGPASSWORD=...`, `"api_key": "..."`, `token: ...`, also
    // JSON inside a string (`\"password\":\"...\"`). Identifiers are read from their start only
    // (the look-behind): starting again inside one made a long run of `a-a-a-...` quadratic.
    kind: "secret",
    pattern: new RegExp(
      `(?<![A-Za-z0-9_-])((\\\\?["']?)(${NAME})\\2\\s*([:=])\\s*)(?:(\\\\?["'\`])([^\\n]{1,300}?)\\5|([^\\s"'\`\\\\]{3,}))`,
      "gi",
    ),
    replace: (kind, head, _q, name, sep, quote, quoted, bare) => {
      const q = quote ?? "";
      // After a colon (JSON, YAML, a call's options) a bare value ends at `,;)}]`; after `=` (a
      // shell, an env file) it runs to the next space.
      let value = quoted ?? bare ?? "";
      let rest = "";
      if (!q && sep === ":") {
        const cut = value.search(/[,;)}\]]/);
        if (cut >= 0) [value, rest] = [value.slice(0, cut), value.slice(cut)];
      }
      const kept = `${head}${q}${value}${q}${rest}`;
      // The shell's working directory (`PWD=/home/ada`) is no password.
      const workingDir = /^(?:OLD)?PWD$/.test(name!) && /^[/~]/.test(value);
      if (workingDir || VARIABLE.test(value) || CODE.test(value) || /^\d+$/.test(value)) return kept;
      // A quoted word is a value only when it looks like a secret or is long: `"include"`, `"string"` are none.
      if (q ? !looksSecret(value) && value.length < 12 : !looksSecret(value) || value.length < 3) return kept;
      return `${head}${q}${marker(kind)}${q}${rest}`;
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
    // Passwords given to commands: `curl -u admin:...`, `docker login -p ...`, `sshpass -p ...`,
    // `redis-cli -a ...`, openssl's `pass:...`, `aws configure set aws_secret_access_key ...`, a
    // .netrc line.
    kind: "password",
    pattern:
      /((?:^|\s)(?:-u|--user)\s+["']?[^\s:'"]+:)([^\s'"]+)|(\b(?:docker|podman)\s+login\b[^\n]{0,200}?\s(?:-p|--password)\s+|\bsshpass\s+-p\s*|\bredis-cli\b[^\n]{0,200}?\s-a\s+|\bpass:|\baws\s+configure\s+set\s+\S*(?:secret|key|token)\S*\s+|\bmachine\s+\S+\s+login\s+\S+\s+password\s+)(\S+)/g,
    replace: (kind, userHead, _userValue, head, value) =>
      userHead !== undefined
        ? `${userHead}${marker(kind)}`
        : VARIABLE.test(value!) || value!.startsWith("-")
          ? `${head}${value}`
          : `${head}${marker(kind)}`,
  },
  {
    // "My password is hunter2", "the wifi password for the office is Tr0ub4dor3", "the passcode
    // was '8812'": said, not assigned. At least four characters before the sentence's end, so "the
    // LED pin is 13." and "the password is 12+ characters" stay.
    kind: "password",
    pattern:
      /\b((?:password|passcode|passphrase|pin(?: code)?)(?:\s+(?:for|of|to|on)(?:\s+[\w-]+){1,3})?\s+(?:is|was|will be)\s+)(["'“]?)([^\s"'”]{3,})\2/gi,
    replace: (kind, head, quote, value) => saidSecret(kind, head!, quote!, value!),
  },
  {
    // The same in other languages: "Mon mot de passe est Soleil2024!", "Mi PIN del banco es
    // 4821", "Mijn wachtwoord is Kat2024!", "我的密码是 Panda2024!", "비밀번호는 Panda2024!입니다".
    // English "password" and "PIN" here only before another language's "is" (Italian, Spanish).
    kind: "password",
    pattern: new RegExp(
      `(${WORD_START}(?:(?:password|pin)${QUALIFIER}${COPULA}|(?:${CREDENTIAL_WORDS})${QUALIFIER}(?:${COPULA}|\\s+(?:is|was)\\s+|${COPULA_CJK})))${SAID_VALUE}`,
      "giu",
    ),
    replace: (kind, head, quote, value) => saidSecret(kind, head!, quote!, value!),
  },
];

/** Whether a text holds a secret's marker: it is about a credential, and personal (src/ingest/run-job.ts). */
export const holdsRedacted = (text: string) => /\[redacted [^\]]+\]/.test(text);

/**
 * What a language model wrote, masked as a message is (`redact`: MNEMO_REDACT_SECRETS). A model
 * reads the masked turns, but it puts a secret together from several ("What password should I
 * set?", "How about Tr0ub4dor&3x?", "Done, I set it.", a key given in two halves) and writes it in
 * the form these rules read ("The user's staging database password is Tr0ub4dor&3x."): its facts,
 * episodes, lessons and answers pass here before they are stored or served.
 */
export const redactModelText = (text: string, redact: boolean) => (redact ? redactSecrets(text).text : text);

/**
 * A model's `text` masked (redactModelText) and cut to `max`: masked before the cut, which could
 * leave a secret's start that no rule reads, and after a first cut `margin` past it (a runaway
 * reply is not read whole by every rule).
 */
export const clipModelText = (text: string, max: number, redact: boolean, margin: number) =>
  truncate(redactModelText(truncate(text, max + margin), redact), max);

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
