import type { Queryable } from "../db/db.js";
import {
  activeFactsByHash,
  activeFactsMatching,
  activeLessonsSharing,
  activeProceduresTitled,
  factRows,
  factsOfLessonTurns,
  latestArtifactVersion,
  type Similar,
  sameDirective,
  sameEpisode,
  sameTurnFacts,
  similarActiveFactsOf,
} from "../db/ingest-lookups.js";
import type { NewMemoryRow } from "../db/memories.js";
import { uuidFromSeed } from "../ids.js";
import { embeddingText } from "../memories/write.js";
import { isMostlyVerb } from "../providers/local/concepts.js";
import { normaliseText, STOPWORDS, splitSentences } from "../providers/local/english.js";
import {
  bareClaim,
  claimsOfClause,
  companionsOf,
  earlierStatements,
  leadLowered,
  phrasesBeyondChange,
  type SlotSearch,
  sameSlot,
  slotSearches,
  wordsBeyondChange,
} from "../providers/local/extractor.js";
import type { Embedder, Extractor, JudgeCase } from "../providers/types.js";
import { directiveHash, factHash, type Plan, type PlannedRow } from "./assemble.js";
import { otherHalf, procedureGoal, restates, reverses, statesRule } from "./reversal.js";

/**
 * How many of the user's latest facts stating a kind of attribute are read (of any subject: "my
 * sister lives in Rome" too), and how many of those of the same subject a fact meets.
 */
export const SLOT_CANDIDATES = 20;
const SAME_SLOT_CANDIDATES = 5;

/** What the store stage does besides inserting new rows. */
export interface Reconciled {
  insert: PlannedRow[];
  /**
   * Facts restating an existing active fact: existing id and the new source turns, and the planned
   * row (stored after all when the existing one is deleted before the store stage ends).
   */
  duplicates: Array<{ row: PlannedRow; existingId: string; eventIds: string[] }>;
  /** old fact id -> new fact id */
  supersedes: Map<string, string>;
  /** Artifacts seen before with the same content (touched, not re-stored). */
  sameArtifacts: Array<{ id: string; eventIds: string[] }>;
  /** New artifact versions (reported in memories_updated). */
  newVersions: Set<string>;
  /** Directives observed again. */
  sameDirectives: string[];
  /**
   * The same conversation ingested again: nothing new in it, and an episode of this user and
   * conversation with the same text. It is touched instead of stored twice.
   */
  sameEpisode: string | null;
  /**
   * The user's statements of the attributes this job states that the judge saw (the store
   * replaces one stated since, which it did not see: src/ingest/store.ts).
   */
  slotSeen: Set<string>;
  /**
   * Facts in `insert` that hold what a fact superseded with its clause said besides
   * (wholeSentencesToo): the earlier fact's, in its conversation and episode, with its groups.
   */
  rests: Set<string>;
  /**
   * Of each fact superseded with a rest kept (rests, or a rest an active fact says already), how
   * its episode says its sentences now, each sentence in the fact's own form: "" for one the rest
   * holds nothing of (it goes), the rest's clauses alone for one that holds a clause that ended as
   * well ("On 1 April 2025, the user lives in Paris and the user works at Initech." says "On 1
   * April 2025, the user works at Initech."). Sentences all of whose clauses hold are not listed.
   */
  unsaid: Map<string, SentenceEdit[]>;
}

/** A sentence of an episode (`said`) and what the episode says in its place (`now`, "" for nothing). */
export type SentenceEdit = { said: string; now: string };

/**
 * Superseded facts as unsayInEpisodes takes them (src/memories/delete.ts): one with sentence edits
 * (Reconciled.unsaid) as each sentence it said and what is said `instead`, any other whole.
 */
export const withSentenceEdits = <T extends { id: string; text: string }>(
  facts: readonly T[],
  edits: ReadonlyMap<string, SentenceEdit[]> | undefined,
) => facts.flatMap((f) => edits?.get(f.id)?.map((e) => ({ ...f, text: e.said, instead: e.now })) ?? [f]);

/**
 * Stage 4, dedup and supersede, against the same user's active facts (never another user's) and
 * the job's own earlier facts: candidates by vector and exact hash, by the attribute stated, and
 * verdicts by the extractor's judge. Artifacts with a known title become
 * a new version of that artifact; a directive seen before is counted again instead of duplicated.
 * Reads only: the store stage re-checks exact duplicates under its lock.
 */
export async function reconcile(
  db: Queryable,
  { extractor, embedder }: { extractor: Extractor; embedder: Embedder },
  scope: { orgId: string; userId: string; agentId: string | null },
  plan: Plan,
): Promise<Reconciled> {
  const out: Reconciled = {
    insert: [],
    duplicates: [],
    supersedes: new Map(),
    sameArtifacts: [],
    newVersions: new Set(),
    sameDirectives: [],
    sameEpisode: null,
    slotSeen: new Set(),
    rests: new Set(),
    unsaid: new Map(),
  };
  const similar = await similarActiveFactsOf(
    db,
    scope,
    plan.facts.map((f) => ({ embedding: f.embedding!, hash: f.content_hash! })),
    5,
    plan.episode.job_id,
  );
  // A single-valued attribute ("lives in", "works at") also meets the user's latest statements of
  // it, which the nearest neighbours miss ("lives in Paris" against "moved to Berlin"): one lookup
  // per kind of attribute the job states, not per fact.
  const slotted = new Map<string, SlotSearch>();
  for (const f of plan.facts) for (const s of slotSearches(f.text)) slotted.set(s.kind, s);
  const stated: Similar[] = [];
  for (const s of slotted.values())
    stated.push(...(await activeFactsMatching(db, scope, s, SLOT_CANDIDATES, plan.episode.job_id)));
  for (const c of stated) out.slotSeen.add(c.id);
  // The job's own facts are judged against each other too, in message order, as against stored
  // ones: "my favourite colour is blue" ... "actually, it's orange" in one conversation leaves
  // orange alone active. Each fact meets the earlier facts of other turns stating the same
  // attribute (latest first, before the stored ones).
  const planned = new Map(plan.facts.map((f, i) => [f.id, i]));
  const sources = plan.facts.map((f) => (f.details?.source_event_ids as string[] | undefined) ?? []);
  const apart = (i: number, j: number) => !sources[i]!.some((e) => sources[j]!.includes(e));
  const earlier = earlierStatements(
    plan.facts.map((f) => f.text),
    SAME_SLOT_CANDIDATES,
    apart,
  );
  const cases: JudgeCase[] = plan.facts.map((f, i) => {
    const candidates = earlier[i]!.map((j) => ({
      id: plan.facts[j]!.id,
      text: plan.facts[j]!.text,
      similarity: 0.5,
    }));
    candidates.push(...similar[i]!.filter((c) => c.similarity >= 0.5));
    for (const c of stated.filter((c) => sameSlot(f.text, c.text)).slice(0, SAME_SLOT_CANDIDATES))
      if (!candidates.some((x) => x.id === c.id)) candidates.push(c);
    return { text: f.text, candidates };
  });
  const verdicts = await extractor.judge(cases);
  const replaced = new Map<string, string>(); // planned fact id -> the row that holds it
  // Where what the judge named stands now: restated (replaced), then changed by this job's
  // facts (superseded), to the end of that chain.
  const restatedBy = (id: string) => {
    let at = id;
    while (replaced.has(at)) at = replaced.get(at)!;
    return at;
  };
  const latest = (id: string) => {
    let at = restatedBy(id);
    while (out.supersedes.has(at)) at = restatedBy(out.supersedes.get(at)!);
    return at;
  };
  plan.facts.forEach((f, i) => {
    const v = verdicts[i] ?? { verdict: "new" };
    const at = v.verdict === "new" ? null : latest(v.id);
    // Never against a fact of its own turn (the sentence and the clause cut from it).
    const j = at === null ? undefined : planned.get(at);
    if (at === null || (j !== undefined && !apart(i, j))) {
      out.insert.push(f);
      return;
    }
    const eventIds = sources[i]!;
    // A restatement of a value this conversation changed since is a change back: it supersedes.
    if (v.verdict === "duplicate" && at === restatedBy(v.id)) {
      replaced.set(f.id, at);
      if (j === undefined) {
        out.duplicates.push({ row: f, existingId: at, eventIds });
        return;
      }
      // Said again later in the same conversation: one fact, told by both turns.
      const first = plan.facts[j]!;
      const told = (first.details!.source_event_ids as string[] | undefined) ?? [];
      first.details = { ...first.details, source_event_ids: [...new Set([...told, ...eventIds])] };
      return;
    }
    f.supersedes = at;
    out.supersedes.set(at, f.id);
    // Other statements of the value it changed end with it (as a whole sentence stating the old
    // value does, below): superseded by it, its own link naming the first.
    if (v.verdict === "supersedes")
      for (const id of v.also ?? []) {
        const other = latest(id);
        const k = planned.get(other);
        if (other === f.id || out.supersedes.has(other) || (k !== undefined && !apart(i, k))) continue;
        out.supersedes.set(other, f.id);
      }
    out.insert.push(f);
  });
  const rests = await wholeSentencesToo(
    db,
    extractor,
    scope,
    out.supersedes,
    out.insert.filter((r) => r.type === "fact"),
  );
  // Facts kept of superseded ones, each a row where its whole was said: a rest (what the whole
  // said besides, superseding it) and who a home was shared with (a fact of its own).
  let kept = plan.facts.length;
  const keptRows = async (items: Array<{ whole: NewMemoryRow; text: string }>, supersede: boolean) => {
    const vectors = items.length
      ? await embedder.embed(items.map(({ whole, text }) => embeddingText({ ...whole, text })))
      : [];
    return items.map(({ whole, text }, k): PlannedRow => {
      const key = `f${kept++}`;
      return {
        ...whole,
        id: uuidFromSeed(`${plan.episode.job_id}:${key}`),
        write_key: key,
        job_id: plan.episode.job_id,
        text,
        content_hash: factHash(text),
        embedding: vectors[k]!,
        supersedes: supersede ? whole.id : null,
      };
    });
  };
  const written = rests.filter((r) => !r.said);
  for (const [k, row] of (await keptRows(written, true)).entries()) {
    const { whole, unsaid } = written[k]!;
    out.supersedes.set(whole.id, row.id);
    out.rests.add(row.id);
    out.unsaid.set(whole.id, unsaid);
    out.insert.push(row);
  }
  // A rest an active fact says already is written no row of its own ("I live in Chicago", its
  // turn's clause), but its whole's episode keeps it: only what the change took out goes.
  for (const { whole, unsaid, said } of rests) if (said) out.unsaid.set(whole.id, unsaid);
  // A home superseded keeps who it was shared with (companionsOf): "... in Portland with the
  // user's partner Daniel" leaves Daniel named.
  const texts = new Map(cases.flatMap((c) => c.candidates.map((x) => [x.id, x.text] as const)));
  for (const f of out.insert) texts.set(f.id, f.text);
  const shared = [...out.supersedes].flatMap(([old, by]) => {
    const [was, now] = [texts.get(old), texts.get(by)];
    const text = was && now ? companionsOf(was, now) : null;
    return text ? [{ id: old, text }] : [];
  });
  const known = new Set(
    (
      await activeFactsByHash(
        db,
        scope,
        shared.map((r) => factHash(r.text)),
      )
    ).map((r) => r.content_hash),
  );
  const wholes = new Map(
    (
      await factRows(
        db,
        scope,
        shared.map((r) => r.id).filter((id) => !planned.has(id)),
      )
    ).map((r) => [r.id, r] as const),
  );
  const companions = shared.flatMap(({ id, text }) => {
    const whole = plan.facts.find((f) => f.id === id) ?? wholes.get(id);
    return whole && !known.has(factHash(text)) ? [{ whole, text }] : [];
  });
  for (const row of await keptRows(companions, false)) {
    out.rests.add(row.id);
    out.insert.push(row);
  }

  for (const a of plan.artifacts) {
    const prev = await latestArtifactVersion(db, scope, a.details!.title as string);
    if (prev && prev.content_hash === a.content_hash) {
      out.sameArtifacts.push({ id: prev.id, eventIds: (a.details!.source_event_ids as string[]) ?? [] });
      replaced.set(a.id, prev.id);
      continue;
    }
    if (prev) {
      a.details = { ...a.details, version: prev.version + 1, root_id: prev.root_id };
      out.newVersions.add(a.id);
    }
    out.insert.push(a);
  }

  // Only the last form of a rule the conversation reversed is kept (the extractor lists a rule said
  // again where it was said last); a lesson reversing one in force supersedes it
  // (src/ingest/reversal.ts), and one said before and still in force is counted again. A
  // procedure for the goal of one in force (the same line introducing its steps) replaces it.
  const replacedBy = (later: PlannedRow, d: PlannedRow) =>
    later.type === d.type &&
    later.namespace === d.namespace &&
    (d.type === "lesson"
      ? reverses(later, d)
      : procedureGoal(d.text) !== null && procedureGoal(later.text) === procedureGoal(d.text));
  const last = plan.directives.filter(
    (d, i) => !plan.directives.slice(i + 1).some((later) => replacedBy(later, d)),
  );
  for (const d of last) {
    const prev = await sameDirective(db, scope, d.type, d.namespace ?? null, d.content_hash!);
    if (prev) {
      out.sameDirectives.push(prev.id);
      continue;
    }
    if (d.type === "lesson") {
      const entities = d.trigger_entities ?? [];
      const sharing = await activeLessonsSharing(
        db,
        scope,
        d.namespace ?? null,
        entities,
        plan.episode.job_id,
      );
      // The rule in force said again in other words is seen again, not stored beside it.
      const restated = sharing.find((old) => !out.supersedes.has(old.id) && restates(d, old));
      if (restated) {
        out.sameDirectives.push(restated.id);
        continue;
      }
      const unsaid: string[] = [];
      for (const old of sharing) {
        if (out.supersedes.has(old.id) || !reverses(d, old)) continue;
        out.supersedes.set(old.id, d.id);
        d.supersedes ??= old.id;
        await ruleFactsToo(db, scope.orgId, old, d, out);
        for (const e of otherHalf(d, old)) if (!unsaid.includes(e)) unsaid.push(e);
      }
      // "Go back to yarn." says, with the rule it reverses, "..., not pnpm": recall serves it
      // before a pnpm call too, and it reads whole on its own.
      if (unsaid.length) {
        d.text = `${d.text.replace(/[.!\s]+$/, "").replace(/,?\s+please$/i, "")}, not ${unsaid.join(" or ")}.`;
        d.trigger_entities = [...entities, ...unsaid];
        d.content_hash = directiveHash(d.type, d.text);
        [d.embedding] = await embedder.embed([embeddingText(d)]);
      }
    }
    const goal = d.type === "procedure" ? procedureGoal(d.text) : null;
    if (goal) {
      const titled = await activeProceduresTitled(db, scope, d.namespace ?? null, goal, plan.episode.job_id);
      // The same procedure stored by a job meanwhile is no older one: the store finds it again.
      for (const old of titled) {
        if (out.supersedes.has(old.id) || old.text === d.text || procedureGoal(old.text) !== goal) continue;
        out.supersedes.set(old.id, d.id);
        d.supersedes ??= old.id;
      }
    }
    out.insert.push(d);
  }

  // The episode links to the rows that now hold each fact and artifact.
  const ep = plan.episode;
  if (out.insert.length === 0) {
    out.sameEpisode = (await sameEpisode(db, scope, ep.conv_id ?? null, ep.text))?.id ?? null;
    if (out.sameEpisode) return out;
  }
  const swap = (ids: unknown) => [...new Set((ids as string[]).map((id) => replaced.get(id) ?? id))];
  ep.details = {
    ...ep.details,
    fact_ids: swap(ep.details!.fact_ids),
    artifact_ids: swap(ep.details!.artifact_ids),
  };
  for (const f of out.insert.filter((r) => r.type === "fact")) {
    f.details = { ...f.details, artifact_ids: swap(f.details!.artifact_ids) };
    f.details.artifact_id = (f.details.artifact_ids as string[])[0] ?? null;
  }
  out.insert.unshift(ep);
  return out;
}

/**
 * The facts that recorded a reversed rule ("The user asked the assistant never to use yarn here,
 * use pnpm.") go with it, so search does not serve the old rule through them: superseded by the
 * fact this job made of the new rule when there is one (a fact of its turns that states it),
 * else by the new lesson.
 */
async function ruleFactsToo(
  db: Queryable,
  orgId: string,
  old: { id: string; text: string; trigger_entities: string[] },
  lesson: PlannedRow,
  out: Reconciled,
): Promise<void> {
  const events = new Set((lesson.details?.source_event_ids as string[] | undefined) ?? []);
  const successor = out.insert.find(
    (f) =>
      f.type === "fact" &&
      ((f.details?.source_event_ids as string[] | undefined) ?? []).some((e) => events.has(e)) &&
      statesRule(f, { text: lesson.text, trigger_entities: lesson.trigger_entities ?? [] }),
  );
  for (const fact of await factsOfLessonTurns(db, orgId, old.id)) {
    if (out.supersedes.has(fact.id) || !statesRule(fact, old)) continue;
    out.supersedes.set(fact.id, successor?.id ?? lesson.id);
    if (successor) successor.supersedes ??= fact.id;
  }
}

/** A fact's words without the day that leads it ("On 8 May 2023, ..."). */
const claimWords = (text: string) => normaliseText(bareClaim(text));

/**
 * A clause superseded ("The user lives in Paris.") leaves the sentence it was cut from ("The user
 * lives in Paris and the user works at Initech.") saying the old value (by an ingest, and by a
 * PATCH of the clause's text: src/memories/variant.ts). That sentence is superseded
 * by the same fact. What it says besides is kept as a fact of its own where the old one was (its
 * conversation, episode, date and groups): its clauses with a subject of their own (clausesOf)
 * that hold no clause of its turn superseded, now or before ("On 6 January 2025, the user has two
 * kids."), less those its turn's active facts restate (as the judge compares them); none when
 * nothing is left or an active fact says the same already.
 */
export async function wholeSentencesToo(
  db: Queryable,
  extractor: Extractor,
  scope: { orgId: string; userId: string },
  supersedes: Map<string, string>,
  planned: NewMemoryRow[],
): Promise<Array<{ whole: NewMemoryRow; text: string; unsaid: SentenceEdit[]; said: boolean }>> {
  // A fact of this job superseded by a later one: its turn's facts are the job's planned ones.
  const turnOf = new Map(planned.map((f) => [f, JSON.stringify(f.details?.source_event_ids ?? [])]));
  const own = new Map(planned.map((f) => [f.id, f]));
  const siblings = await sameTurnFacts(
    db,
    scope,
    [...supersedes.keys()].filter((id) => !own.has(id)),
    true,
  );
  for (const old of supersedes.keys()) {
    const f = own.get(old);
    if (f)
      for (const g of planned)
        if (turnOf.get(g) === turnOf.get(f))
          siblings.push({ of: old, id: g.id, text: g.text, status: "active", successor: null });
  }
  const gone = new Set(
    siblings.filter((s) => s.status !== "active" || supersedes.has(s.id)).map((s) => s.id),
  );
  // What each superseded clause of these turns said that no longer holds: the parts of it stating
  // what superseded it ("the user works as an accountant at Deloitte" of "... at Deloitte, and the
  // user's wife Priya is a teacher", superseded by "the user works at Google"), else all of it.
  const byId = new Map(planned.map((f) => [f.id, f.text]));
  const unsaid = new Map<string, string[]>();
  const endedBy = new Map<string, string>();
  for (const s of siblings) {
    if (!gone.has(s.id) || unsaid.has(s.id)) continue;
    const by = s.successor ?? byId.get(supersedes.get(s.id) ?? "") ?? null;
    if (by !== null) endedBy.set(s.id, by);
    const parts = clausesOf(bareClaim(s.text)).map((c) => c.text);
    const changed = by === null ? [] : parts.filter((c) => sameSlot(c, by) || sameSlot(by, c));
    unsaid.set(s.id, changed.length ? changed : parts);
  }
  // Each sentence stating an old value in a clause of its own (clausesOf), with the clause that
  // superseded it first and its turn's facts.
  const wholes = new Map<string, { text: string; by: string; turn: typeof siblings }>();
  for (const old of new Set(siblings.map((s) => s.of))) {
    const turn = siblings.filter((s) => s.of === old);
    const parts = unsaid.get(old) ?? [];
    const states = (text: string) =>
      clausesOf(bareClaim(text)).some((c) => parts.some((p) => holdsClaim(c.text, p)));
    for (const whole of turn)
      if (whole.id !== old && !gone.has(whole.id) && !wholes.has(whole.id) && states(whole.text))
        wholes.set(whole.id, { text: whole.text, by: old, turn });
    // A fact of several sentences changed in some of them only ("In this repo we use jest for
    // tests. Always run `npm test` before committing." by "We moved from jest to vitest.") is a
    // whole of its own: superseded, its other sentences kept.
    const self = turn.find((s) => s.id === old);
    const clauses = self ? clausesOf(bareClaim(self.text)) : [];
    const changed = new Set(clauses.filter((c) => parts.includes(c.text)).map((c) => c.sentence));
    // So is one whose changed sentence says more than the change names, in the ended clause ("the
    // user is vegan and allergic to shellfish" by "the user is not vegan anymore") or in a clause of
    // its own ("..., but their husband prefers tea"): its rest is what the change left true.
    const by = endedBy.get(old);
    const saysMore = clauses.some((c) => by && restBeyond(c.text, [by], parts));
    if (self && !wholes.has(old) && (saysMore || clauses.some((c) => !changed.has(c.sentence))))
      wholes.set(old, { text: self.text, by: old, turn });
  }
  const found: Array<{
    id: string;
    text: string;
    left: string[];
    beyond: Map<string, string>;
    standing: typeof siblings;
    dropped: string[];
    by: string[];
  }> = [];
  for (const [id, { text, by, turn }] of wholes) {
    supersedes.set(id, supersedes.get(by)!);
    const dropped = turn
      .filter((s) => (s.id !== id || by === id) && gone.has(s.id))
      .flatMap((s) => unsaid.get(s.id)!);
    const standing = turn.filter((s) => s.id !== id && !gone.has(s.id) && !wholes.has(s.id));
    const clauses = clausesOf(bareClaim(text));
    // Its own sentences only whole (the clause cut of a sentence that named a home "with the
    // user's two kids" is no claim).
    const changed = new Set(
      clauses.filter((c) => by === id && dropped.includes(c.text)).map((c) => c.sentence),
    );
    const left = clauses
      .filter((c) => !changed.has(c.sentence))
      .map((c) => c.text)
      .filter((c) => !dropped.some((d) => holdsClaim(c, d)));
    const endings = turn.flatMap((s) => (gone.has(s.id) && endedBy.has(s.id) ? [endedBy.get(s.id)!] : []));
    // An ended clause's claims the change left true, said on their own (restBeyond).
    const beyond = new Map(
      clauses.flatMap((c) => {
        const host = clauses.find((h) => h.sentence === c.sentence)!.text;
        const more = left.includes(c.text) ? null : restBeyond(c.text, endings, dropped, host);
        return more ? [[c.text, more] as const] : [];
      }),
    );
    if (left.length || beyond.size) found.push({ id, text, left, beyond, standing, dropped, by: endings });
  }
  // A clause its turn's active facts restate is no rest: the judge, as it compares restatements.
  const cases = found.flatMap(({ text, left, standing }) =>
    left.map((c) => ({
      text: restOf(text, (other) => other !== c) ?? c,
      candidates: standing.map((s) => ({ id: s.id, text: s.text, similarity: 0.5 })),
    })),
  );
  const verdicts = cases.length ? await extractor.judge(cases) : [];
  let k = 0;
  const rests: Array<{ id: string; text: string; unsaid: SentenceEdit[]; said?: boolean }> = [];
  const written = new Set<string>();
  for (const { id, text, left, beyond, dropped, by } of found) {
    const restated = new Set(left.filter(() => verdicts[k++]?.verdict === "duplicate"));
    const rest = sayOf(text, (c) =>
      left.includes(c) ? (restated.has(c) ? null : c) : (beyond.get(c) ?? null),
    );
    const unsaid = episodeEdits(text, left, beyond, dropped, by);
    // The same rest of a sentence and of its clause cut is written once.
    if (rest !== null && !written.has(bareClaim(rest))) rests.push({ id, text: rest, unsaid });
    // Every clause left restated by an active fact: no rest to write, but the episode keeps them.
    else rests.push({ id, text: "", unsaid, said: true });
    if (rest !== null) written.add(bareClaim(rest));
  }
  // Nor one that an active fact says already, word for word.
  const said = new Set(
    (
      await activeFactsByHash(
        db,
        scope,
        rests.filter((r) => !r.said).map((r) => factHash(r.text)),
      )
    )
      .filter((r) => !wholes.has(r.id))
      .map((r) => r.content_hash),
  );
  // Such a rest is no row, but its whole's episode still keeps what the rest says.
  if (rests.length === 0) return [];
  const stored = new Map(
    (
      await factRows(
        db,
        scope,
        rests.map((r) => r.id).filter((id) => !own.has(id)),
      )
    ).map((r) => [r.id, r]),
  );
  return rests.flatMap((r) => {
    const whole = own.get(r.id) ?? stored.get(r.id);
    return whole
      ? [{ whole, text: r.text, unsaid: r.unsaid, said: r.said || said.has(factHash(r.text)) }]
      : [];
  });
}

/**
 * A fact's claim as the parts that stand on their own: its sentences, each cut where "and" or "but"
 * joins a clause with a subject of its own ("The user lives in Paris, and the user's wife is a
 * teacher."); a verb phrase sharing the subject before it stays with it ("lives in Denver and works
 * at Deloitte").
 */
export function clausesOf(body: string): Array<{ sentence: number; sep: string; text: string; end: string }> {
  const out: Array<{ sentence: number; sep: string; text: string; end: string }> = [];
  splitSentences(body).forEach((s, sentence) => {
    const end = /[.!?]*$/.exec(s)![0];
    const pieces = s.slice(0, s.length - end.length).split(/(,?\s+(?:and|but)\s+)/i);
    out.push({ sentence, sep: "", text: pieces[0]!, end });
    for (let k = 1; k < pieces.length; k += 2) {
      const [sep, piece] = [pieces[k]!, pieces[k + 1]!];
      if (OWN_SUBJECT.test(piece) && FINITE_AFTER_SUBJECT.test(piece.replace(/^\S+\s+/, "")))
        out.push({ sentence, sep, text: piece, end });
      else out.at(-1)!.text += `${sep}${piece}`;
    }
  });
  return out;
}
/** What opens a clause's own subject: a determiner or possessive, a pronoun, a name. */
const OWN_SUBJECT =
  /^(?:the|a|an|this|that|these|those|his|her|their|its|our|my|he|she|they|it|we|there|\p{Lu})/u;
/** A verb after the subject's first word: a finite auxiliary, or a form in -s or -ed. */
const FINITE_AFTER_SUBJECT =
  /\b(?:is|are|was|were|has|have|had|does|did|do|can|will|would|could|should|must)\b|\b\p{Ll}+(?:s|ed)\b/u;

/**
 * Whether a fact's claim holds another's: that claim's words but function words are all in it, in
 * their order ("the user lives in Denver and works at Deloitte" holds "the user works at Deloitte"),
 * a word the claim does not make a possessive of not read as one ("the user's sister lives in
 * Paris" holds no "the user lives in Paris").
 */
export function holdsClaim(text: string, claim: string): boolean {
  const words = (t: string) =>
    normaliseText(bareClaim(t))
      .split(" ")
      .filter((w) => w === "s" || (w && !STOPWORDS.has(w)));
  const wanted = words(claim);
  const have = words(text);
  let at = 0;
  have.forEach((w, k) => {
    if (at < wanted.length && w === wanted[at] && (have[k + 1] !== "s" || wanted[at + 1] === "s")) at++;
  });
  return wanted.length > 0 && at === wanted.length;
}

/**
 * How the episode of a whole superseded with a rest kept (wholeSentencesToo) says its sentences now,
 * each as the fact (and so its episode) says it: a sentence with every clause still holding
 * (`left`) is not listed; one with an ended clause is said as its clauses that hold, and as the
 * claims of an ended clause that hold none of the ended ones (`dropped`): "the user lives in Denver
 * and works at Acme" is "the user lives in Denver" when Acme ended. A sentence with nothing that
 * holds goes (""), its day leading the next sentence that stays. A sentence is kept whole when an
 * ended claim says more than the change names (wordsBeyondChange of `by`, what superseded it): "the
 * user is vegetarian, allergic to peanuts" ended by "not vegetarian anymore" still says the
 * allergy, which nothing else may say.
 */
function episodeEdits(
  text: string,
  left: string[],
  beyond: ReadonlyMap<string, string>,
  dropped: string[],
  by: string[],
): SentenceEdit[] {
  const body = bareClaim(text);
  const clauses = clausesOf(body);
  const lead = text.slice(0, text.indexOf(body));
  const sentences = splitSentences(text.slice(0, lead.length + body.length));
  const edits = sentences.map((said, i): SentenceEdit | null => {
    const own = clauses.filter((c) => c.sentence === i);
    if (own.every((c) => left.includes(c.text))) return null;
    const holding = new Map<string, string>();
    for (const c of own) {
      if (left.includes(c.text)) continue;
      const claims = claimsOfClause(c.text);
      const held = claims.filter((p) => !dropped.some((d) => holdsClaim(p, d)));
      const ended = held.length < claims.length ? claims.filter((p) => !held.includes(p)) : claims;
      const more = beyond.get(c.text);
      if (!more && by.length && ended.some((p) => wordsBeyondChange(p, by).length)) return null;
      const now = [...(held.length < claims.length ? held : []), ...(more ? [more] : [])];
      if (now.length) holding.set(c.text, now.join(" and "));
    }
    return { said, now: sayOf(said, (c) => (left.includes(c) ? c : (holding.get(c) ?? null))) ?? "" };
  });
  // The day that led a sentence gone leads the next one that stays.
  const first = edits[0];
  if (lead && first?.now === "") {
    const next = sentences.findIndex((_, i) => i > 0 && edits[i]?.now !== "");
    if (next > 0) {
      const said = sentences[next]!;
      edits[next] = { said, now: `${lead}${leadLowered(edits[next]?.now ?? said)}` };
    }
  }
  return edits.filter((e): e is SentenceEdit => e !== null);
}

/**
 * A fact's text without some of its clauses (clausesOf), its day kept: the others whole, joined as
 * they were. Null when none is left.
 */
export function restOf(text: string, drop: (clause: string) => boolean): string | null {
  return sayOf(text, (c) => (drop(c) ? null : c));
}

/**
 * A fact's text with each clause (clausesOf) said as `say` has it, or left out (null), its day
 * kept. Null when none is left.
 */
function sayOf(text: string, say: (clause: string) => string | null): string | null {
  const body = bareClaim(text);
  const at = text.indexOf(body);
  const [lead, tail] = [text.slice(0, at), text.slice(at + body.length)];
  const kept = clausesOf(body).flatMap((c) => {
    const now = say(c.text);
    return now === null ? [] : [{ ...c, text: now }];
  });
  if (kept.length === 0) return null;
  const sentences: string[] = [];
  kept.forEach((c, k) => {
    const first = k === 0 || kept[k - 1]!.sentence !== c.sentence;
    const last = k === kept.length - 1 || kept[k + 1]!.sentence !== c.sentence;
    if (first) sentences.push(c.text.charAt(0).toUpperCase() + c.text.slice(1));
    else sentences[sentences.length - 1] += `${c.sep}${c.text}`;
    if (last) sentences[sentences.length - 1] += c.end;
  });
  const rest = sentences.join(" ");
  return `${lead ? `${lead}${leadLowered(rest)}` : rest}${tail}`;
}

/**
 * What an ended clause says beyond the change (phrasesBeyondChange of `by`, what ended it, in its
 * claims that ended: those holding a `dropped` one, else all), each phrase a claim of its own: one
 * with a subject and verb of its own as it is ("the user's back hurts", a leading "their" the
 * user's, as a fact's "their" is: "the user's husband prefers tea"; a leading "he", "she" or
 * "they" the subject of its sentence's first clause, `host`), one with neither with the
 * clause's subject and its "is" ("the user is allergic to shellfish" of "the user is vegan and
 * allergic to shellfish"). Null when there is none, or one is neither (a verb phrase, "with friends
 * and neighbours", "their two kids"): the sentence then stays whole in its episode.
 */
export function restBeyond(
  clause: string,
  by: readonly string[],
  dropped: readonly string[],
  host = clause,
): string | null {
  if (by.length === 0) return null;
  // Of its claims (claimsOfClause) the ended ones: those holding a dropped claim, else all.
  const all = claimsOfClause(clause);
  const ended = all.filter((p) => dropped.some((d) => holdsClaim(p, d)));
  const phrases = (ended.length ? ended : all).flatMap((p) => phrasesBeyondChange(p, by));
  const verb = FIRST_VERB.exec(clause);
  const subject = verb ? clause.slice(0, verb.index).trim() : null;
  const hostVerb = FIRST_VERB.exec(host);
  const hostSubject = hostVerb ? host.slice(0, hostVerb.index).trim() : subject;
  const claims = phrases.map((phrase) => {
    const words = phrase.split(/\s+/);
    const ownSubject = /^the user$/i.test(words.slice(0, 2).join(" ")) || words.slice(1, 5).some(verbForm);
    // A pronoun opening it is the clause's subject ("she loves horses" of "the user's daughter Zoë
    // is 9 years old and she loves horses"): alone it would name no one.
    if (PHRASE_SUBJECT.test(phrase) && ownSubject)
      return hostSubject && !/^(?:he|she|they)$/i.test(hostSubject) && /^(?:he|she|they)\s/i.test(phrase)
        ? `${hostSubject} ${phrase.replace(/^\S+\s+/, "")}`
        : phrase.replace(/^their\b/i, "the user's");
    if (!subject || !verb || verbForm(words[0]!)) return null;
    return /^(?:is|are|was|were)$/.test(verb[1]!) ? `${subject} ${verb[1]} ${phrase}` : null;
  });
  return claims.length && claims.every((c) => c !== null) ? claims.join(" and ") : null;
}
/** A clause's first verb after its subject: a form of "be", an auxiliary, or one in -s or -ed. */
const FIRST_VERB =
  /(?<=\S\s)(is|are|was|were|has|have|had|does|did|can|will|would|\p{Ll}+[^su\s']s|\p{Ll}+ed)\b/u;
/** A phrase's own subject's first word: a determiner, possessive or pronoun, or a name. */
const PHRASE_SUBJECT = /^(?:(?:the|this|that|his|her|their|its|our|he|she|they|it|we)\b|\p{Lu})/u;
/** A finite verb: a form of "be" or an auxiliary, or WordNet's verb in -s or -ed ("hurts", not "kids"). */
const verbForm = (word: string) =>
  /^(?:is|are|was|were|has|have|had|does|did|can|will|would|could|should|must)$/i.test(word) ||
  (/s$/.test(word) && [word.slice(0, -1), word.slice(0, -2), word.replace(/ies$/, "y")].some(isMostlyVerb)) ||
  (/ed$/.test(word) && [word.slice(0, -1), word.slice(0, -2)].some(isMostlyVerb));
