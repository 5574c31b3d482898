import type { LanguageModel } from "ai";

/**
 * Provider interfaces, chosen once at start-up from configuration: the deterministic local ones by
 * default, the OpenAI-compatible ones when a model endpoint is configured.
 */
export interface Embedder {
  readonly name: string;
  readonly dim: number;
  /**
   * One unit-length vector per text, in order. `timeoutMs` bounds a call a client waits on (a
   * search's query); without it a model-backed embedder uses MNEMO_LLM_TIMEOUT_MS.
   */
  embed(texts: string[], options?: { timeoutMs?: number }): Promise<number[][]>;
}

export interface Providers {
  kind: "local" | "openai";
  embedder: Embedder;
  /**
   * The chat model (AI SDK) when one is configured, else null. Search's context selection and the
   * trigger relevance gate use it through `generateText`; without it they fall back to their
   * deterministic paths.
   */
  llm: LanguageModel | null;
  /** Facts, episode, artifacts and directives from chat turns; dedup/supersede judgements. */
  extractor: Extractor;
  /** Personal vs shareable, and which prompted groups a memory matches. */
  classifier: Classifier;
}

/** One chat turn as the extractor sees it (after routing and date parsing). */
export interface Turn {
  /** Position in the request (0-based). */
  index: number;
  role: string;
  /** The speaker's name when known (a `name` field, a non-standard role, or "Name: ..." content). */
  speaker: string | null;
  content: string;
  /**
   * The raw date string as sent; for a message sent without one, that of the dated message before
   * it in the request (a reply in a dated conversation was said that day), else null.
   */
  date: string | null;
  /** `date` parsed (batch path with a matching `timestamp_format`), else null. */
  at: Date | null;
  /** A date to resolve relative expressions against (parsed or loosely read), else null. */
  refDate: Date | null;
  /** The turn's `dia_id`, else its index as a string: what facts cite in `source_event_ids`. */
  eventId: string;
}

export const FACT_TYPES = [
  "preference",
  "attribute",
  "relationship",
  "event",
  "plan",
  "opinion",
  "skill",
  "other",
] as const;
export type FactType = (typeof FACT_TYPES)[number];

export interface ExtractInput {
  turns: Turn[];
  path: "live" | "batch";
  extractArtifacts: boolean;
  agentic: boolean;
  /** Agentic path: what is already known about the user (recall first), newest first. */
  known: string[];
  /** The user's name from an earlier self-introduction, when one is on record. */
  userName?: string | null;
  /** The job's log: a model extractor says there what it left out of a reply. */
  log?: { warn(obj: object, msg: string): void };
}

export interface ExtractedFact {
  text: string;
  fact_type: FactType;
  categories: string[];
  source_role: string;
  source_event_ids: string[];
  /** What the fact is about beyond its words (the question a reply answered): indexed, not shown. */
  context?: string;
}

export interface ExtractedArtifact {
  title: string;
  /** One-line description, the memory's `text`. */
  summary: string;
  rationale: string | null;
  content: string;
  source_event_ids: string[];
}

export interface ExtractedDirective {
  type: "lesson" | "procedure";
  text: string;
  trigger_entities: string[];
  steps: string[] | null;
  source_event_ids: string[];
}

export interface Extraction {
  facts: ExtractedFact[];
  episode: { title: string; summary: string; gist: Record<string, unknown> | null };
  artifacts: ExtractedArtifact[];
  directives: ExtractedDirective[];
}

/** A new fact and the existing active facts of the same user that resemble it. */
export interface JudgeCase {
  text: string;
  candidates: Array<{ id: string; text: string; similarity: number }>;
}

export type JudgeVerdict =
  | { verdict: "new" }
  | { verdict: "duplicate"; id: string }
  /**
   * `also`: other candidates it ends as well, when several state the value it changes ("lives in
   * Denver now" and "we live in Denver with the kids", both ended by "we moved to Austin").
   */
  | { verdict: "supersedes"; id: string; also?: string[] };

export interface Extractor {
  readonly name: string;
  extract(input: ExtractInput): Promise<Extraction>;
  /** Dedup and supersede judgements, one per case, in order. */
  judge(cases: JudgeCase[]): Promise<JudgeVerdict[]>;
}

export interface ClassifyItem {
  type: string;
  text: string;
}

/** personal, shareable, or null (no verdict: fails closed, no tags). */
export interface Classification {
  verdict: "personal" | "shareable" | null;
  /** Prompted groups (ids from the ones offered) whose criterion the memory matches. */
  matched_group_ids: string[];
}

export interface Classifier {
  readonly name: string;
  classify(items: ClassifyItem[], groups: Array<{ id: string; prompt: string }>): Promise<Classification[]>;
}
