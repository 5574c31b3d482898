import type { Turn } from "../../src/providers/types.js";

/** A chat turn as the extractor sees it: undated, unnamed, its index as its event id, unless `extra` says otherwise. */
export const turn = (index: number, role: string, content: string, extra: Partial<Turn> = {}): Turn => ({
  index,
  role,
  speaker: null,
  content,
  date: null,
  at: null,
  refDate: null,
  eventId: String(index),
  ...extra,
});
