import type { z } from "@hono/zod-openapi";
import { confinedUser } from "../src/auth/user-scope.js";
import type { Principal } from "../src/context.js";
import { CoreError, type ErrorCode, isCoreError } from "../src/errors.js";
import { codedIssue, valueAt } from "../src/wire/common.js";

type Issue = z.core.$ZodIssue;

/** How the console names a request field: the label of the form field it came from. */
export type FieldLabels = Record<string, string>;

/** What the items of a list field are called (`at most 100 groups`). */
const ITEMS: Record<string, string> = { messages: "messages", group_ids: "groups", entities: "entities" };

/** A message's own fields, as the transcript box speaks of them. */
const MESSAGE_PARTS: Record<string, string> = {
  content: "text",
  role: "speaker",
  date: "date",
  name: "name",
};

const TYPES: Record<string, string> = {
  string: "text",
  number: "a number",
  int: "a whole number",
  boolean: "true or false",
  object: "a JSON object",
  array: "a list",
};

/** The label of the form field an issue is about: `Transcript (message 2, speaker)`, `Groups`. */
function labelOf(path: PropertyKey[], labels: FieldLabels): string {
  const [top, index, part] = path;
  const key = String(top ?? "");
  const label = labels[path.map(String).join(".")] ?? labels[key] ?? key;
  if (key === "messages" && typeof index === "number") {
    const what = typeof part === "string" ? `, ${MESSAGE_PARTS[part] ?? part}` : "";
    return `${label} (message ${index + 1}${what})`;
  }
  if (typeof index === "number") return `${label} (item ${index + 1})`;
  return label;
}

/** What was wrong, said of the field: `must be at most 256 characters`, `is required`. */
function phraseOf(issue: Issue, data: unknown): string {
  const key = String(issue.path[0] ?? "");
  const whole = issue.path.length === 1;
  if (issue.code === "invalid_type" && valueAt(data, issue.path) == null) return "is required";
  // A rule the schema words itself (`must be an integer from 1 to 100`) is said as REST says it.
  if (/^must /.test(issue.message)) return issue.message;
  switch (issue.code) {
    case "invalid_type":
      return `must be ${TYPES[issue.expected] ?? issue.expected}`;
    case "too_big":
      if (issue.origin === "string") return `must be at most ${issue.maximum} characters`;
      if (issue.origin === "array")
        return `must have at most ${issue.maximum} ${(whole && ITEMS[key]) || "items"}`;
      return `must be at most ${issue.maximum}`;
    case "too_small":
      if (issue.origin === "string")
        return Number(issue.minimum) <= 1
          ? "must not be empty"
          : `must be at least ${issue.minimum} characters`;
      if (issue.origin === "array")
        return `must have at least ${issue.minimum} ${(whole && ITEMS[key]) || "items"}`;
      return `must be at least ${issue.minimum}`;
    case "invalid_value":
      return `must be one of ${issue.values.map(String).join(", ")}`;
    default: {
      const message = issue.message.replace(/^Invalid input: /, "");
      return /^must /.test(message) ? message : `: ${message}`;
    }
  }
}

/**
 * Checks a form's request against its wire schema as REST checks the API's (the same rules and
 * error codes), saying what failed in the form's own words: `User id must be at most 256
 * characters.`, not `body.user_id: Too big: expected string to have <=256 characters`.
 */
export function checkFields<S extends z.ZodType>(schema: S, data: unknown, labels: FieldLabels): z.output<S> {
  const result = schema.safeParse(data);
  if (result.success) return result.data;
  const coded = codedIssue(result.error.issues, data);
  const seen = new Set<string>();
  const sentences: string[] = [];
  for (const issue of result.error.issues) {
    const label = labelOf(issue.path, labels);
    if (seen.has(label)) continue;
    seen.add(label);
    const phrase = phraseOf(issue, data);
    const sentence = `${label}${phrase.startsWith(":") ? phrase : ` ${phrase}`}`;
    sentences.push(/[.!?]$/.test(sentence) ? sentence : `${sentence}.`);
  }
  throw new CoreError(coded?.code ?? "invalid_request", sentences.join(" "), {
    ...(coded ? { field: coded.field } : {}),
  });
}

/** Sentences a form says in place of a core error's, by error code. */
export type CodeWords = Partial<Record<ErrorCode, string>>;

/**
 * A core error from a form's verb, in the form's words (code, status and field kept): a code the
 * form words itself gets its sentence (`missing_trigger`: fill in a tool call or entities), and a
 * field error that opens with the API's field name opens with the field's label instead
 * (`messages must not be empty.` is `Transcript must not be empty.`). Anything else is returned
 * as it is.
 */
export function inFormWords(err: unknown, labels: FieldLabels, codes: CodeWords = {}): unknown {
  if (!isCoreError(err) || err.status >= 500) return err;
  let message = codes[err.code];
  if (message === undefined && err.field) {
    const name = err.field.replace(/^(body|query)\./, "");
    const label = labels[name];
    if (label && err.message.startsWith(`${name} `)) message = `${label}${err.message.slice(name.length)}`;
  }
  if (message === undefined || message === err.message) return err;
  return new CoreError(err.code, message, {
    cause: err,
    ...(err.headers ? { headers: err.headers } : {}),
    ...(err.field ? { field: err.field } : {}),
  });
}

/**
 * What a key confined to a user is told when a form names another user (403 `user_mismatch`),
 * without the API's advice to omit `user_id` where the form needs the field.
 */
export function otherUserWords(principal: Principal, label: string, required: boolean): CodeWords {
  const user = confinedUser(principal);
  if (user === null) return {};
  const own = JSON.stringify(user);
  return {
    user_mismatch: `This key can act only for user ${own}: ${
      required ? `enter ${own} as the ${label}` : `leave ${label} blank or enter ${own}`
    }.`,
  };
}
