import { isCommonProperNoun } from "./concepts.js";

/**
 * Self-introductions: "my name is Priya", "call me Priya", "Hi, I'm Priya." The bare "I'm X" form
 * counts only when X is a capitalised word that ends its clause ("I'm Priya, a nurse") and is not
 * a nationality, language or belief ("I'm Italian."), which WordNet knows as a person or language.
 */
const CALLED = /\b(?:[Mm]y name is|[Mm]y name's|[Cc]all me|[Pp]eople call me)\s+(\p{Lu}[\p{L}'-]+)/u;
const IM =
  /(?:^|[.!?,;]\s*|\b(?:[Hh]i|[Hh]ello|[Hh]ey)[,!]?\s+)(?:I'm|I am|[Tt]his is)\s+(\p{Lu}[\p{L}'-]+)\s*(?:[.!,;]|$|\band\b|\bhere\b)/u;

export function introducedName(content: string): string | null {
  const called = CALLED.exec(content);
  if (called) return called[1]!;
  const im = IM.exec(content);
  if (im && !isCommonProperNoun(im[1]!)) return im[1]!;
  return null;
}

/** The profile fact that records a user's name, and reads it back ("The user's name is Priya."). */
export const userNameFact = (name: string) => `The user's name is ${name}.`;
export const USER_NAME_FACT_PREFIX = "The user's name is ";
export function nameFromFact(text: string): string | null {
  const m = /^The user's name is (\p{Lu}[\p{L}'-]+)\.$/u.exec(text);
  return m ? m[1]! : null;
}
