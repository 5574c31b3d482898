import { z } from "zod";
import type { Config } from "../config.js";
import { timestampText } from "../dates/dates.js";
import { checkpointWhereNoneRuns } from "../db/analyze.js";
import type { Db, Queryable } from "../db/db.js";
import { countActiveGroups, lockOrgGroups } from "../db/groups.js";
import { getOrg, insertOrg } from "../db/orgs.js";
import { txSizer } from "../db/timed-tx.js";
import {
  crossUserSupersedes,
  dropUnknownGroupTags,
  type ExportGroup,
  type ExportMemory,
  foreignIds,
  groupIdsTaken,
  importGroups,
  importMemories,
  importWebhook,
  markSupersededTargets,
  orgDocuments,
  reindexText,
} from "../db/transfer.js";
import { CoreError } from "../errors.js";
import { isGroupId } from "../groups/model.js";
import { FACT_STATUSES, MEMORY_TYPES } from "../memories/model.js";
import { embeddingText } from "../memories/write.js";
import type { Embedder } from "../providers/types.js";
import { webhookConfig } from "../webhooks/put.js";
import { encryptSecret, mintSecret } from "../webhooks/secrets.js";
import { isBlank, isStorable, JsonObject, looseDeep, valueAt } from "../wire/common.js";
import { GroupName, GroupPrompt } from "../wire/groups.js";
import { DETAILS_BY_TYPE } from "../wire/memories.js";
import { PutWebhookRequest } from "../wire/webhooks.js";
import { EXPORT_FORMAT, EXPORT_VERSION } from "./export.js";
import { mem0Items } from "./mem0.js";

/** Lines read (and their vectors computed, in one call) together; rows per transaction on PostgreSQL. */
const BATCH = 200;
/**
 * Rows per transaction at most where a transaction holds up every request (the embedded database's
 * one session): there each is sized to take about TX_MS (txSizer), as an ingest job's store
 * transactions are. 200 rows with their vectors and full-text weights held a live server's session
 * for seconds: its searches waited up to 5.3 s, and ingests waiting over 5 s for a connection got 503.
 */
const TIMED_BATCH = 50;
/** See the end of importOrg. */
const REWEIGH_BELOW = 1000;
const ORG_ID = /^[\w.-]{1,100}$/;

/** As PostgreSQL is to read it (see timestampText): at its full precision, UTC when it names no zone. */
const when = z.string().transform((s, ctx) => {
  const text = timestampText(s);
  if (text === null) ctx.addIssue({ code: "custom", message: "not an ISO 8601 date and time" });
  return text ?? s;
});
const nstr = z.string().nullable();
/** A user id as ingest takes it: none, or not blank (a file's "" was stored and served). */
const userId = z
  .string()
  .refine((s) => !isBlank(s), "must not be empty or blank (null for no user)")
  .nullable();
const Header = z.object({
  kind: z.literal("header"),
  format: z.literal(EXPORT_FORMAT),
  version: z.literal(EXPORT_VERSION),
  // origin and idp_linked_at: absent in exports made before they were written (operator, unlinked).
  org: z.object({
    id: z.string(),
    name: z.string(),
    tier: z.string(),
    origin: z.enum(["operator", "identity_provider"]).optional(),
    idp_linked_at: when.nullable().optional(),
  }),
  user_id: nstr,
  embedding: z.object({ dim: z.number().int().positive(), embedder: z.string() }),
});
/** A group id as the API makes and reads them (GET /v1/groups/{id} answers 404 to any other). */
const groupId = z.string().refine(isGroupId, "not a group id (grp_ and 32 hexadecimal digits)");
// A name and prompt as POST /v1/groups takes them (trimmed, not blank, within their limits).
const Group = z.object({
  kind: z.literal("group"),
  id: groupId,
  name: GroupName,
  prompt: GroupPrompt.nullable(),
  status: z.enum(["active", "archived"]),
  created_at: when,
  updated_at: when,
});
/** A field an export writes as null when the memory has none: left out of a line, it is none. */
const none = <T extends z.ZodType>(t: T) => t.nullable().default(null);
/**
 * A memory line. What makes the memory (its id, type, text, user, details, times) is required; a
 * field an export writes as null or an empty list when the memory has none may be left out of a
 * hand-made file (a vector left out is computed, as for null). `user_id` is required although null
 * is allowed: a user's memory whose field was forgotten must not become the whole organisation's.
 */
const Memory = z.object({
  kind: z.literal("memory"),
  id: z.uuid(),
  type: z.enum(MEMORY_TYPES),
  text: z.string().min(1),
  user_id: userId,
  agent_id: none(z.string()),
  conv_id: none(z.string()),
  app_id: none(z.string()),
  // Each a group id, once (the API keeps a memory's tags as a set).
  group_ids: z
    .array(groupId)
    .transform((ids) => [...new Set(ids)])
    .default([]),
  categories: z.array(z.string()).default([]),
  // Checked against its type's details schema (below), the one the API serves.
  details: JsonObject(),
  metadata: JsonObject().optional(),
  status: none(z.enum(FACT_STATUSES)),
  supersedes: none(z.uuid()),
  namespace: none(z.string()),
  trigger_entities: z.array(z.string()).default([]),
  outcome: none(z.enum(["resolved", "failed"])),
  full_content: none(z.string()),
  content_hash: none(z.string()),
  job_id: none(z.string()),
  write_key: none(z.string()),
  embedding: none(z.array(z.number().finite())),
  created_at: when,
  updated_at: when,
  context: nstr.optional(),
  concepts: nstr.optional(),
});
// The url and events as PUT /v1/webhooks takes them; their rules are checked as there (below).
const Webhook = z.object({
  kind: z.literal("webhook"),
  url: PutWebhookRequest.shape.url,
  events: PutWebhookRequest.shape.events,
  enabled: z.boolean(),
  created_at: when,
  updated_at: when,
});
const Line = z.discriminatedUnion("kind", [
  Header,
  Group,
  Memory.superRefine((m, ctx) => {
    const details = DETAILS_BY_TYPE[m.type].safeParse(m.details);
    for (const i of details.error?.issues ?? [])
      ctx.addIssue({ ...i, path: ["details", ...i.path] } as z.core.$ZodRawIssue);
  }),
  Webhook,
]);

export interface ImportReport {
  lines: number;
  groups: { imported: number; existing: number };
  /** `superseded`: imported facts marked superseded because a fact of their user supersedes them (see markSupersededTargets). */
  memories: { imported: number; existing: number; reembedded: number; superseded: number };
  webhook: "created" | "kept existing" | "none";
  /** A signing secret minted for an imported webhook (exports never carry one): shown once. */
  webhookSecret?: string;
  organisationCreated: boolean;
  /** Lines skipped, and lines imported with a tag taken off or a supersedes link not followed. */
  bad: Array<{ line: number; error: string }>;
}

export interface ImportDeps {
  db: Db;
  embedder: Embedder;
  /** The API's limits, which imported rows keep to. */
  config: Pick<
    Config,
    "MAX_GROUPS_PER_ORG" | "MAX_GROUP_IDS_PER_INGEST" | "MNEMO_WEBHOOK_ALLOW_PRIVATE" | "MNEMO_TEST_TX_MS"
  >;
  /** Server key, to encrypt a minted webhook secret. */
  secret: Buffer;
}

/**
 * Imports an export (or a mem0 export) into one organisation. An export's first line must be its
 * header (this format and version), else nothing is written. Idempotent by id: rows whose id is
 * already there are left alone. Vectors are kept when the file's embedder and dimension match the
 * target's, else recomputed. Each bad line is reported by number and skipped; lines are read by
 * batches of BATCH, whose vectors are computed before any transaction, then written in transactions
 * of BATCH rows (on the embedded database, sized by time: see TIMED_BATCH); a transaction the
 * database refuses goes in again line by line. Each committed transaction stays: an import stopped
 * midway and run again skips the rows already there.
 */
export async function importOrg(
  deps: ImportDeps,
  input: {
    orgId: string;
    format: "mnemo" | "mem0";
    /** Full-text weights are derived again for rows written while the organisation held fewer documents. */
    reweighBelow?: number | undefined;
  },
  lines: AsyncIterable<string>,
  onLine: () => void = () => {},
  /** What it does once every line is in (it can take seconds on a big import). */
  onStage: (stage: string) => void = () => {},
): Promise<ImportReport> {
  if (!ORG_ID.test(input.orgId))
    throw new CoreError("invalid_request", `'${input.orgId}' is not an organisation id.`);
  const report: ImportReport = {
    lines: 0,
    groups: { imported: 0, existing: 0 },
    memories: { imported: 0, existing: 0, reembedded: 0, superseded: 0 },
    webhook: "none",
    organisationCreated: false,
    bad: [],
  };
  const { db, embedder } = deps;
  let org = await getOrg(db, input.orgId);
  let header: z.infer<typeof Header> | undefined;
  let keepVectors = false;
  let groups: Array<{ line: number; row: ExportGroup }> = [];
  let memories: Array<{ line: number; row: ExportMemory }> = [];

  // From its own export, the organisation is made as it was: its name and tier, and whether
  // identity-provider tokens may enter it (created from a token, or linked by the operator).
  const newOrg = () =>
    header?.org.id === input.orgId
      ? {
          id: input.orgId,
          name: header.org.name,
          tier: header.org.tier,
          origin: header.org.origin ?? "operator",
          idpLinkedAt: header.org.idp_linked_at ?? null,
        }
      : { id: input.orgId, name: input.orgId };
  /**
   * Runs `write` (which returns how many rows it wrote) in one transaction that first creates the
   * organisation when it does not exist yet; one that wrote nothing is rolled back, organisation
   * and all: an import that writes nothing leaves no new empty organisation behind.
   */
  const inOrg = async (write: (tx: Queryable) => Promise<number>) => {
    const made = await db
      .tx(async (tx) => {
        const made = org ? undefined : await insertOrg(tx, newOrg());
        if ((await write(tx)) === 0 && made) throw NOTHING_WRITTEN;
        return made;
      })
      .catch((err: unknown) => {
        if (err === NOTHING_WRITTEN) return undefined;
        throw err;
      });
    if (made) {
      org = made;
      report.organisationCreated = true;
    }
  };

  /** The memories this import wrote, each with its line (lower-case ids, as the database gives them). */
  const inserted = new Map<string, number>();
  /**
   * The file's memories already there, each with its line: the steps after the last line run over
   * them too, as a run stopped before those steps (killed, the database gone) left its rows without
   * them, and its rerun finds them already there. Each step does nothing to a row it already did.
   */
  const found = new Map<string, number>();
  // Rows weighed for full text while the organisation held few documents (see below).
  const reweigh: string[] = [];
  let documents: number | undefined;
  type Rows = { groups: typeof groups; memories: typeof memories };
  const sizer = txSizer({
    timed: db.oneSession,
    max: db.oneSession ? TIMED_BATCH : BATCH,
    ms: deps.config.MNEMO_TEST_TX_MS,
  });
  /** Writes rows in one transaction (all or none); returns which were new. */
  const land = async (rows: Rows) => {
    let g = 0;
    let m: string[] = [];
    let over: typeof groups = [];
    await inOrg(async (tx) => {
      const quota = await withinQuota(tx, input.orgId, rows.groups, deps.config.MAX_GROUPS_PER_ORG);
      over = quota.over;
      g = await importGroups(
        tx,
        input.orgId,
        quota.keep.map((x) => x.row),
      );
      m = await importMemories(
        tx,
        input.orgId,
        rows.memories.map((x) => x.row),
      );
      return g + m.length;
    });
    return { rows, g, m, over };
  };
  /** Counts rows written by land: new, already there, or another organisation's (a bad line). */
  const tally = async ({ rows, g, m, over }: Awaited<ReturnType<typeof land>>) => {
    const orgId = input.orgId;
    for (const x of over)
      report.bad.push({
        line: x.line,
        error: `group ${x.row.id}: the organisation would have more than ${deps.config.MAX_GROUPS_PER_ORG} active groups (MAX_GROUPS_PER_ORG); not imported`,
      });
    report.groups.imported += g;
    report.groups.existing += rows.groups.length - over.length - g;
    report.memories.imported += m.length;
    report.memories.existing += rows.memories.length - m.length;
    const written = new Set(m);
    for (const x of rows.memories) {
      const id = x.row.id.toLowerCase();
      if (written.has(id)) inserted.set(id, x.line);
      else found.set(id, x.line);
    }
    if (documents! < (input.reweighBelow ?? REWEIGH_BELOW)) reweigh.push(...m);
    documents! += m.length;
    if (g + over.length < rows.groups.length || m.length < rows.memories.length) {
      const taken = [
        ...(await foreignIds(
          db,
          "groups",
          orgId,
          rows.groups.map((x) => x.row.id),
        )),
        ...(await foreignIds(
          db,
          "memories",
          orgId,
          rows.memories.map((x) => x.row.id),
        )),
      ];
      const lineOf = new Map([...rows.groups, ...rows.memories].map((x) => [x.row.id, x.line]));
      for (const id of taken) {
        report.bad.push({ line: lineOf.get(id) ?? 0, error: `id ${id} belongs to another organisation` });
        if (rows.memories.some((x) => x.row.id === id)) report.memories.existing--;
        else report.groups.existing--;
      }
    }
  };
  const flush = async () => {
    if (groups.length === 0 && memories.length === 0) return;
    const batch: Rows = { groups, memories };
    groups = [];
    memories = [];
    const numbers = [...batch.groups, ...batch.memories].map((x) => x.line);
    try {
      // Vectors first, outside the transaction: a model call may be slow. A row whose id is already
      // stored is left alone by the insert, so it is sent to no model (and sends no vector).
      const present = new Set(
        (
          await db.query<{ id: string }>("SELECT id::text AS id FROM memories WHERE id = ANY($1::uuid[])", [
            batch.memories.map((m) => m.row.id),
          ])
        ).rows.map((r) => r.id),
      );
      for (const m of batch.memories) if (present.has(m.row.id.toLowerCase())) m.row.embedding = null;
      const stale = batch.memories.filter(
        (m) =>
          !present.has(m.row.id.toLowerCase()) &&
          (!keepVectors || !m.row.embedding || m.row.embedding.length !== embedder.dim),
      );
      if (stale.length) {
        const vectors = await embedder.embed(stale.map((m) => embeddingText(m.row)));
        stale.forEach((m, i) => {
          m.row.embedding = vectors[i]!;
        });
        report.memories.reembedded += stale.length;
      }
    } catch (err) {
      const [first, last] = [Math.min(...numbers), Math.max(...numbers)];
      report.bad.push({
        line: first,
        error: `lines ${first}-${last}: batch not written (${(err as Error).message})`,
      });
      return;
    }
    documents ??= await orgDocuments(db, input.orgId);
    // Each line on its own, in line order, to be written by transactions of sizer.size lines.
    const one: Rows[] = [
      ...batch.groups.map((x) => ({ groups: [x], memories: [] })),
      ...batch.memories.map((x) => ({ groups: [], memories: [x] })),
    ].sort((a, b) => (a.groups[0] ?? a.memories[0])!.line - (b.groups[0] ?? b.memories[0])!.line);
    for (let from = 0; from < one.length; ) {
      const chunk = one.slice(from, from + sizer.size);
      from += chunk.length;
      const rows: Rows = {
        groups: chunk.flatMap((r) => r.groups),
        memories: chunk.flatMap((r) => r.memories),
      };
      let landed: Array<Awaited<ReturnType<typeof land>>>;
      try {
        landed = [await sizer.time(chunk.length, () => land(rows))];
      } catch {
        // A line the database refuses (a value its checks do not pass, a text whose full-text vector
        // passes 1 MB, a job_id and write_key another memory holds) rolled back its whole
        // transaction: each of its lines is written again on its own, so only that one is reported
        // and skipped.
        landed = [];
        for (const r of chunk) {
          try {
            landed.push(await land(r));
          } catch (err) {
            const line = (r.groups[0] ?? r.memories[0])!.line;
            report.bad.push({ line, error: `not written (${(err as Error).message})` });
          }
        }
      }
      for (const l of landed) await tally(l);
    }
  };

  const source = input.format === "mem0" ? mem0Items(lines, input.orgId) : parseLines(lines);
  // Whether a line came before this one (blank lines aside): a header must come first.
  let sawLine = false;
  for await (const item of source) {
    const first = !sawLine;
    sawLine = true;
    report.lines = item.line;
    onLine();
    if (first && input.format === "mnemo") {
      header = headerOf(item);
      keepVectors = header.embedding.dim === embedder.dim && header.embedding.embedder === embedder.name;
      continue;
    }
    if ("error" in item) {
      report.bad.push({ line: item.line, error: item.error });
      continue;
    }
    const storable = storableLine(item.value);
    if ("error" in storable) {
      report.bad.push({ line: item.line, error: storable.error });
      continue;
    }
    if (input.format === "mem0") {
      memories.push({ line: item.line, row: storable.value as ExportMemory });
    } else {
      const parsed = Line.safeParse(storable.value);
      if (!parsed.success) {
        report.bad.push({ line: item.line, error: describe(parsed.error, storable.value) });
        continue;
      }
      const v = parsed.data;
      if (v.kind === "header") {
        report.bad.push({ line: item.line, error: "a header is only allowed first" });
      } else if (v.kind === "group") {
        const { kind: _, ...row } = v;
        groups.push({ line: item.line, row });
      } else if (v.kind === "memory") {
        const { kind: _, ...row } = v;
        // As many tags as PATCH /v1/memories/{id} lets a memory carry (a memory imported with more
        // could not lose them one at a time: each PATCH would leave it over the cap).
        const cap = deps.config.MAX_GROUP_IDS_PER_INGEST;
        if (row.group_ids.length > cap) {
          report.bad.push({
            line: item.line,
            error: `group_ids: a memory carries at most ${cap} group ids (MAX_GROUP_IDS_PER_INGEST), not ${row.group_ids.length}`,
          });
          continue;
        }
        memories.push({ line: item.line, row });
      } else {
        // What PUT /v1/webhooks refuses (a URL with credentials, not https, not public; no event)
        // is a bad line: the file's config was stored, served and delivered to as it was.
        const config = await webhookConfig(v, {
          allowPrivate: deps.config.MNEMO_WEBHOOK_ALLOW_PRIVATE,
        }).catch((err: unknown) => {
          if (!(err instanceof CoreError)) throw err;
          report.bad.push({ line: item.line, error: `webhook: ${err.message}` });
          return undefined;
        });
        if (!config) continue;
        await flush();
        const plain = mintSecret();
        let created = false;
        await inOrg(async (tx) => {
          created = await importWebhook(tx, input.orgId, {
            url: config.url,
            events: config.events,
            enabled: v.enabled,
            created_at: v.created_at,
            updated_at: v.updated_at,
            secret_enc: encryptSecret(deps.secret, input.orgId, plain),
            secret_last_four: plain.slice(-4),
          });
          return created ? 1 : 0;
        });
        report.webhook = created ? "created" : "kept existing";
        if (created) report.webhookSecret = plain;
      }
    }
    if (groups.length + memories.length >= BATCH) await flush();
  }
  await flush();
  // Nothing read at all is more likely a failed export upstream than an empty organisation.
  if (!sawLine) report.bad.push({ line: 0, error: "the input holds no line" });
  if (inserted.size)
    onStage(
      `every line read; checking group tags, marking superseded facts, weighing ${reweigh.length} rows again for full text, checkpoint`,
    );
  // Another organisation's id (reported above) is left alone: each step reads this one's rows only.
  const ids = [...inserted.keys(), ...found.keys()];
  const lineOf = (id: string) => inserted.get(id) ?? found.get(id) ?? 0;
  // A tag must name a group of the organisation, as the API's do; a group can come after the
  // memories it tags (see exportOrg), so tags are checked once every line is in. A tag naming
  // none (another organisation's group, a group line refused above, a typo) is dropped rather
  // than the memory: the memory is what its user sees, the tag named nothing they could.
  for (const { id, dropped } of await dropUnknownGroupTags(db, input.orgId, ids))
    report.bad.push({
      line: lineOf(id),
      error: `group_ids: ${dropped.join(", ")} ${dropped.length > 1 ? "name" : "names"} no group of the file or the organisation; the memory was imported without ${dropped.length > 1 ? "them" : "it"}`,
    });
  report.memories.superseded = await markSupersededTargets(db, input.orgId, ids);
  // A fact supersedes only its own user's facts (ingest compares a user's facts with that user's
  // alone): a link to another user's fact is left as the file has it but not followed, and reported
  // on the line this import wrote (the superseding fact's, else its target's).
  // Reported for the rows this run wrote (a link is only read, never changed: a rerun says nothing).
  for (const { id, target } of await crossUserSupersedes(db, input.orgId, [...inserted.keys()])) {
    const mine = inserted.get(id);
    report.bad.push(
      mine === undefined
        ? {
            line: lineOf(target),
            error: `fact ${id}, another user's, names this fact in supersedes: not followed (a fact supersedes only its own user's facts)`,
          }
        : {
            line: mine,
            error: `supersedes: ${target} is another user's fact: not followed (a fact supersedes only its own user's facts)`,
          },
    );
  }
  // In line order: a line refused by the database is only known once its transaction is written.
  report.bad.sort((a, b) => a.line - b.line);
  // A clean export of an empty organisation gives it back (with a bad line, nothing is made).
  if (!org && header && report.bad.length === 0) {
    org = await insertOrg(db, newOrg());
    report.organisationCreated = true;
  }
  // Each transaction's rows were weighed for full text against the organisation's average document
  // length as it stood (the first one's against none): those written while it held fewer than
  // REWEIGH_BELOW documents are weighed again against them all. Past that the average has settled
  // (with BM25's b of 0.3 a few percent off the average moves a weight by about 1%), and weighing
  // every row again wrote each twice: a scale probe's 157,560-row import spent 6.5 of its 19.5
  // minutes there, and left as many dead rows for the next vacuum.
  await reindexText(db, input.orgId, reweigh);
  // An import writes a lot of log; where no checkpointer runs, it is released now, not at the
  // next sweep (a crash before then would replay all of it).
  await checkpointWhereNoneRuns(db);
  return report;
}

/**
 * Of a transaction's groups, those to write and those over the quota: a new active group past the
 * organisation's MAX_GROUPS_PER_ORG active groups, which POST /v1/groups would refuse
 * (`groups_quota_exceeded`). Under the lock a create takes, so the two cannot pass it together.
 */
async function withinQuota<G extends { row: ExportGroup }>(
  tx: Queryable,
  orgId: string,
  groups: G[],
  max: number,
): Promise<{ keep: G[]; over: G[] }> {
  if (!groups.some((x) => x.row.status === "active")) return { keep: groups, over: [] };
  await lockOrgGroups(tx, orgId);
  // Ids already there (here or in another organisation) are not written, so they take no room.
  const taken = new Set(
    await groupIdsTaken(
      tx,
      groups.map((x) => x.row.id),
    ),
  );
  let room = max - (await countActiveGroups(tx, orgId));
  const keep: G[] = [];
  const over: G[] = [];
  for (const x of groups) {
    if (x.row.status !== "active" || taken.has(x.row.id)) keep.push(x);
    else if (room > 0) {
      room--;
      taken.add(x.row.id);
      keep.push(x);
    } else over.push(x);
  }
  return { keep, over };
}

/** Thrown to roll back a transaction that wrote nothing (see inOrg). */
const NOTHING_WRITTEN = Symbol("nothing written");

/**
 * An export's header, from its first line; anything else is refused before a row is written (a
 * file of another format or version, or without its header, is not one this reads line by line).
 */
function headerOf(
  item: { line: number; value: unknown } | { line: number; error: string },
): z.infer<typeof Header> {
  const refuse = (why: string) =>
    new CoreError(
      "invalid_request",
      `line ${item.line}: not the header of a ${EXPORT_FORMAT} version ${EXPORT_VERSION} file (${why}); nothing was imported`,
    );
  if ("error" in item) throw refuse(item.error);
  const storable = storableLine(item.value);
  if ("error" in storable) throw refuse(storable.error);
  const parsed = Header.safeParse(storable.value);
  if (parsed.success) return parsed.data;
  const kind = (storable.value as { kind?: unknown } | null)?.kind;
  throw refuse(
    kind === "header"
      ? describe(parsed.error, storable.value)
      : typeof kind === "string"
        ? `a ${kind} line comes first`
        : `${describe(parsed.error, storable.value)}; a mem0 export is read with --format mem0`,
  );
}

/** A memory's free text: what the REST API takes as message content is cleaned as it is there. */
const FREE_TEXT = new Set(["text", "full_content", "details", "metadata", "context", "concepts"]);

/**
 * A line as PostgreSQL can store it: in free text a NUL byte is dropped and a lone surrogate
 * becomes U+FFFD (as the REST API does with message content); anywhere else (ids, names, a URL)
 * either makes the line a bad one, reported with its number, so it never fails its whole
 * transaction.
 */
function storableLine(value: unknown): { value: unknown } | { error: string } {
  if (!value || typeof value !== "object" || Array.isArray(value)) return { value };
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (FREE_TEXT.has(key)) {
      out[key] = looseDeep(v);
      continue;
    }
    if (!storableDeep(v) || !isStorable(key))
      return { error: `${key}: holds a NUL character or a lone surrogate, which cannot be stored` };
    out[key] = v;
  }
  return { value: out };
}

function storableDeep(v: unknown): boolean {
  if (typeof v === "string") return isStorable(v);
  if (Array.isArray(v)) return v.every(storableDeep);
  if (v && typeof v === "object")
    return Object.entries(v).every(([k, x]) => isStorable(k) && storableDeep(x));
  return true;
}

/** JSON lines, numbered from 1; blank lines are skipped, unparsable ones reported. */
async function* parseLines(
  lines: AsyncIterable<string>,
): AsyncGenerator<{ line: number; value: unknown } | { line: number; error: string }> {
  let n = 0;
  for await (const line of lines) {
    n++;
    // A byte-order mark (an editor on Windows) is no part of the first line's JSON.
    const raw = n === 1 ? line.replace(/^\uFEFF/, "") : line;
    if (!raw.trim()) continue;
    try {
      yield { line: n, value: JSON.parse(raw) };
    } catch {
      yield { line: n, error: "not valid JSON" };
    }
  }
}

/**
 * A line's first failures, each with its field. A field left out reads `required`: zod's own
 * message for it is the one for a wrong value (`outcome: Invalid option: expected one of ...`).
 */
function describe(err: z.ZodError, line: unknown): string {
  const said = err.issues.map((i) => {
    const parent = valueAt(line, i.path.slice(0, -1));
    const missing =
      i.path.length > 0 &&
      parent !== null &&
      typeof parent === "object" &&
      !Array.isArray(parent) &&
      valueAt(line, i.path) === undefined;
    return `${i.path.join(".") || "line"}: ${missing ? "required" : i.message}`;
  });
  // A field a union checks in each of its options fails once per option: said once.
  return [...new Set(said)].slice(0, 3).join("; ");
}
