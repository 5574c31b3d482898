/** A Latin letter with a diacritic (precomposed), or a combining mark: what foldLatin changes. */
const LATIN_MARKED = /[\u00c0-\u024f\u1e00-\u1eff]|[\u0300-\u036f]/;
/** Latin letters without a decomposition, as their plain letters. */
const PLAIN: Record<string, string> = {
  ø: "o",
  Ø: "O",
  ł: "l",
  Ł: "L",
  đ: "d",
  Đ: "D",
  ð: "d",
  Ð: "D",
  ħ: "h",
  Ħ: "H",
  ı: "i",
  ŧ: "t",
  Ŧ: "T",
  ß: "ss",
  ẞ: "SS",
  æ: "ae",
  Æ: "AE",
  œ: "oe",
  Œ: "OE",
  þ: "th",
  Þ: "TH",
};
const UNDECOMPOSED = new RegExp(`[${Object.keys(PLAIN).join("")}]`, "g");

/**
 * `text` with its Latin letters' diacritics taken off, case kept ("Zoë" -> "Zoe", "São Paulo" ->
 * "Sao Paulo", "Łukasz" -> "Lukasz", "Straße" -> "Strasse"), in NFC: as full text reads a name
 * (mnemo_fold_latin, sql/106_accent_folding.sql), so names compare as people type them. Greek,
 * Cyrillic ("й", "ё") and every other script are left as they are.
 */
export function foldLatin(text: string): string {
  if (!LATIN_MARKED.test(text)) return text;
  return text
    .normalize("NFD")
    .replace(UNDECOMPOSED, (c) => PLAIN[c]!)
    .replace(/([A-Za-z])[\u0300-\u036f]+/g, "$1")
    .normalize("NFC");
}

/** `keys` and, after them, the folded form of each that has one: what a lookup by key matches. */
export function withFolded(keys: readonly string[]): string[] {
  return [...new Set([...keys, ...keys.map(foldLatin)])];
}
