const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/**
 * `text` in at most `max` UTF-16 units (what `.length` counts), ending with `mark` when it was
 * cut. The cut falls between two graphemes: never inside an emoji's surrogate pair (a lone
 * surrogate, which PostgreSQL's json refuses, failed a whole ingest job), a ZWJ sequence, a flag,
 * or a letter and its combining accent. Only the text up to the cut is segmented: a boundary
 * depends on what precedes it and on the character at it, not on the rest.
 */
export function truncate(text: string, max: number, mark = ""): string {
  if (text.length <= max) return text;
  const at = Math.max(0, max - mark.length);
  const start = graphemes.segment(text.slice(0, at + 2)).containing(at)?.index ?? at;
  return `${text.slice(0, start)}${mark}`;
}
