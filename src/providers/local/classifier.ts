import { identifiersFromText } from "../../identifiers/identifiers.js";
import { NAMES_CREDENTIAL } from "../../ingest/redact.js";
import type { Classification, Classifier, ClassifyItem } from "../types.js";
import { contentWords, stem } from "./english.js";

/**
 * The rule-based classifier, used when no language model is configured: health, family,
 * finances, credentials (also a password or PIN named in the main European languages, Russian,
 * Chinese, Japanese or Korean: `CREDENTIAL_WORDS`) and contact details are personal; content about work, tools, code,
 * products or shared knowledge is shareable; anything else is personal (if unsure, personal).
 * Prompted groups match by overlap between the memory's words and the group's criterion.
 */
const PERSONAL = new RegExp(
  [
    // health
    String.raw`\b(health|doctor|hospital|clinic|sick|illness|disease|diagnos\w*|medications?|medicines?|meds|prescri\w+|dose|dosage|pills?|mood|therapy|therapist|psychiatr\w*|mental health|allerg\w*|pregnan\w*|surgery|depress\w*|anxiety|diabet\w*|cancer|blood pressure|insulin|antidepressants?|covid(-19)?|flu|fever|infections?|injur\w*|migraines?|panic attacks?|burn-?out|ivf|fertility|miscarriage|symptoms?|tested positive|sick leave|medical|physiotherap\w*|rehab|addiction|adhd|autism|asthma|stroke|heart attack|hospitali[sz]ed|chemo\w*|unwell)\b|\d+ ?mg\b`,
    // family
    String.raw`\b(wife|husband|son|daughter|mother|mom|mum|father|dad|sister|brother|kids|children|family|boyfriend|girlfriend|divorce|partner|spouse|fianc[eé]e?|baby|babies|toddler|parents|parental leave|maternity|paternity|grand(mother|father|ma|pa|parents?)|aunt|uncle|cousin|wedding|funeral|passed away)\b`,
    // legal trouble, beliefs, sexuality: what a person tells in confidence
    String.raw`\b(arrest\w*|criminal record|convict\w*|lawsuit|lawyer|court case|police|prison|jail|probation|immigration|visa status|religio\w*|pray\w*|church|mosque|synagogue|sexual orientation|coming out|gay|lesbian|bisexual|transgender)\b`,
    // finances
    String.raw`\b(salary|debt|loan|mortgage|bank|account number|routing number|iban|credit card|debit card|cvv|income|tax return|savings|earns?|earning|rent|owe[sd]?|paycheck|payslip|a raise|bonus|money is tight|bankrupt\w*)\b`,
    // credentials: what opens an account, a device or a door
    String.raw`\b(passwords?|passcodes?|passphrases?|pin (code|number)|api key|private key|ssh key|secret|token|recovery (codes?|phrase)|backup codes|seed phrase|one-time code|wi-?fi (key|password)|(door|gate|alarm|access|lock|entry|garage) code|(lock|safe) combination|ssn|social security|passport|licen[cs]e number|credentials|(root|admin) login|login (is|for))\b`,
    // contact details
    String.raw`\b(phone number|email address|home address|address is|lives at|birthday|date of birth)\b|(?<![\w.+-])[\w.+-]+@[\w-]+\.[\w.]+\b|\+?\d[\d ()-]{7,}\d`,
  ].join("|"),
  "i",
);
/** A PIN in capitals: in lower case "pin" is as often a version pin. */
const PIN = /\bPINs?\b/;
const SHAREABLE =
  /\b(project|team|company|customer|client|product|release|deploy\w*|build|tests?|ci|pipeline|server|service|database|api|endpoint|repo(sitory)?|code|bug|feature|docs?|documentation|library|framework|config\w*|meeting|roadmap|design|architecture|process|policy|convention|style guide|standard|incident|migration|version)\b/i;

// Words that phrase a criterion rather than name its subject.
const PROMPT_STOP = new Set(
  "anything everything related relating relevant about memories memory facts fact information info stuff topics topic concerning regarding include includes including mentions mention discussing discussion".split(
    " ",
  ),
);

export function classifyLocally(
  item: ClassifyItem,
  groups: Array<{ id: string; prompt: string }>,
): Classification {
  if (PERSONAL.test(item.text) || PIN.test(item.text) || NAMES_CREDENTIAL.test(item.text))
    return { verdict: "personal", matched_group_ids: [] };
  const technical =
    item.type === "lesson" ||
    item.type === "procedure" ||
    item.type === "artifact" ||
    SHAREABLE.test(item.text) ||
    identifiersFromText(item.text).length > 0;
  if (!technical) return { verdict: "personal", matched_group_ids: [] };
  const words = new Set(contentWords(item.text).map(stem));
  const matched = groups
    .filter((g) =>
      contentWords(g.prompt)
        .filter((w) => !PROMPT_STOP.has(w))
        .some((w) => words.has(stem(w))),
    )
    .map((g) => g.id);
  return { verdict: "shareable", matched_group_ids: matched };
}

export function createLocalClassifier(): Classifier {
  return {
    name: "local-rules",
    classify: async (items, groups) => items.map((i) => classifyLocally(i, groups)),
  };
}
