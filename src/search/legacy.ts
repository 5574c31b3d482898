/**
 * Legacy search shapes (older clients' requests keep working), translated in this one place before validation, so the
 * schema and the verb only ever see the current shape:
 * - `filters.user_id` is lifted to the root when the root has none; other filter keys are dropped;
 *   the filter language's equality (`{"$eq": "u1"}`, what clients of the hosted service send) is
 *   lifted as its value; any other value is an error of `filters.user_id` (`issue`), not of a
 *   root `user_id` the client never sent;
 * - `mode` `rows` reads as `retrieve`, `context` as `compose`;
 * - `include` `context_prompt` sets compose mode and is dropped; `full_content` stays (it opts in
 *   to artifact bodies) but is never a corpus.
 */
export function translateLegacySearch(
  body: unknown,
  issue?: (i: { message: string; path: string[] }) => void,
): unknown {
  if (body === null || typeof body !== "object" || Array.isArray(body)) return body;
  const out: Record<string, unknown> = { ...(body as Record<string, unknown>) };
  if ("filters" in out) {
    const filters = out.filters;
    delete out.filters;
    if (filters && typeof filters === "object" && !Array.isArray(filters)) {
      let userId = (filters as Record<string, unknown>).user_id;
      const eq = userId && typeof userId === "object" ? (userId as Record<string, unknown>) : undefined;
      if (eq && Object.keys(eq).length === 1 && typeof eq.$eq === "string") userId = eq.$eq;
      if ((out.user_id === undefined || out.user_id === null) && userId !== undefined) {
        if (userId === null || typeof userId === "string") out.user_id = userId;
        else
          issue?.({
            message: 'must be a string (or {"$eq": "<id>"})',
            path: ["filters", "user_id"],
          });
      }
    }
  }
  if (out.mode === "rows") out.mode = "retrieve";
  else if (out.mode === "context") out.mode = "compose";
  if (Array.isArray(out.include) && out.include.includes("context_prompt")) {
    out.include = out.include.filter((v) => v !== "context_prompt");
    out.mode = "compose";
  }
  return out;
}
