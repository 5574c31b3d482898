import type { Child } from "hono/jsx";
import { CoreError, isCoreError } from "../../src/errors.js";
import { archiveGroup } from "../../src/groups/archive.js";
import { createGroup } from "../../src/groups/create.js";
import { getGroup } from "../../src/groups/get.js";
import { listGroups } from "../../src/groups/list.js";
import { GROUP_NAME_MAX, GROUP_PROMPT_MAX } from "../../src/groups/model.js";
import { updateGroup } from "../../src/groups/update.js";
import { Card, Empty, Notice, PageHead, Status, Time } from "../components.js";
import { inFormWords } from "../fields.js";
import { Csrf, Layout } from "../layout.js";
import { type Ctx, chrome, formOf, one, page, readForm } from "../render.js";
import type { ConsoleApp } from "../types.js";

/** What a group form did, as the page after its redirect says it (`?created=<id>`, ...). */
const DONE = {
  created: () => "created.",
  saved: () => "saved.",
  archived: () => "archived: it no longer tags new ingests; its memories stay searchable.",
  restored: () => "restored.",
} as const;
type Done = keyof typeof DONE;

async function groupsPage(c: Ctx, failed?: { text: Child; status?: number }, draft?: Record<string, string>) {
  const groups = await listGroups({ ctx: c.get("ctx"), input: { includeArchived: true } });
  const csrf = c.get("csrf");
  // After a form's post, redirect, get: the page says what was done to which of the groups listed.
  let notice: { kind: "ok" | "error"; text: Child; status?: number } | undefined = failed && {
    kind: "error",
    ...failed,
  };
  for (const done of Object.keys(DONE) as Done[]) {
    const g = groups.data.find((g) => g.id === c.req.query(done));
    if (!notice && g)
      notice = {
        kind: "ok",
        text: (
          <>
            Group “<bdi>{g.name}</bdi>” {DONE[done]()}
          </>
        ),
      };
  }
  return page(
    c,
    <Layout title="Groups" chrome={chrome(c)} section="groups">
      <PageHead
        title="Groups"
        lead="Groups tag memories across users. A prompted group tags only what its prompt describes; a catch-all group tags every ingest that names it."
      />
      {notice ? <Notice kind={notice.kind}>{notice.text}</Notice> : null}
      <form method="post" action="/console/groups" class="card stack" aria-label="Create a group">
        <h2>New group</h2>
        <Csrf token={csrf} />
        <div class="field wide">
          <label for="g-name">Name</label>
          <input id="g-name" name="name" required maxlength={GROUP_NAME_MAX} value={draft?.name ?? ""} />
        </div>
        <div class="field wide">
          <label for="g-prompt">Prompt (optional: leave empty for a catch-all group)</label>
          <textarea id="g-prompt" name="prompt" rows={2} maxlength={GROUP_PROMPT_MAX}>
            {draft?.prompt ?? ""}
          </textarea>
        </div>
        <div>
          <button type="submit" class="btn primary">
            Create group
          </button>
        </div>
      </form>
      {groups.data.length === 0 ? (
        <Empty title="No groups yet.">
          Create one above, then tag memories with it or name it in an ingest.
        </Empty>
      ) : (
        <div class="stack">
          {groups.data.map((g) => (
            <Card>
              <div class="group-head">
                <h2>{g.name}</h2>
                <Status value={g.status} />
                <span class="mono small muted">{g.id}</span>
                <span class="small muted">
                  created <Time iso={g.created_at} />
                </span>
              </div>
              <form method="post" action={`/console/groups/${g.id}`} class="stack">
                <Csrf token={csrf} />
                <div class="row">
                  <div class="field">
                    <label for={`n-${g.id}`}>Name</label>
                    <input id={`n-${g.id}`} name="name" value={g.name} maxlength={GROUP_NAME_MAX} required />
                  </div>
                  <div class="field wide">
                    <label for={`p-${g.id}`}>Prompt</label>
                    <textarea
                      id={`p-${g.id}`}
                      name="prompt"
                      rows={2}
                      maxlength={GROUP_PROMPT_MAX}
                      placeholder="catch-all"
                    >
                      {g.prompt ?? ""}
                    </textarea>
                  </div>
                </div>
                <div class="inline">
                  <button type="submit" class="btn small">
                    Save
                  </button>
                  <a class="btn ghost small" href={`/console/memories?group_id=${encodeURIComponent(g.id)}`}>
                    Its memories
                  </a>
                </div>
              </form>
              <form method="post" action={`/console/groups/${g.id}/status`} class="inline end">
                <Csrf token={csrf} />
                <input type="hidden" name="status" value={g.status === "active" ? "archived" : "active"} />
                <button
                  type="submit"
                  class={g.status === "active" ? "btn ghost small danger-text" : "btn ghost small"}
                >
                  {g.status === "active" ? "Archive" : "Restore"}
                </button>
              </form>
            </Card>
          ))}
        </div>
      )}
    </Layout>,
    notice?.kind === "error" ? (notice.status ?? 422) : 200,
  );
}

/**
 * A group form's post: done, a redirect to the page saying so (post, redirect, get: reloading it
 * does not post again; a reload after "Create group" made a second group of the same name);
 * refused, the page with the error in the form's words and what was typed.
 */
async function attempt(
  c: Ctx,
  run: () => Promise<{ done: Done; id: string }>,
  draft?: Record<string, string>,
) {
  try {
    const { done, id } = await run();
    return c.redirect(`/console/groups?${done}=${encodeURIComponent(id)}`, 303);
  } catch (err) {
    const said = inFormWords(err, { name: "Name", prompt: "Prompt", status: "Status" });
    if (isCoreError(said) && said.status < 500 && said.status !== 404) {
      return groupsPage(c, { text: said.message, status: said.status }, draft);
    }
    throw said;
  }
}

export function registerGroupPages(app: ConsoleApp) {
  app.get("/groups", (c) => groupsPage(c));

  app.post("/groups", async (c) => {
    const f = await formOf(c);
    return attempt(
      c,
      async () => {
        const g = await createGroup({
          ctx: c.get("ctx"),
          input: { name: f.name ?? "", prompt: f.prompt ?? null },
        });
        return { done: "created", id: g.id };
      },
      f,
    );
  });

  app.post("/groups/:id", async (c) => {
    const raw = await readForm(c);
    const ctx = c.get("ctx");
    const id = c.req.param("id");
    return attempt(c, async () => {
      // A blank name is refused, not ignored; so is a blank prompt on a group that has one (a
      // prompt can be set or changed but never removed). A catch-all's blank prompt is no change.
      const current = await getGroup({ ctx, input: { id } });
      const name = "name" in raw ? (one(raw, "name") ?? "") : null;
      const prompt = one(raw, "prompt") ?? (current.prompt !== null && "prompt" in raw ? "" : null);
      const g = await updateGroup({ ctx, input: { id, name, prompt } });
      return { done: "saved", id: g.id };
    });
  });

  app.post("/groups/:id/status", async (c) => {
    const f = await formOf(c);
    const ctx = c.get("ctx");
    const id = c.req.param("id");
    return attempt(c, async () => {
      if (f.status === "archived") {
        const g = await archiveGroup({ ctx, input: { id } });
        return { done: "archived", id: g.id };
      }
      if (f.status !== "active")
        throw new CoreError("invalid_request", "Status must be active or archived.", { field: "status" });
      const g = await updateGroup({ ctx, input: { id, status: "active" } });
      return { done: "restored", id: g.id };
    });
  });
}
