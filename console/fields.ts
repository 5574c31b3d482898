import type { z } from "@hono/zod-openapi";
import { CoreError } from "../src/errors.js";
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
  switch (issue.code) {
    case "invalid_type":
      return valueAt(data, issue.path) == null
        ? "is required"
        : `must be ${TYPES[issue.expected] ?? issue.expected}`;
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
