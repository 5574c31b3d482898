import { z } from "@hono/zod-openapi";
import type { FC } from "hono/jsx";
import { mayWriteRow } from "../../src/auth/user-scope.js";
import { isCoreError } from "../../src/errors.js";
import { listGroups } from "../../src/groups/list.js";
import type { Group } from "../../src/groups/model.js";
import { deleteMemory } from "../../src/memories/delete.js";
import { memoryNotFound } from "../../src/memories/get.js";
import { inspectMemory } from "../../src/memories/inspect.js";
import { type ListMemoriesInput, listMemories } from "../../src/memories/list.js";
import { MEMORY_TYPES, type Memory } from "../../src/memories/model.js";
import { patchMemoryGroups } from "../../src/memories/patch.js";
import { listRevisions } from "../../src/memories/revisions.js";
import { ListMemoriesQuery } from "../../src/wire/memories.js";
import {
  AXIS_LABELS,
  Badge,
  Card,
  Empty,
  excerpt,
  Json,
  Notice,
  PageHead,
  Status,
  Time,
} from "../components.js";
import { checkFields, inFormWords, otherUserWords } from "../fields.js";
import { Csrf, Layout } from "../layout.js";
import { type Ctx, chrome, formOf, isHtmx, page, queryOf } from "../render.js";
import type { ConsoleApp } from "../types.js";

const PAGE_SIZE = 25;
const FILTERS = ["type", "status", "user_id", "agent_id", "conv_id", "app_id", "group_id", "order"] as const;

/**
 * The list's query as GET /v1/memories checks it (a 5,000-character user_id is 422 there, not "no
 * memory matches"), and the page's own choices (type, status, order) among what its filters offer:
 * another value is 422 too, as REST answers one, never a list silently unfiltered.
 */
const CONSOLE_LIST_QUERY = ListMemoriesQuery.pick({
  user_id: true,
  agent_id: true,
  conv_id: true,
  app_id: true,
  group_id: true,
  cursor: true,
  status: true,
  order: true,
})
  .extend({ type: z.enum(MEMORY_TYPES).optional() })
  // The page's own parameters (`deleted`, the notice after a delete) are not the list's.
  .strip();

const LIST_LABELS = {
  user_id: "User",
  agent_id: "Agent",
  conv_id: "Conversation",
  app_id: "App",
  group_id: "Group",
  cursor: "The page link",
  type: "Type",
  status: "Status",
  order: "Order",
};

const href = (params: Record<string, string | undefined>) => {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) q.set(k, v);
  const s = q.toString();
  return `/console/memories${s ? `?${s}` : ""}`;
};

const groupName = (groups: Group[], id: string) => groups.find((g) => g.id === id)?.name;

/**
 * Whether the session's key may change or delete this memory (and read the job that wrote it): a
 * key confined to a user reads other users' rows shared through a group, but changes only its own.
 */
const mayChange = (c: Ctx, memory: Memory) => mayWriteRow(c.get("ctx").principal, memory);

const Tags: FC<{ memory: Memory; groups: Group[]; csrf: string; error?: string; readOnly?: boolean }> = ({
  memory,
  groups,
  csrf,
  error,
  readOnly,
}) => {
  const addable = groups.filter((g) => g.status === "active" && !memory.group_ids.includes(g.id));
  const action = `/console/memories/${memory.id}/tags`;
  return (
    <section class="card" id="tags">
      <h2>Groups</h2>
      {error ? <Notice kind="error">{error}</Notice> : null}
      {memory.group_ids.length === 0 ? (
        <p class="muted">Not tagged with any group.</p>
      ) : (
        <ul class="tags">
          {memory.group_ids.map((g) => (
            <li>
              <span class="tag">
                <bdi>{groupName(groups, g) ?? g}</bdi>
              </span>
              {readOnly ? null : (
                <form method="post" action={action} hx-post={action} hx-target="#tags" hx-swap="outerHTML">
                  <Csrf token={csrf} />
                  <input type="hidden" name="remove" value={g} />
                  <button
                    type="submit"
                    class="btn ghost small"
                    aria-label={`Remove group ${groupName(groups, g) ?? g}`}
                  >
                    Remove
                  </button>
                </form>
              )}
            </li>
          ))}
        </ul>
      )}
      {readOnly ? (
        <p class="muted small">
          Shared with you through a group: only its own user's key, or an organisation-wide one, can change
          its groups or delete it.
        </p>
      ) : (memory.details as { status?: string }).status === "superseded" ? (
        <p class="muted small" id="superseded-tags">
          Superseded: search never serves it, so groups are added to the current fact of its chain
          (Revisions); this one can only leave its groups.
        </p>
      ) : addable.length > 0 ? (
        <form
          method="post"
          action={action}
          hx-post={action}
          hx-target="#tags"
          hx-swap="outerHTML"
          class="inline"
        >
          <Csrf token={csrf} />
          <label for="add-group">Add to group</label>
          <select id="add-group" name="add">
            {addable.map((g) => (
              <option value={g.id}>{g.name}</option>
            ))}
          </select>
          <button type="submit" class="btn small">
            Add
          </button>
        </form>
      ) : (
        <p class="muted small">
          {groups.length === 0 ? (
            <>
              No groups yet: <a href="/console/groups">create one</a> to tag memories.
            </>
          ) : (
            "Every active group is already on this memory."
          )}
        </p>
      )}
    </section>
  );
};

const Filters: FC<{ q: Record<string, string>; groups: Group[] }> = ({ q, groups }) => (
  <form method="get" action="/console/memories" class="filters" aria-label="Filter memories">
    <div class="field">
      <label for="f-type">Type</label>
      <select id="f-type" name="type">
        <option value="">all but directives</option>
        {MEMORY_TYPES.map((t) => (
          <option value={t} selected={q.type === t}>
            {t}
          </option>
        ))}
      </select>
    </div>
    <div class="field">
      <label for="f-status">Status</label>
      <select id="f-status" name="status">
        <option value="">any</option>
        <option value="active" selected={q.status === "active"}>
          active only
        </option>
        <option value="superseded" selected={q.status === "superseded"}>
          superseded only
        </option>
      </select>
    </div>
    {(["user_id", "agent_id", "conv_id", "app_id"] as const).map((k) => (
      <div class="field">
        <label for={`f-${k}`}>{AXIS_LABELS[k]}</label>
        <input id={`f-${k}`} name={k} value={q[k] ?? ""} placeholder="any" />
      </div>
    ))}
    <div class="field">
      <label for="f-group">Group</label>
      <select id="f-group" name="group_id">
        <option value="">any</option>
        {groups.map((g) => (
          <option value={g.id} selected={q.group_id === g.id}>
            {g.status === "archived" ? `${g.name} (archived)` : g.name}
          </option>
        ))}
      </select>
    </div>
    <div class="field">
      <label for="f-order">Order</label>
      <select id="f-order" name="order">
        <option value="created_at_desc">newest first</option>
        <option value="created_at_asc" selected={q.order === "created_at_asc"}>
          oldest first
        </option>
      </select>
    </div>
    <div class="field buttons">
      <button type="submit" class="btn primary">
        Apply
      </button>
      <a class="btn ghost" href="/console/memories">
        Clear
      </a>
    </div>
  </form>
);

const MemoryRows: FC<{ rows: Memory[]; groups: Group[] }> = ({ rows, groups }) => (
  <div class="table-wrap">
    <table class="rows">
      <thead>
        <tr>
          <th scope="col">Memory</th>
          <th scope="col">Type</th>
          <th scope="col" class="hide-sm">
            User · conversation
          </th>
          <th scope="col" class="hide-sm">
            Groups
          </th>
          <th scope="col">Created</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((m) => (
          <tr>
            <td class="text">
              <a href={`/console/memories/${m.id}`}>{excerpt(m.text)}</a>
            </td>
            <td>
              <Badge tone={m.type}>{m.type}</Badge>
              {m.details.status === "superseded" ? <Status value="superseded" /> : null}
            </td>
            <td class="mono small hide-sm">
              {m.user_id === null ? "—" : <bdi>{m.user_id}</bdi>}
              {m.conv_id ? (
                <span class="muted">
                  {" "}
                  · <bdi>{m.conv_id}</bdi>
                </span>
              ) : null}
            </td>
            <td class="hide-sm">
              {m.group_ids.map((g) => (
                <span class="tag">
                  <bdi>{groupName(groups, g) ?? g}</bdi>
                </span>
              ))}
            </td>
            <td class="nowrap">
              <Time iso={m.created_at} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  </div>
);

async function memoryPage(c: Ctx, id: string, tagError?: { message: string; status: number }) {
  const ctx = c.get("ctx");
  const [found, revisions, groups] = await Promise.all([
    inspectMemory({ ctx, input: { id } }),
    listRevisions({ ctx, input: { id } }),
    listGroups({ ctx, input: { includeArchived: true } }),
  ]);
  const m = found.memory;
  const writable = mayChange(c, m);
  const { full_content, ...details } = m.details as Record<string, unknown>;
  return page(
    c,
    <Layout title="Memory" chrome={chrome(c)} section="memories">
      <p class="crumbs">
        <a href="/console/memories">Memories</a> / <span class="mono">{m.id}</span>
      </p>
      <PageHead title={`${m.type[0]!.toUpperCase()}${m.type.slice(1)}`}>
        {writable ? (
          <a class="btn danger" href={`/console/memories/${m.id}/delete`}>
            Delete…
          </a>
        ) : null}
      </PageHead>
      <div class="grid two">
        <div class="stack">
          <Card title="Text">
            <p class="memory-text" id="memory-text">
              {m.text}
            </p>
            {typeof full_content === "string" ? (
              <details>
                <summary>Full content ({full_content.length} characters)</summary>
                <pre class="json">
                  <code>{full_content}</code>
                </pre>
              </details>
            ) : null}
          </Card>
          <Card title="Details">
            <Json value={details} />
          </Card>
          <Card title="Metadata">
            {Object.keys(m.metadata).length ? (
              <Json value={m.metadata} />
            ) : (
              <p class="muted">None: the ingest that wrote it sent no metadata.</p>
            )}
          </Card>
          <Card title={`Revisions (${revisions.data.length})`} id="revisions">
            {revisions.data.length <= 1 ? (
              <p class="muted">No other revisions: this memory was never superseded or versioned.</p>
            ) : null}
            <ol class="chain">
              {revisions.data.map((r) => (
                <li class={r.id === m.id ? "current" : undefined}>
                  <div class="chain-head">
                    {r.id === m.id ? (
                      <strong>This memory</strong>
                    ) : (
                      <a href={`/console/memories/${r.id}`}>{r.id.slice(0, 8)}</a>
                    )}
                    <Time iso={r.created_at} />
                    {typeof r.details.status === "string" ? <Status value={r.details.status} /> : null}
                    {typeof r.details.version === "number" ? <Badge>v{r.details.version}</Badge> : null}
                  </div>
                  <p>{excerpt(r.text, 240)}</p>
                </li>
              ))}
            </ol>
          </Card>
        </div>
        <div class="stack">
          <Card title="About">
            <dl class="kv">
              <dt>Type</dt>
              <dd>
                <Badge tone={m.type}>{m.type}</Badge>
              </dd>
              <dt>Embedding</dt>
              <dd id="embedding">
                {found.has_embedding ? <Badge tone="ok">present</Badge> : <Badge tone="warn">missing</Badge>}
              </dd>
              <dt>Written by</dt>
              <dd>
                {found.job_id && !writable ? (
                  <span class="muted">an ingest job this key cannot read</span>
                ) : found.job_id ? (
                  <a class="mono" href={`/console/ingest/jobs/${found.job_id}`}>
                    {found.job_id}
                  </a>
                ) : (
                  <span class="muted">no job (written directly)</span>
                )}
              </dd>
              {(["user_id", "agent_id", "conv_id", "app_id"] as const).map((k) => (
                <>
                  <dt>{AXIS_LABELS[k]}</dt>
                  <dd class="mono">{m[k] === null ? <span class="muted">—</span> : <bdi>{m[k]}</bdi>}</dd>
                </>
              ))}
              <dt>Categories</dt>
              <dd>{m.categories.length ? m.categories.join(", ") : <span class="muted">—</span>}</dd>
              <dt>Created</dt>
              <dd>
                <Time iso={m.created_at} />
              </dd>
              <dt>Updated</dt>
              <dd>
                <Time iso={m.updated_at} />
              </dd>
            </dl>
          </Card>
          <Tags
            memory={m}
            groups={groups.data}
            csrf={c.get("csrf")}
            error={tagError?.message}
            readOnly={!writable}
          />
        </div>
      </div>
    </Layout>,
    tagError ? tagError.status : 200,
  );
}

export function registerMemoryPages(app: ConsoleApp) {
  app.get("/memories", async (c) => {
    const q = queryOf(c);
    const ctx = c.get("ctx");
    const input: ListMemoriesInput = { ...checkFields(CONSOLE_LIST_QUERY, q, LIST_LABELS), limit: PAGE_SIZE };
    const [list, groups] = await Promise.all([
      listMemories({ ctx, input }).catch((err) => {
        throw inFormWords(err, LIST_LABELS, otherUserWords(ctx.principal, "User", false));
      }),
      listGroups({ ctx, input: { includeArchived: true } }),
    ]);
    const filters = Object.fromEntries(FILTERS.map((k) => [k, q[k]]));
    const filtered = FILTERS.some((k) => k !== "order" && q[k]);
    return page(
      c,
      <Layout title="Memories" chrome={chrome(c)} section="memories">
        <PageHead title="Memories" lead="What this organisation remembers, newest first unless you choose." />
        {q.deleted ? <Notice kind="ok">The memory was deleted.</Notice> : null}
        <Filters q={q} groups={groups.data} />
        {list.data.length === 0 ? (
          q.cursor ? (
            <Empty title="No more memories.">
              <a href={href(filters)}>Back to the first page</a>
            </Empty>
          ) : filtered ? (
            <Empty title="No memory matches these filters.">
              <a href="/console/memories">Clear the filters</a> or widen them.
            </Empty>
          ) : (
            <Empty title="Nothing remembered yet.">
              <a href="/console/ingest">Ingest a conversation</a> (or <code>POST /v1/memories</code>) and the
              facts extracted from it appear here.
            </Empty>
          )
        ) : (
          <>
            <MemoryRows rows={list.data} groups={groups.data} />
            <nav class="pager" aria-label="Pages">
              {q.cursor ? <a href={href(filters)}>← First page</a> : <span />}
              <span class="muted small">{list.data.length} shown</span>
              {list.next_cursor ? (
                <a href={href({ ...filters, cursor: list.next_cursor })} rel="next">
                  Next page →
                </a>
              ) : (
                <span />
              )}
            </nav>
          </>
        )}
      </Layout>,
    );
  });

  app.get("/memories/:id", (c) => memoryPage(c, c.req.param("id")));

  app.post("/memories/:id/tags", async (c) => {
    const id = c.req.param("id");
    const form = await formOf(c);
    const ctx = c.get("ctx");
    let failed: { message: string; status: number } | undefined;
    try {
      await patchMemoryGroups({
        ctx,
        input: {
          id,
          add_group_ids: form.add ? [form.add] : null,
          remove_group_ids: form.remove ? [form.remove] : null,
        },
      });
    } catch (err) {
      const said = inFormWords(err, {}, { empty_patch: "Choose a group to add or one to remove." });
      if (!isCoreError(said) || said.status >= 500 || said.status === 404) throw said;
      failed = { message: said.message, status: said.status };
    }
    if (!isHtmx(c))
      return failed ? memoryPage(c, id, failed) : c.redirect(`/console/memories/${id}#tags`, 303);
    const [found, groups] = await Promise.all([
      inspectMemory({ ctx, input: { id } }),
      listGroups({ ctx, input: { includeArchived: true } }),
    ]);
    return page(
      c,
      <Tags
        memory={found.memory}
        groups={groups.data}
        csrf={c.get("csrf")}
        error={failed?.message}
        readOnly={!mayChange(c, found.memory)}
      />,
      200,
      true,
    );
  });

  app.get("/memories/:id/delete", async (c) => {
    const id = c.req.param("id");
    const { memory } = await inspectMemory({ ctx: c.get("ctx"), input: { id } });
    // Another user's row shared through a group: the delete would be refused as not found.
    if (!mayChange(c, memory)) throw memoryNotFound(id);
    return page(
      c,
      <Layout title="Delete memory" chrome={chrome(c)} section="memories">
        <PageHead title="Delete this memory?" />
        <Card>
          <p class="memory-text">{memory.text}</p>
          <p>
            Deleting is permanent: the memory stops appearing in lists, search and context blocks. Facts that
            it superseded keep their own history.
          </p>
          <form method="post" action={`/console/memories/${memory.id}/delete`} class="inline">
            <Csrf token={c.get("csrf")} />
            <button type="submit" class="btn danger">
              Delete permanently
            </button>
            <a class="btn ghost" href={`/console/memories/${memory.id}`}>
              Keep it
            </a>
          </form>
        </Card>
      </Layout>,
    );
  });

  app.post("/memories/:id/delete", async (c) => {
    await deleteMemory({ ctx: c.get("ctx"), input: { id: c.req.param("id") } });
    return c.redirect("/console/memories?deleted=1", 303);
  });
}
