import { HTTPException } from "hono/http-exception";
import { isCoreError } from "../../src/errors.js";
import { Notice, PageHead } from "../components.js";
import { Layout } from "../layout.js";
import { type Ctx, chrome, isHtmx, page } from "../render.js";

/**
 * The console's one error mapper: a page with the core error's message (never internals). A 4xx
 * the console raises outside the core (a body that is no form) is shown as it is.
 */
export function renderError(c: Ctx, err: unknown): Promise<Response> {
  const core = isCoreError(err)
    ? err
    : err instanceof HTTPException && err.status < 500
      ? { status: err.status, message: err.message, cause: undefined, headers: undefined }
      : null;
  const status = core?.status ?? 500;
  if (status >= 500) c.get("log")?.error({ err: core?.cause ?? err }, "console request failed");
  const message =
    status >= 500 || !core
      ? `Something went wrong on our side. Quote request id ${c.get("requestId") ?? "(none)"} to the operator.`
      : core.message;
  for (const [k, v] of Object.entries(core?.headers ?? {})) c.header(k, v);
  // An htmx request (a tag toggled, a row polling its job) swaps only its fragment, and htmx
  // swaps nothing on an error status: the message goes to the page's notice area instead, with a
  // 200 for htmx to apply it (the change was not made, and the notice says why).
  if (isHtmx(c)) {
    c.header("HX-Retarget", "#htmx-notice");
    c.header("HX-Reswap", "innerHTML");
    return page(c, <Notice kind="error">{message}</Notice>, 200, true);
  }
  const title =
    status === 404
      ? "Not found"
      : status === 429
        ? "Slow down"
        : status === 403
          ? "Refused"
          : status === 400
            ? "Bad request"
            : "Error";
  return page(
    c,
    <Layout title={title} chrome={chrome(c)}>
      <PageHead title={title} />
      <Notice kind="error">{message}</Notice>
      <p>
        <a href="/console/memories">Back to memories</a>
      </p>
    </Layout>,
    status,
  );
}
