import type { FC } from "hono/jsx";
import { CoreError, isCoreError } from "../../src/errors.js";
import { listGroups } from "../../src/groups/list.js";
import type { Group } from "../../src/groups/model.js";
import { type SearchInclude, type SearchResult, searchMemories } from "../../src/search/search.js";
import { triggerDirectives } from "../../src/trigger/trigger.js";
import { SearchRequestSchema, TriggerRequestSchema } from "../../src/wire/search.js";
import { AXIS_LABELS, Badge, Card, Empty, excerpt, Notice, PageHead, Time, Timings } from "../components.js";
import { type CodeWords, checkFields, type FieldLabels, inFormWords, otherUserWords } from "../fields.js";
import { Csrf, Layout } from "../layout.js";
import { Markdown } from "../markdown.js";
import { type Ctx, chrome, type Form, many, one, page, readForm } from "../render.js";
import type { ConsoleApp } from "../types.js";

const INCLUDES = ["fact", "artifact", "episode", "lesson", "procedure", "full_content"] as const;

/** The scope fields' labels, for what the wire schema says of them. */
const SCOPE_LABELS = { user_id: "User", agent_id: "Agent", app_id: "App", group_ids: "Groups" };

const scopeOf = (f: Form) => ({
  user_id: one(f, "user_id") ?? null,
  agent_id: one(f, "agent_id") ?? null,
  app_id: one(f, "app_id") ?? null,
  group_ids: many(f, "group_ids").length ? many(f, "group_ids") : null,
});

/** The four scope axes; at least one is needed (an organisation-wide read is refused). */
const ScopeFields: FC<{ f: Form; groups: Group[] }> = ({ f, groups }) => (
  <fieldset class="scope">
    <legend>Scope (at least one)</legend>
    {(["user_id", "agent_id", "app_id"] as const).map((k) => (
      <div class="field">
        <label for={`s-${k}`}>{AXIS_LABELS[k]}</label>
        <input id={`s-${k}`} name={k} value={one(f, k) ?? ""} />
      </div>
    ))}
    <div class="field wide">
      <span class="label">Groups</span>
      {groups.length === 0 ? (
        <span class="muted small">
          none yet (<a href="/console/groups">create</a>)
        </span>
      ) : (
        <div class="checks">
          {groups.map((g) => (
            <label>
              <input
                type="checkbox"
                name="group_ids"
                value={g.id}
                checked={many(f, "group_ids").includes(g.id)}
              />
              <bdi>{g.name}</bdi>
            </label>
          ))}
        </div>
      )}
    </div>
  </fieldset>
);

const ModeField: FC<{ f: Form }> = ({ f }) => (
  <fieldset class="field">
    <legend>Mode</legend>
    <div class="checks">
      {(["compose", "retrieve"] as const).map((m) => (
        <label>
          <input type="radio" name="mode" value={m} checked={(one(f, "mode") ?? "compose") === m} />
          {m}
        </label>
      ))}
    </div>
  </fieldset>
);

const Results: FC<{ result: SearchResult; kind: "search" | "trigger" }> = ({ result, kind }) => (
  <div class="stack" id="results">
    <Card title={`Results (${result.data.length})`}>
      {result.data.length === 0 ? (
        <Empty title={kind === "search" ? "Nothing matched in this scope." : "No directive matched."}>
          {kind === "search"
            ? "Widen the scope, try other words, or include more types."
            : "Directives come from ingests with outcome resolved or failed; check the identifiers and the scope."}
        </Empty>
      ) : (
        <div class="table-wrap">
          <table class="rows ranked">
            <thead>
              <tr>
                <th scope="col">#</th>
                <th scope="col">{kind === "search" ? "Score" : "Confidence"}</th>
                <th scope="col">Memory</th>
                <th scope="col">{kind === "search" ? "Type" : "Matched on"}</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {result.data.map((m, i) => (
                <tr>
                  <td>{i + 1}</td>
                  <td class="mono">
                    {kind === "search"
                      ? m.score === null
                        ? "lead"
                        : m.score.toFixed(4)
                      : typeof m.details.confidence === "number"
                        ? m.details.confidence.toFixed(2)
                        : "—"}
                  </td>
                  <td class="text">
                    <a href={`/console/memories/${m.id}`}>{excerpt(m.text)}</a>
                    {typeof m.details.because === "string" ? (
                      <p class="muted small">{excerpt(m.details.because, 240)}</p>
                    ) : null}
                  </td>
                  <td>
                    {kind === "search" ? (
                      <Badge tone={m.type}>{m.type}</Badge>
                    ) : (
                      ((m.details.matched_on as string[] | undefined) ?? []).map((e) => (
                        <code class="tag">{e}</code>
                      ))
                    )}
                  </td>
                  <td class="nowrap">
                    <Time iso={m.created_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Card>
    <div class="grid two">
      <Card title="Context block">
        {result.context ? (
          <Markdown text={result.context} />
        ) : (
          <p class="muted">
            {result.mode === "retrieve" ? "Mode retrieve composes no context block." : "Nothing to compose."}
          </p>
        )}
        {result.context_selection_applied ? <p class="muted small">Selected by the language model.</p> : null}
      </Card>
      <Card title="Stage timings">
        <Timings timings={result.stage_timings} />
      </Card>
    </div>
  </div>
);

/** What a form's run came to: a result, or a refusal to show beside the form with its status. */
interface Outcome {
  value?: SearchResult;
  error?: { message: string; status: number };
}

async function searchPage(c: Ctx, f: Form, { value: result, error }: Outcome = {}) {
  const groups = await listGroups({ ctx: c.get("ctx"), input: {} });
  const includes = many(f, "include");
  return page(
    c,
    <Layout title="Search" chrome={chrome(c)} section="search">
      <PageHead
        title="Search playground"
        lead="Run the same hybrid search agents call, and see why each row ranked where it did."
      />
      <form method="post" action="/console/search" class="card stack">
        <Csrf token={c.get("csrf")} />
        <ScopeFields f={f} groups={groups.data} />
        <div class="field wide">
          <label for="query">Query</label>
          <textarea id="query" name="query" rows={2} required>
            {one(f, "query") ?? ""}
          </textarea>
        </div>
        <div class="row">
          <ModeField f={f} />
          <fieldset class="field">
            <legend>Include</legend>
            <div class="checks">
              {INCLUDES.map((t) => (
                <label>
                  <input type="checkbox" name="include" value={t} checked={includes.includes(t)} />
                  {t}
                </label>
              ))}
            </div>
          </fieldset>
          <div class="field">
            <label for="limit">Limit</label>
            <input id="limit" name="limit" type="number" min="1" max="100" value={one(f, "limit") ?? "20"} />
          </div>
        </div>
        <div>
          <button type="submit" class="btn primary">
            Search
          </button>
        </div>
      </form>
      {error ? <Notice kind="error">{error.message}</Notice> : null}
      {result ? <Results result={result} kind="search" /> : null}
    </Layout>,
    error ? error.status : 200,
  );
}

async function triggerPage(c: Ctx, f: Form, { value: result, error }: Outcome = {}) {
  const groups = await listGroups({ ctx: c.get("ctx"), input: {} });
  return page(
    c,
    <Layout title="Trigger" chrome={chrome(c)} section="trigger">
      <PageHead
        title="Trigger playground"
        lead="Paste a tool call (or entities) and see which lessons and procedures it would recall."
      />
      <form method="post" action="/console/trigger" class="card stack">
        <Csrf token={c.get("csrf")} />
        <ScopeFields f={f} groups={groups.data} />
        <div class="row">
          <div class="field">
            <label for="tool">Tool</label>
            <input id="tool" name="tool" value={one(f, "tool") ?? ""} placeholder="Bash" />
          </div>
          <div class="field wide">
            <label for="entities">Entities (comma-separated, instead of a tool call)</label>
            <input
              id="entities"
              name="entities"
              value={one(f, "entities") ?? ""}
              placeholder="pg_dump, deploy.sh"
            />
          </div>
        </div>
        <div class="field wide">
          <label for="args">Arguments (JSON object)</label>
          <textarea id="args" name="args" rows={3} class="mono" placeholder='{"command": "pg_dump -Fc prod"}'>
            {one(f, "args") ?? ""}
          </textarea>
        </div>
        <div class="field wide">
          <label for="output">Output (optional)</label>
          <textarea id="output" name="output" rows={3} class="mono">
            {one(f, "output") ?? ""}
          </textarea>
        </div>
        <div class="field wide">
          <label for="task">Task (for the relevance gate under compose)</label>
          <input id="task" name="task" value={one(f, "task") ?? ""} />
        </div>
        <ModeField f={f} />
        <div>
          <button type="submit" class="btn primary">
            Trigger
          </button>
        </div>
      </form>
      {error ? <Notice kind="error">{error.message}</Notice> : null}
      {result ? <Results result={result} kind="trigger" /> : null}
    </Layout>,
    error ? error.status : 200,
  );
}

/**
 * Core errors a user can fix are shown beside the form, in its words and with the status REST
 * gives them (a user's key naming another user is 403); anything else goes to the error page.
 */
async function attempt(
  c: Ctx,
  labels: FieldLabels,
  codes: CodeWords,
  run: () => Promise<SearchResult>,
): Promise<Outcome> {
  try {
    return { value: await run() };
  } catch (err) {
    const said = inFormWords(err, labels, {
      missing_scope:
        "Fill in at least one of User, Agent or App, or tick a group: a read of the whole organisation is not allowed.",
      ...otherUserWords(c.get("ctx").principal, "User", false),
      ...codes,
    });
    if (isCoreError(said) && said.status < 500)
      return { error: { message: said.message, status: said.status } };
    throw said;
  }
}

const SEARCH_LABELS = { ...SCOPE_LABELS, query: "Query", mode: "Mode", include: "Include", limit: "Limit" };

const TRIGGER_LABELS = {
  ...SCOPE_LABELS,
  action: "Tool call",
  "action.tool": "Tool",
  "action.args": "Arguments",
  "action.output": "Output",
  entities: "Entities",
  task: "Task",
  mode: "Mode",
};

/** The mode as sent (the form offers compose and retrieve): anything else is refused by the schema, as REST refuses it. */
const mode = (f: Form) => (one(f, "mode") ?? "compose") as "compose" | "retrieve";

export function registerSearchPages(app: ConsoleApp) {
  app.get("/search", (c) => searchPage(c, {}));
  app.post("/search", async (c) => {
    const f = await readForm(c);
    // The limit as typed: a decimal number is its value (-1, 2.5 and 9999999 are refused by the
    // schema's rule, as REST refuses them); anything else is refused by the same rule.
    const typed = one(f, "limit");
    const limit = !typed ? undefined : /^-?\d{1,20}(\.\d{1,20})?$/.test(typed) ? Number(typed) : typed;
    const out = await attempt(c, SEARCH_LABELS, {}, () =>
      searchMemories({
        ctx: c.get("ctx"),
        // The wire schema checks the console's search exactly as REST checks the API's.
        input: checkFields(
          SearchRequestSchema,
          {
            ...scopeOf(f),
            query: one(f, "query") ?? "",
            mode: mode(f),
            // As sent: a value the form does not offer is refused, as REST refuses it (it was dropped).
            include: many(f, "include") as SearchInclude[],
            limit,
          },
          SEARCH_LABELS,
        ),
      }),
    );
    return searchPage(c, f, out);
  });

  app.get("/trigger", (c) => triggerPage(c, { mode: ["retrieve"] }));
  app.post("/trigger", async (c) => {
    const f = await readForm(c);
    const missing = { missing_trigger: "Fill in a tool call (Tool, Arguments or Output) or Entities." };
    const out = await attempt(c, TRIGGER_LABELS, missing, async () => {
      let args: Record<string, unknown> | null = null;
      const rawArgs = one(f, "args");
      if (rawArgs) {
        try {
          args = JSON.parse(rawArgs);
        } catch {
          throw new CoreError("invalid_request", "Arguments must be a JSON object.");
        }
        if (!args || typeof args !== "object" || Array.isArray(args)) {
          throw new CoreError("invalid_request", "Arguments must be a JSON object.");
        }
      }
      const tool = one(f, "tool");
      const entities = one(f, "entities")
        ?.split(",")
        .map((s) => s.trim())
        .filter(Boolean);
      return triggerDirectives({
        ctx: c.get("ctx"),
        input: checkFields(
          TriggerRequestSchema,
          {
            ...scopeOf(f),
            action:
              tool || args || one(f, "output")
                ? { tool: tool ?? null, args, output: one(f, "output") ?? null }
                : null,
            entities: entities?.length ? entities : null,
            task: one(f, "task") ?? null,
            mode: mode(f),
          },
          TRIGGER_LABELS,
        ),
      });
    });
    return triggerPage(c, f, out);
  });
}
