import type { FC } from "hono/jsx";
import { isCoreError } from "../../src/errors.js";
import { listGroups } from "../../src/groups/list.js";
import { getIngestJob } from "../../src/ingest/get-job.js";
import { listIngestJobs } from "../../src/ingest/list-jobs.js";
import { submitIngest } from "../../src/ingest/submit.js";
import { type IngestJob, IngestRequestSchema } from "../../src/wire/ingest.js";
import { Card, Empty, excerpt, Notice, PageHead, Status, Time, Timings } from "../components.js";
import { checkFields, inFormWords, otherUserWords } from "../fields.js";
import { Csrf, Layout } from "../layout.js";
import { type Ctx, chrome, type Form, many, one, page, readForm } from "../render.js";
import { parseTranscript } from "../transcript.js";
import type { ConsoleApp } from "../types.js";

const SAMPLE =
  "User: I moved to Lisbon last month and I'm learning Portuguese.\nAssistant: Boa sorte! How is it going?";

const refs = (r: Record<string, unknown> | null, key: string) =>
  (Array.isArray(r?.[key]) ? r[key] : []) as { id: string; type?: string; text: string }[];

const total = (job: IngestJob) => {
  const t = (job.result?.stage_timings as Record<string, number> | undefined)?.total;
  return typeof t === "number" ? `${Math.round(t * 1000)} ms` : "—";
};

/** One row of the recent-jobs table; a job still under way polls for its next state. */
const JobRow: FC<{ job: IngestJob }> = ({ job }) => {
  const live = job.status === "pending" || job.status === "running";
  const attrs = live
    ? { "hx-get": `/console/ingest/jobs/${job.id}/row`, "hx-trigger": "every 1s", "hx-swap": "outerHTML" }
    : {};
  return (
    <tr id={`job-${job.id}`} {...attrs}>
      <td class="mono small">
        <a href={`/console/ingest/jobs/${job.id}`}>{job.id}</a>
      </td>
      <td>
        <Status value={job.status} />
      </td>
      <td class="nowrap">
        <Time iso={job.created_at} />
      </td>
      <td>{job.result ? refs(job.result, "memories_created").length : "—"}</td>
      <td class="nowrap">{total(job)}</td>
      <td class="small">{job.error ? `${job.error.code}: ${job.error.message}` : ""}</td>
    </tr>
  );
};

const JobTable: FC<{ jobs: IngestJob[] }> = ({ jobs }) => (
  <div class="table-wrap">
    <table class="rows">
      <thead>
        <tr>
          <th scope="col">Job</th>
          <th scope="col">Status</th>
          <th scope="col">Submitted</th>
          <th scope="col">Memories created</th>
          <th scope="col">Total</th>
          <th scope="col">Error</th>
        </tr>
      </thead>
      <tbody>
        {jobs.map((j) => (
          <JobRow job={j} />
        ))}
      </tbody>
    </table>
  </div>
);

/** A job's memories, each linked to its page; one this job replaced says so. */
const MemoryLinks: FC<{
  memories: { id: string; text: string }[];
  supersededBy?: Record<string, string>;
}> = ({ memories, supersededBy = {} }) => (
  <ul class="list">
    {memories.map((m) => (
      <li>
        <a href={`/console/memories/${m.id}`}>{excerpt(m.text)}</a>
        {supersededBy[m.id] ? <span class="muted small"> (superseded)</span> : null}
      </li>
    ))}
  </ul>
);

const JobDetail: FC<{ job: IngestJob }> = ({ job }) => {
  const created = refs(job.result, "memories_created");
  const updated = refs(job.result, "memories_updated");
  const ignored = (job.result?.ignored_group_ids as string[] | undefined) ?? [];
  const supersededBy = (job.result?.memories_superseded_by as Record<string, string> | undefined) ?? {};
  return (
    <div class="stack" id="job">
      <Card title="Job">
        <dl class="kv">
          <dt>Id</dt>
          <dd class="mono">{job.id}</dd>
          <dt>Status</dt>
          <dd id="job-status">
            <Status value={job.status} />
          </dd>
          <dt>Submitted</dt>
          <dd>
            <Time iso={job.created_at} />
          </dd>
          <dt>Updated</dt>
          <dd>
            <Time iso={job.updated_at} />
          </dd>
          {ignored.length ? (
            <>
              <dt>Ignored groups</dt>
              <dd class="mono">
                {ignored.map((g, i) => (
                  <>
                    {i ? ", " : ""}
                    <bdi>{g}</bdi>
                  </>
                ))}
              </dd>
            </>
          ) : null}
        </dl>
        {job.error ? (
          <Notice kind="error">
            <strong>{job.error.code}</strong>: {job.error.message}
          </Notice>
        ) : null}
        {job.status === "pending" || job.status === "running" ? (
          <p class="muted">Still under way: reload to see its result.</p>
        ) : null}
      </Card>
      {job.result ? (
        <div class="grid two">
          <Card title={`Memories created (${created.length})`}>
            {created.length === 0 && updated.length === 0 ? (
              <p class="muted">Nothing new was learned from this transcript.</p>
            ) : null}
            <MemoryLinks memories={created} />
          </Card>
          {updated.length ? (
            <Card title={`Memories updated (${updated.length})`}>
              <p class="muted small">
                Memories stored before this job that it restated, revised or replaced.
              </p>
              <MemoryLinks memories={updated} supersededBy={supersededBy} />
            </Card>
          ) : null}
          <Card title="Stage timings">
            <Timings timings={job.result.stage_timings as Record<string, number>} />
          </Card>
        </div>
      ) : null}
    </div>
  );
};

async function ingestPage(c: Ctx, f: Form, outcome?: { job?: IngestJob; error?: string; status?: number }) {
  const ctx = c.get("ctx");
  const [groups, jobs] = await Promise.all([
    listGroups({ ctx, input: {} }),
    listIngestJobs({ ctx, input: { limit: 10 } }),
  ]);
  const chosen = many(f, "group_ids");
  return page(
    c,
    <Layout title="Ingest" chrome={chrome(c)} section="ingest">
      <PageHead title="Ingest" lead="Paste a conversation and watch what the service learns from it." />
      <form method="post" action="/console/ingest" class="card stack">
        <Csrf token={c.get("csrf")} />
        <div class="row">
          <div class="field">
            <label for="i-user">User id</label>
            <input id="i-user" name="user_id" required value={one(f, "user_id") ?? ""} />
          </div>
          <div class="field">
            <label for="i-conv">Conversation id</label>
            <input id="i-conv" name="conv_id" required value={one(f, "conv_id") ?? ""} />
          </div>
          <div class="field">
            <label for="i-agent">Agent id</label>
            <input id="i-agent" name="agent_id" value={one(f, "agent_id") ?? ""} placeholder="optional" />
          </div>
          <div class="field">
            <label for="i-app">App id</label>
            <input id="i-app" name="app_id" value={one(f, "app_id") ?? ""} placeholder="optional" />
          </div>
          <div class="field">
            <label for="i-outcome">Outcome</label>
            <select id="i-outcome" name="outcome">
              <option value="">none</option>
              <option value="resolved" selected={one(f, "outcome") === "resolved"}>
                resolved
              </option>
              <option value="failed" selected={one(f, "outcome") === "failed"}>
                failed
              </option>
            </select>
          </div>
        </div>
        {groups.data.length ? (
          <fieldset class="field">
            <legend>Groups</legend>
            <div class="checks">
              {groups.data.map((g) => (
                <label>
                  <input type="checkbox" name="group_ids" value={g.id} checked={chosen.includes(g.id)} />
                  <bdi>{g.name}</bdi>
                </label>
              ))}
            </div>
          </fieldset>
        ) : null}
        <div class="field wide">
          <label for="transcript">Transcript</label>
          <textarea id="transcript" name="transcript" rows={8} class="mono" required placeholder={SAMPLE}>
            {one(f, "transcript") ?? ""}
          </textarea>
          <p class="hint">
            One <code>Speaker: text</code> line per message (User, Assistant or a name), or a JSON array of{" "}
            <code>{"{role, content}"}</code> messages.
          </p>
        </div>
        <div class="inline">
          <label class="check">
            <input
              type="checkbox"
              name="wait"
              value="1"
              checked={f.wait !== undefined || !("transcript" in f)}
            />
            Wait for the result
          </label>
          <button type="submit" class="btn primary">
            Submit
          </button>
        </div>
      </form>
      {outcome?.error ? <Notice kind="error">{outcome.error}</Notice> : null}
      {outcome?.job ? <JobDetail job={outcome.job} /> : null}
      <Card title="Recent jobs" id="jobs">
        {jobs.data.length === 0 ? (
          <Empty title="No ingest jobs yet.">
            Submit a transcript above; finished jobs are kept for a day.
          </Empty>
        ) : (
          <JobTable jobs={jobs.data} />
        )}
      </Card>
    </Layout>,
    outcome?.error ? (outcome.status ?? 422) : 200,
  );
}

/** The form's fields by their request names. */
const INGEST_LABELS = {
  messages: "Transcript",
  user_id: "User id",
  conv_id: "Conversation id",
  agent_id: "Agent id",
  app_id: "App id",
  outcome: "Outcome",
  group_ids: "Groups",
};

/** The fields a submission hands back to the next form (not the transcript). */
const KEPT_FIELDS = ["user_id", "conv_id", "agent_id", "app_id", "outcome"] as const;

export function registerIngestPages(app: ConsoleApp) {
  // After a submission the page is a GET of its job (post, redirect, get): reloading it, as a
  // pending job's page asks, shows the job again instead of submitting the transcript twice.
  app.get("/ingest", async (c) => {
    const id = c.req.query("job");
    // The submission's scope fields come back with it, for the next transcript of the conversation.
    const kept: Form = {};
    for (const k of KEPT_FIELDS) {
      const v = c.req.query(k);
      if (v) kept[k] = [v];
    }
    if (!id) return ingestPage(c, kept);
    try {
      return ingestPage(c, kept, { job: await getIngestJob({ ctx: c.get("ctx"), input: { jobId: id } }) });
    } catch (err) {
      // Not found, as the job's own page answers; the message quotes the id cut as it does.
      if (isCoreError(err) && err.code === "job_not_found")
        return ingestPage(c, kept, { error: err.message, status: 404 });
      throw err;
    }
  });

  app.post("/ingest", async (c) => {
    const f = await readForm(c);
    try {
      const messages = parseTranscript(one(f, "transcript") ?? "");
      // The wire schema checks the console's submission exactly as REST checks the API's.
      const request = checkFields(
        IngestRequestSchema,
        {
          messages,
          user_id: one(f, "user_id") ?? "",
          conv_id: one(f, "conv_id") ?? "",
          agent_id: one(f, "agent_id") ?? null,
          app_id: one(f, "app_id") ?? null,
          outcome: one(f, "outcome") ?? null,
          group_ids: many(f, "group_ids"),
        },
        INGEST_LABELS,
      );
      const out = await submitIngest({
        ctx: c.get("ctx"),
        input: { request, wait: f.wait !== undefined },
      });
      const query = new URLSearchParams({ job: out.job.id });
      for (const k of KEPT_FIELDS) {
        const v = one(f, k);
        if (v) query.set(k, v);
      }
      return c.redirect(`/console/ingest?${query}`, 303);
    } catch (err) {
      // A user's key naming another user is refused as REST refuses it (403), in the form's words.
      const said = inFormWords(err, INGEST_LABELS, otherUserWords(c.get("ctx").principal, "User id", true));
      if (isCoreError(said) && said.status < 500)
        return ingestPage(c, f, { error: said.message, status: said.status });
      throw said;
    }
  });

  app.get("/ingest/jobs/:id", async (c) => {
    const job = await getIngestJob({ ctx: c.get("ctx"), input: { jobId: c.req.param("id") } });
    return page(
      c,
      <Layout title="Ingest job" chrome={chrome(c)} section="ingest">
        <p class="crumbs">
          <a href="/console/ingest">Ingest</a> / <span class="mono">{job.id}</span>
        </p>
        <PageHead title="Ingest job" />
        <JobDetail job={job} />
      </Layout>,
    );
  });

  app.get("/ingest/jobs/:id/row", async (c) => {
    const job = await getIngestJob({ ctx: c.get("ctx"), input: { jobId: c.req.param("id") } });
    return page(c, <JobRow job={job} />, 200, true);
  });
}
