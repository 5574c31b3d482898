import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../src/auth/keys.js";
import { newestSuccessors } from "../src/db/ingest-lookups.js";
import { findMemory, insertMemoryRows } from "../src/db/memories.js";
import { newMemoryId } from "../src/ids.js";
import { inTimedChunks } from "../src/ingest/store.js";
import { withoutFact } from "../src/memories/delete.js";
import { toWire } from "../src/memories/model.js";
import { embedMissingVectors } from "../src/memories/vectors.js";
import { embeddingText } from "../src/memories/write.js";
import { seedGroup } from "./helpers/groups.js";
import { startTestService, type TestService, waitFor, withConfig } from "./helpers/harness.js";
import { danglingLinks } from "./helpers/links.js";

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.stop();
});

async function ingestOk(key: string, body: object) {
  const res = await svc.request("POST", "/v1/memories?wait=true", {
    key,
    body: { user_id: "u1", conv_id: "c1", ...body },
  });
  expect(res.status).toBe(200);
  expect(res.body.status).toBe("succeeded");
  return res.body.result;
}
const rowsOf = async (orgId: string, refs: Array<{ id: string }>) =>
  Promise.all(refs.map(async (r) => (await findMemory(svc.deps.db, orgId, r.id))!));
const user = (content: string, extra: object = {}) => ({ role: "user", content, ...extra });
/** The directives user u1's trigger recalls for a shell command about to run (retrieve mode). */
async function recalledBy(key: string, command: string): Promise<Array<{ id: string; text: string }>> {
  const res = await svc.request("POST", "/v1/memories/trigger", {
    key,
    body: { user_id: "u1", action: { tool: "Bash", args: { command } }, mode: "retrieve" },
  });
  expect(res.status).toBe(200);
  return res.body.data;
}
/** The texts of the directives user u1's trigger serves (compose: the gate judges) for a tool call and task. */
async function servedFor(key: string, action: object, task: string): Promise<string[]> {
  const res = await svc.request("POST", "/v1/memories/trigger", {
    key,
    body: { user_id: "u1", action, task },
  });
  expect(res.status).toBe(200);
  return res.body.data.map((d: { text: string }) => d.text);
}
const bash = (command: string) => ({ tool: "Bash", args: { command } });

describe("group tagging", () => {
  it("tags shareable memories with catch-all and matching prompted groups; personal ones never", async () => {
    const { key, orgId } = await svc.newOrg();
    const all = await seedGroup(svc.deps, orgId, { prompt: null });
    const billing = await seedGroup(svc.deps, orgId, { prompt: "the billing service" });
    const marketing = await seedGroup(svc.deps, orgId, { prompt: "marketing campaigns" });
    const archived = await seedGroup(svc.deps, orgId, { prompt: null, status: "archived" });
    const unknown = `grp_${"f".repeat(32)}`;
    const result = await ingestOk(key, {
      messages: [
        user("The billing service deploys with terraform every Friday afternoon."),
        user("My sister was diagnosed with asthma last spring."),
      ],
      group_ids: [all, billing, marketing, archived, unknown],
    });
    expect(result.ignored_group_ids.sort()).toEqual([archived, unknown].sort());
    const rows = await rowsOf(orgId, result.memories_created);
    const deploy = rows.find((r) => r.type === "fact" && r.text.includes("billing service"))!;
    expect([...deploy.group_ids].sort()).toEqual([all, billing].sort());
    const sister = rows.find((r) => r.type === "fact" && r.text.includes("asthma"))!;
    expect(sister.group_ids).toEqual([]);
    expect(rows.every((r) => !r.group_ids.includes(archived) && !r.group_ids.includes(marketing))).toBe(true);
  });

  it("shares no episode that quotes a personal fact, though its other sentences are shareable", async () => {
    const { key, orgId } = await svc.newOrg();
    const all = await seedGroup(svc.deps, orgId, { prompt: null });
    const result = await ingestOk(key, {
      messages: [
        user("I am secretly interviewing at other companies because I cannot stand my manager Greg."),
        user("Our team deploys the orion service every Friday."),
      ],
      group_ids: [all],
    });
    const rows = await rowsOf(orgId, result.memories_created);
    const secret = rows.find((r) => r.type === "fact" && r.text.includes("interviewing"))!;
    expect(secret.group_ids).toEqual([]);
    const episode = rows.find((r) => r.type === "episode")!;
    expect(episode.text).toContain("interviewing");
    expect(episode.group_ids).toEqual([]);
    // Another user of the organisation reading the group finds neither.
    const other = await createApiKey(svc.deps.db, { orgId, userId: "u2" });
    const search = await svc.request("POST", "/v1/memories/search", {
      key: other.key,
      body: { query: "Greg manager interviewing", group_ids: [all], mode: "retrieve" },
    });
    expect(search.status).toBe(200);
    expect(search.body.data.filter((m: any) => /interviewing/.test(m.text))).toEqual([]);
  });

  it("shares an episode with the groups every fact it quotes is shared with", async () => {
    const { key, orgId } = await svc.newOrg();
    const all = await seedGroup(svc.deps, orgId, { prompt: null });
    const billing = await seedGroup(svc.deps, orgId, { prompt: "the billing service" });
    const result = await ingestOk(key, {
      messages: [
        user("The billing service deploys with terraform every Friday afternoon."),
        user("Our team reviews the on-call rota on Mondays."),
      ],
      group_ids: [all, billing],
    });
    const rows = await rowsOf(orgId, result.memories_created);
    const facts = rows.filter((r) => r.type === "fact");
    expect(facts).toHaveLength(2);
    expect(facts.every((f) => f.group_ids.includes(all))).toBe(true);
    const episode = rows.find((r) => r.type === "episode")!;
    expect(episode.group_ids).toEqual([all]);
    // Another user reading the group finds the episode.
    const other = await createApiKey(svc.deps.db, { orgId, userId: "u2" });
    const search = await svc.request("POST", "/v1/memories/search", {
      key: other.key,
      body: { query: "on-call rota", group_ids: [all], mode: "retrieve" },
    });
    expect(search.status).toBe(200);
    expect(search.body.data.map((m: any) => m.id)).toContain(episode.id);
    // Its owner takes one of the facts out of the group: the episode quoting it leaves it too.
    const rota = facts.find((f) => f.text.includes("on-call"))!;
    const patched = await svc.request("PATCH", `/v1/memories/${rota.id}`, {
      key,
      body: { remove_group_ids: [all] },
    });
    expect(patched.status).toBe(200);
    expect((await findMemory(svc.deps.db, orgId, episode.id))!.group_ids).toEqual([]);
    const again = await svc.request("POST", "/v1/memories/search", {
      key: other.key,
      body: { query: "on-call rota", group_ids: [all], mode: "retrieve" },
    });
    expect(again.body.data.map((m: any) => m.id)).not.toContain(episode.id);
  });

  it("a fact first said in private and restated in a shared conversation gains the groups", async () => {
    const { key, orgId } = await svc.newOrg();
    const all = await seedGroup(svc.deps, orgId, { prompt: null });
    const billing = await seedGroup(svc.deps, orgId, { prompt: "the billing service" });
    const said = "The staging cluster for the billing service runs Kubernetes 1.29 on three nodes.";
    const first = await ingestOk(key, { conv_id: "private", messages: [user(said)] });
    const fact = first.memories_created.find((m: any) => m.type === "fact" && m.text.includes("Kubernetes"));
    expect((await findMemory(svc.deps.db, orgId, fact.id))!.group_ids).toEqual([]);
    const second = await ingestOk(key, {
      conv_id: "shared",
      messages: [user(said)],
      group_ids: [all, billing],
    });
    expect(second.memories_updated.map((m: any) => m.id)).toContain(fact.id);
    expect([...(await findMemory(svc.deps.db, orgId, fact.id))!.group_ids].sort()).toEqual(
      [all, billing].sort(),
    );
    const listed = await svc.request("GET", `/v1/memories?group_id=${billing}&type=fact`, { key });
    expect(listed.body.data.map((m: any) => m.id)).toContain(fact.id);
    // A personal one restated in a shared conversation stays untagged.
    const pin = "My doctor said my blood pressure is too high.";
    const p1 = await ingestOk(key, { conv_id: "p1", messages: [user(pin)] });
    const personal = p1.memories_created.find((m: any) => m.type === "fact");
    await ingestOk(key, { conv_id: "p2", messages: [user(pin)], group_ids: [all] });
    expect((await findMemory(svc.deps.db, orgId, personal.id))!.group_ids).toEqual([]);
  });

  it("a restated fact takes the newer ingest's metadata merged over its own", async () => {
    const { key, orgId } = await svc.newOrg();
    const said = "The staging cluster for the billing service runs Kubernetes 1.29 on three nodes.";
    const first = await ingestOk(key, {
      conv_id: "a",
      messages: [user(said)],
      metadata: { source: "slack", team: "infra" },
    });
    const fact = first.memories_created.find((m: any) => m.type === "fact" && m.text.includes("Kubernetes"));
    const second = await ingestOk(key, {
      conv_id: "b",
      messages: [user(said)],
      metadata: { source: "email", ticket: 42, tag2: "reserved, dropped" },
    });
    expect(second.memories_updated.map((m: any) => m.id)).toContain(fact.id);
    // Newer keys over the old; the old ones the newer ingest does not name are kept.
    expect((await findMemory(svc.deps.db, orgId, fact.id))!.metadata).toEqual({
      source: "email",
      team: "infra",
      ticket: 42,
    });
    // An ingest without metadata leaves it as it is.
    await ingestOk(key, { conv_id: "c", messages: [user(said)] });
    expect((await findMemory(svc.deps.db, orgId, fact.id))!.metadata).toEqual({
      source: "email",
      team: "infra",
      ticket: 42,
    });
    // A merge past the bounds of one memory's metadata (64 keys) keeps the row's own.
    const many = Object.fromEntries(Array.from({ length: 62 }, (_, i) => [`k${i}`, i]));
    await ingestOk(key, { conv_id: "d", messages: [user(said)], metadata: many });
    expect((await findMemory(svc.deps.db, orgId, fact.id))!.metadata).toEqual({
      source: "email",
      team: "infra",
      ticket: 42,
    });
  });

  it("tags nothing when no valid group was given", async () => {
    const { key, orgId } = await svc.newOrg();
    const archived = await seedGroup(svc.deps, orgId, { status: "archived" });
    const result = await ingestOk(key, {
      messages: [user("The deploy pipeline runs the integration tests first.")],
      group_ids: [archived],
    });
    expect(result.ignored_group_ids).toEqual([archived]);
    expect(result.stage_timings.classify).toBeUndefined();
    const rows = await rowsOf(orgId, result.memories_created);
    expect(rows.every((r) => r.group_ids.length === 0)).toBe(true);
  });
});

/**
 * Changes that a word of addition or a place past a modifier once hid, as [before, after, the new
 * fact]: run across two ingests and within one. "Too", "also", "on weekends" qualify another clause
 * than the value's, "now" says the value is a change, a move is never a home beside another; a place
 * after "of", past a modifier or set beside a noun is a place.
 */
const HIDDEN_CHANGES: Array<[string, string, string | RegExp]> = [
  [
    "My favorite food is sushi.",
    "My favorite food is ramen now, I got tired of sushi too.",
    "The user's favorite food is ramen now, the user got tired of sushi too.",
  ],
  [
    "I'm vegetarian.",
    "I'm vegan now, and on weekends I go hiking.",
    "The user is vegan now, and on weekends the user goes hiking.",
  ],
  [
    "I live in Boston.",
    "I also moved to Denver last month, so new city, new job.",
    /^The user also moved to Denver last month \(.+\), so new city, new job\.$/,
  ],
  [
    "I work at Acme as an engineer.",
    "I also changed jobs last month, I work at Google now.",
    /^The user also changed jobs last month \(.+\), the user works at Google now\.$/,
  ],
  ["I work at Acme.", "I also work at Google now.", "The user also works at Google now."],
  [
    "I live in Boston.",
    "I moved to the suburbs of Chicago in February.",
    "The user moved to the suburbs of Chicago in February.",
  ],
  ["I live in Boston.", "I live in downtown Chicago now.", "The user lives in downtown Chicago now."],
  [
    "I live in Boston.",
    "I moved to a small town outside Boise.",
    "The user moved to a small town outside Boise.",
  ],
  [
    "I live in Denver.",
    "I moved back to my hometown, Tulsa, in January.",
    "The user moved back to their hometown, Tulsa, in January.",
  ],
];

describe("supersede and dedup", () => {
  const activeFacts = async (key: string, userId: string) => {
    const res = await svc.request("GET", `/v1/memories?user_id=${userId}&type=fact&limit=100`, { key });
    expect(res.status).toBe(200);
    return res.body.data.filter((m: any) => m.details.status === "active").map((m: any) => m.text);
  };

  it.each([
    ["I live in Paris.", "I moved to Berlin.", "The user moved to Berlin."],
    ["I live in Paris.", "I moved from Paris to Berlin.", "The user moved from Paris to Berlin."],
    // A home in a named place is a move to that place; a city written in lower case is one too.
    ["I live in Denver.", "I moved to a new house in Tacoma.", "The user moved to a new house in Tacoma."],
    ["i live in denver.", "i moved to austin.", "The user moved to austin."],
    ["I work at Acme as an engineer.", "I work at Globex now.", "The user works at Globex now."],
    ["I work at Acme.", "I no longer work at Acme.", "The user no longer works at Acme."],
    [
      "My favorite color is green.",
      "My favourite colour is purple.",
      "The user's favourite colour is purple.",
    ],
    // Beyond the fixed attributes: what the user stopped doing, liking, using or having.
    ["I play tennis every weekend.", "I stopped playing tennis.", "The user stopped playing tennis."],
    ["I love sushi.", "I don't like sushi anymore.", "The user doesn't like sushi anymore."],
    ["I use Vim as my editor.", "I switched from Vim to VS Code.", "The user switched from Vim to VS Code."],
    [
      "I drive a Honda Civic.",
      "I sold my Civic and now drive a Tesla.",
      "The user sold their Civic and now drives a Tesla.",
    ],
    ["I smoke a pack a day.", "I quit smoking.", "The user quit smoking."],
    // A correction "X, not Y", and an age said now.
    ["I'm 29.", "Correction: I am 30, not 29.", "The user is 30 years old, not 29."],
    ["I'm 29.", "I'm 30, not 29.", "The user is 30 years old, not 29."],
    ["I'm 29.", "I am 30 now.", "The user is 30 years old now."],
    // Someone's age: named, or someone of the user's; "the user's daughter Lily" is "Lily".
    ["My daughter Lily is 6.", "Lily turned 7 today!", /^Lily turned 7 years old today \(.+\)!$/],
    [
      "My daughter Lily is 6.",
      "My daughter Lily turned 7 today!",
      /^The user's daughter Lily turned 7 years old today \(.+\)!$/,
    ],
    ["My son is 3.", "My son just turned 4.", "The user's son just turned 4 years old."],
    // An age turned on any day said, or said now with "'s"; an age said by a name alone.
    ["My son Noah is 9.", "Noah turned 10 last Sunday.", /^Noah turned 10 years old last Sunday \(.+\)\.$/],
    ["My son Noah is 9.", "Noah's 10 now.", "Noah is 10 years old now."],
    ["Noah is 9.", "Noah just turned 10.", "Noah just turned 10 years old."],
    ["I live in Leeds.", "Sorry, I live in York, not Leeds.", "The user lives in York, not Leeds."],
    // A job that ended, however it ended.
    [
      "I work at Amazon as a data engineer.",
      "I got laid off from Amazon.",
      "The user got laid off from Amazon.",
    ],
    ["I work at Amazon as a data engineer.", "I was let go from Amazon.", "The user was let go from Amazon."],
    ["I work at Amazon.", "I got fired from Amazon.", "The user got fired from Amazon."],
    ["I work at Amazon.", "I retired last year.", /^The user retired last year \(\d{4}\)\.$/],
    ["I work as a nurse.", "I'm retired now.", "The user is retired now."],
    // A time leading a move; when between a favourite's kind and its value; a favourite that used to be.
    [
      "I live in Seattle.",
      "Last month we moved to Austin, Texas.",
      /^Last month \(.+\) the user and others moved to Austin, Texas\.$/,
    ],
    [
      "My favorite book is Dune.",
      "My favorite book these days is Project Hail Mary.",
      "The user's favorite book these days is Project Hail Mary.",
    ],
    [
      "My favorite color is blue.",
      "Blue used to be my favorite color but now it's green.",
      "Blue used to be the user's favorite color but now it's green.",
    ],
    // A tool given up for another; a contact detail changed; a diet ended by what is eaten again.
    ["I use Vim for everything.", "I ditched Vim for Neovim.", "The user ditched Vim for Neovim."],
    ["I use Vim for everything.", "I moved from Vim to Emacs.", "The user moved from Vim to Emacs."],
    // Places WordNet writes without accents ("Bogota", "Dusseldorf"), and a move between names it
    // does not know as places when the place left is the home held.
    [
      "I live in Bogotá.",
      "I moved from Bogotá to Medellín last year.",
      /^The user moved from Bogotá to Medellín/,
    ],
    [
      "I live in Düsseldorf.",
      "We moved from Düsseldorf to Köln.",
      "The user and others moved from Düsseldorf to Köln.",
    ],
    ["I live in Ottawa.", "I moved from Ottawa to Kyiv.", "The user moved from Ottawa to Kyiv."],
    ["I live in Kyiv.", "I moved from Kyiv to Lviv.", "The user moved from Kyiv to Lviv."],
    // A claim of one thing, whatever else its sentence says after it.
    [
      "I play tennis every weekend with friends and neighbours.",
      "I stopped playing tennis.",
      "The user stopped playing tennis.",
    ],
    // "We" is the user among others, on either side; a phrase of where before the subject is none.
    [
      "We use jest for tests.",
      "We moved from jest to vitest.",
      "The user and others moved from jest to vitest.",
    ],
    [
      "We play tennis every weekend.",
      "We stopped playing tennis.",
      "The user and others stopped playing tennis.",
    ],
    [
      "I drive a Honda Civic.",
      "We sold the Civic and bought a Subaru Outback.",
      "The user and others sold the Civic and bought a Subaru Outback.",
    ],
    [
      "In this repo I use jest for tests.",
      "I moved from jest to vitest.",
      "The user moved from jest to vitest.",
    ],
    // A change from one plan to another ends being on the first, whatever the verb of change.
    [
      "I'm on the Pro plan.",
      "We upgraded from the Pro plan to the Enterprise plan.",
      "The user and others upgraded from the Pro plan to the Enterprise plan.",
    ],
    [
      "We are on the Pro plan.",
      "I downgraded from the Pro plan to the Basic plan.",
      "The user downgraded from the Pro plan to the Basic plan.",
    ],
    [
      "We are on the Pro plan.",
      "We moved from the Pro plan to the Enterprise plan.",
      "The user and others moved from the Pro plan to the Enterprise plan.",
    ],
    // What took the thing's place, said after it.
    [
      "I drink coffee every morning.",
      "I no longer drink coffee, only tea now.",
      "The user no longer drinks coffee, only tea now.",
    ],
    [
      "I drink coffee every morning.",
      "I don't drink coffee anymore, only tea now.",
      "The user doesn't drink coffee anymore, only tea now.",
    ],
    ["My phone number is 555-0142.", "My new number is 555-0177.", "The user's new number is 555-0177."],
    [
      "My email is dana@example.com.",
      "My email changed to dana.r@newmail.com.",
      "The user's email changed to dana.r@newmail.com.",
    ],
    ["I'm vegetarian.", "I started eating meat again.", "The user started eating meat again."],
    [
      "I'm vegan.",
      "I started eating fish again, so I'm pescatarian now.",
      "The user started eating fish again, so the user is pescatarian now.",
    ],
    // Typed with "smart punctuation" ("’"), as a phone writes it.
    ["I work at Acme.", "I don\u2019t work at Acme anymore.", "The user doesn't work at Acme anymore."],
    ["I\u2019m vegetarian.", "I\u2019m not vegetarian anymore.", "The user is not vegetarian anymore."],
    ["I\u2019m 34.", "I just turned 35.", "The user just turned 35 years old."],
    // A change of plan: what is chosen instead of the plan held.
    [
      "We are going to Paris in May.",
      "Change of plan: we are going to Rome instead of Paris.",
      "The user and others are going to Rome instead of Paris.",
    ],
    ...HIDDEN_CHANGES,
  ])("a change the nearest neighbours miss still supersedes: %s -> %s", async (before, after, now) => {
    const { key } = await svc.newOrg();
    const first = await ingestOk(key, { user_id: "u5", messages: [user(before)] });
    const old = first.memories_created.find((m: any) => m.type === "fact");
    const second = await ingestOk(key, { user_id: "u5", messages: [user(after)] });
    const fresh = second.memories_created.find(
      (m: any) => m.type === "fact" && (typeof now === "string" ? m.text === now : now.test(m.text)),
    );
    expect(fresh, JSON.stringify(second.memories_created)).toBeDefined();
    expect(second.memories_superseded_by).toEqual({ [old.id]: fresh.id });
    expect(await activeFacts(key, "u5")).toEqual([fresh.text]);
  });

  it.each([
    ["I live in Paris.", "In 2015 I moved to Berlin for two years, then came back to Paris."],
    ["My favorite color is green.", "When I was a kid my favorite color was blue."],
    ["My favorite color is green.", "My favorite color is not blue, it is still green."],
    ["I work at Acme as an engineer.", "My wife quit her job at Acme last year."],
    ["I work at Acme as an engineer.", "I almost quit Acme last week but decided to stay."],
    ["I work at Acme as an engineer.", "My dad retired from the army in May."],
    ["I work at Acme as an engineer.", "I retired my old laptop."],
    ["I live in Denver.", "My parents moved to Florida when they retired."],
    ["I live in Denver.", "If I moved to Berlin I would miss the mountains."],
    ["I live in Seattle.", "I moved from Vim to Emacs."],
    ["I live in Seattle.", "I moved from Ottawa to Kyiv."],
    // An ending of one of several things a claim names leaves the claim (and the others) said.
    ["We have a dog named Max and a cat named Luna. We live in Portland.", "We don't have Max anymore."],
    ["We have a dog named Max and a cat named Luna.", "We don't have Max anymore."],
    ["I play tennis and golf. My wife is a dentist.", "I stopped playing golf."],
    ["I drink coffee and tea every morning.", "I no longer drink tea."],
    ["I love Paris.", "I moved from Paris to Berlin."],
    ["I'm vegetarian.", "My daughter started eating meat again."],
    ["I'm vegetarian.", "I'm not vegan, just vegetarian."],
    ["I use VS Code.", "My coworker switched from VS Code to Zed."],
    ["I play tennis every weekend.", "We stopped playing chess."],
    ["My sister plays tennis every weekend.", "We stopped playing tennis."],
    ["We played tennis on Sunday.", "I stopped playing tennis."],
    ["I drink tea every morning.", "I no longer drink coffee, only tea now."],
    // A choice of one thing over another, negated or limited to a scope, leaves the plan held.
    ["We are going to Paris in May.", "We are not going to Rome instead of Paris."],
    ["I drink coffee every morning.", "On Sundays I drink tea instead of coffee."],
    // A fact of several sentences, ended in none of them: another thing, another's change.
    [
      "In this repo we use jest for tests. Always run `npm test` before committing.",
      "We moved from npm to pnpm.",
    ],
    [
      "In this repo we use jest for tests. Always run `npm test` before committing.",
      "My coworker switched from jest to vitest.",
    ],
    ["I play tennis every weekend. I have two kids.", "We stopped playing chess."],
    ["I have a phone with a cracked screen.", "I ditched the meeting for a walk."],
    ["My phone number is 555-0142.", "My sister's new number is 555-0199."],
    // A value said beside the one held ("also", "too", "on weekends", "on the side", "part-time",
    // a second job) adds one; a qualified diet keeps the diet.
    ["I work at Acme as an engineer.", "I also work at a bakery on weekends."],
    ["I work as a nurse.", "I work as a volunteer firefighter on weekends."],
    ["I work at Acme.", "I work at Globex too."],
    ["I work at Acme.", "I work at Globex as well."],
    ["I work at Acme.", "I work at a cafe on the side."],
    ["I work as a nurse.", "I work part-time as a barista."],
    ["I work at Acme.", "I have a second job at Globex."],
    ["I'm vegetarian.", "I'm vegan on weekdays."],
    ["I live in Denver.", "I also live in Boston."],
    // Where someone lives is a place: not a home, a shift, a drink, a month.
    ["I live in Denver.", "I live in a small apartment near the park."],
    ["I live in Denver.", "I moved to a bigger apartment downtown."],
    ["I live in Denver.", "I moved to the night shift last week."],
    ["I live in Denver.", "Last month I moved to the night shift."],
    ["I live in Denver.", "I moved to decaf in January."],
    // A name set beside a noun that is no place, past a modifier that places nothing; a move
    // within the place held; "too" after a comma still adds.
    ["I live in Denver.", "I moved to a new team, Payments, last week."],
    ["I live in Denver.", "I moved to the new Google office."],
    ["I live in Denver.", "I moved back to my old desk, the one by the window."],
    ["I work at Acme.", "I work at Globex, too."],
  ])(
    "another's change, a past or a supposed one, another thing, a value beside the one held supersede nothing, across two ingests and within one: %s -> %s",
    async (before, after) => {
      const { key, orgId } = await svc.newOrg();
      const first = await ingestOk(key, { user_id: "u8", messages: [user(before)] });
      const [old] = first.memories_created.filter((m: any) => m.type === "fact");
      const second = await ingestOk(key, { user_id: "u8", conv_id: "c2", messages: [user(after)] });
      expect(second.memories_superseded_by).toEqual({});
      expect(await activeFacts(key, "u8")).toContain(old.text);
      // The same two messages in one conversation: the first claim stays active and in the
      // episode's text.
      const one = await ingestOk(key, { user_id: "u10", messages: [user(before), user(after)] });
      expect(one.memories_superseded_by).toEqual({});
      expect(await activeFacts(key, "u10")).toContain(old.text);
      const episode = one.memories_created.find((m: any) => m.type === "episode");
      expect((await findMemory(svc.deps.db, orgId, episode.id))!.text).toContain(old.text.replace(/\.$/, ""));
    },
  );

  it.each([
    [
      ["My favorite color is blue.", "Hmm, actually I changed my mind, my favorite color is orange."],
      "The user's favorite color is orange.",
    ],
    [
      ["I live in Leeds.", "Wait no, sorry, I live in York, Leeds is where I work."],
      "The user lives in York, Leeds is where the user works.",
    ],
    [["I live in Paris.", "I moved to Berlin."], "The user moved to Berlin."],
    [["I live in Denver.", "I moved to a new house in Tacoma."], "The user moved to a new house in Tacoma."],
    [["I'm 29.", "Correction: I am 30, not 29."], "The user is 30 years old, not 29."],
    [
      ["I use Vim for everything.", "I finally ditched Vim, I'm all in on Neovim now."],
      "The user finally ditched Vim, the user is all in on Neovim now.",
    ],
    ...HIDDEN_CHANGES.map(([before, after, now]): [string[], string | RegExp] => [[before, after], now]),
  ])("a change said later in the same ingest supersedes the earlier fact: %j", async (said, now) => {
    const { key, orgId } = await svc.newOrg();
    const result = await ingestOk(key, { user_id: "u9", messages: said.map((m) => user(m)) });
    const facts = result.memories_created.filter((m: any) => m.type === "fact");
    const fresh = facts.find((m: any) => (typeof now === "string" ? m.text === now : now.test(m.text)));
    const old = facts[0];
    expect(fresh, JSON.stringify(facts)).toBeDefined();
    expect(result.memories_superseded_by).toEqual({ [old.id]: fresh.id });
    // Both rows kept, linked as a change across ingests is; the old one reported created only.
    expect(result.memories_updated.map((m: any) => m.id)).not.toContain(old.id);
    expect((await findMemory(svc.deps.db, orgId, old.id))!.status).toBe("superseded");
    expect(toWire((await findMemory(svc.deps.db, orgId, fresh.id))!).details).toMatchObject({
      status: "active",
      supersedes: old.id,
    });
    expect(await activeFacts(key, "u9")).toEqual([fresh.text]);
    // The episode lists both (history) and no longer says the old claim.
    const episode = result.memories_created.find((m: any) => m.type === "episode");
    const ep = (await findMemory(svc.deps.db, orgId, episode.id))!;
    expect(ep.details.fact_ids).toEqual([old.id, fresh.id]);
    expect(ep.text).not.toContain(said[0]!.replace(/\.$/, "").slice(-8));
  });

  it("within one ingest: a change back, a restatement, two values of one turn, a clause's sentence", async () => {
    const { key, orgId } = await svc.newOrg();
    const active = async (userId: string) => (await activeFacts(key, userId)).sort();
    const back = await ingestOk(key, {
      user_id: "w1",
      messages: [
        "My favorite color is blue.",
        "My favorite color is red.",
        "My favorite color is blue again.",
      ].map((m) => user(m)),
    });
    const [blue, red, again] = back.memories_created.filter((m: any) => m.type === "fact");
    expect(back.memories_superseded_by).toEqual({ [blue.id]: red.id, [red.id]: again.id });
    expect(await active("w1")).toEqual(["The user's favorite color is blue again."]);
    // Said again in other words: one fact, told by both turns.
    const same = await ingestOk(key, {
      user_id: "w2",
      messages: [
        user("I live in Denver.", { dia_id: "D1:1" }),
        user("I still live in Denver.", { dia_id: "D1:2" }),
      ],
    });
    const facts = same.memories_created.filter((m: any) => m.type === "fact");
    expect(facts.map((m: any) => m.text)).toEqual(["The user lives in Denver."]);
    expect(same.memories_superseded_by).toEqual({});
    const row = (await findMemory(svc.deps.db, orgId, facts[0].id))!;
    expect(row.details.source_event_ids).toEqual(["D1:1", "D1:2"]);
    const episode = same.memories_created.find((m: any) => m.type === "episode");
    expect((await findMemory(svc.deps.db, orgId, episode.id))!.details.fact_ids).toEqual([facts[0].id]);
    // One turn naming two employers changes neither.
    const two = await ingestOk(key, {
      user_id: "w3",
      messages: [user("I work at Acme and I work at Globex on weekends.")],
    });
    expect(two.memories_superseded_by).toEqual({});
    // A later move supersedes the clause and the sentence it was cut from, not its other clause.
    const moved = await ingestOk(key, {
      user_id: "w4",
      messages: [user("I live in Oslo and I work as a carpenter."), user("I moved to Tromso.")],
    });
    const tromso = moved.memories_created.find((m: any) => m.text === "The user moved to Tromso.").id;
    expect(Object.values(moved.memories_superseded_by)).toEqual([tromso, tromso]);
    expect(await active("w4")).toEqual(["The user moved to Tromso.", "The user works as a carpenter."]);
  });

  it("a claim said again past an opener, an aside, 'still' or 'as always', or as a request to remember it, is touched, not stored", async () => {
    const { key } = await svc.newOrg();
    const said = [
      ["I'm allergic to penicillin.", "I do yoga every Tuesday evening."],
      ["Just a reminder, I'm allergic to penicillin.", "I still do yoga every Tuesday evening."],
      ["I am allergic to penicillin.", "Yoga every Tuesday evening, as always."],
      ["For the record, I'm allergic to penicillin.", "I do yoga on Tuesday evenings."],
      ["I'm allergic to penicillin, so no amoxicillin please.", "I do yoga every Tuesday evening."],
      ["Remember I'm allergic to penicillin.", "I go to yoga every Tuesday evening."],
      ["Penicillin allergy here, just so you know.", "As always, I do yoga every Tuesday evening."],
      ["As I said, I'm allergic to penicillin.", "I do yoga every Tuesday evening!"],
    ];
    for (const [i, turns] of said.entries())
      await ingestOk(key, { user_id: "r2", conv_id: `c${i}`, messages: turns.map((t) => user(t)) });
    const active = (await activeFacts(key, "r2")).sort();
    // What says more ("so no amoxicillin", "goes to yoga") is a fact of its own; nothing else.
    expect(active).toEqual([
      "The user does yoga every Tuesday evening.",
      "The user goes to yoga every Tuesday evening.",
      "The user is allergic to penicillin, so no amoxicillin please.",
      "The user is allergic to penicillin.",
    ]);
  });

  it("a restatement that adds detail replaces the fact it restates; one that adds none is a duplicate", async () => {
    const { key, orgId } = await svc.newOrg();
    const first = await ingestOk(key, { messages: [user("I live in Denver.")] });
    const plain = first.memories_created.find((m: any) => m.type === "fact");
    const richer = await ingestOk(key, {
      conv_id: "c2",
      messages: [user("I live in Denver with my two kids and a parrot named Kiwi.")],
    });
    const rich = richer.memories_created.find((m: any) => m.type === "fact");
    expect(rich.text).toBe("The user lives in Denver with the user's two kids and a parrot named Kiwi.");
    expect(richer.memories_superseded_by).toEqual({ [plain.id]: rich.id });
    expect((await findMemory(svc.deps.db, orgId, plain.id))!.status).toBe("superseded");
    expect(await activeFacts(key, "u1")).toEqual([rich.text]);
    const search = await svc.request("POST", "/v1/memories/search", {
      key,
      body: { query: "What is my parrot called?", user_id: "u1", mode: "retrieve", include: ["fact"] },
    });
    expect(search.status).toBe(200);
    expect(search.body.data.map((m: any) => m.id)).toContain(rich.id);
    // The plain statement again, or a restatement adding nothing, touches the richer fact.
    for (const [i, said] of ["I live in Denver.", "I still live in Denver now."].entries()) {
      const again = await ingestOk(key, { conv_id: `c${3 + i}`, messages: [user(said)] });
      expect(
        again.memories_created.filter((m: any) => m.type === "fact"),
        said,
      ).toEqual([]);
      expect(again.memories_superseded_by).toEqual({});
      expect(again.memories_updated.map((m: any) => m.id)).toContain(rich.id);
    }
    // Each saying something the other does not: both stay.
    const other = await ingestOk(key, {
      conv_id: "c5",
      messages: [user("I live in Denver near Wash Park.")],
    });
    expect(other.memories_superseded_by).toEqual({});
    expect(await activeFacts(key, "u1")).toHaveLength(2);
    // A move ends both statements of the home, not the first only.
    const moved = await ingestOk(key, { conv_id: "c6", messages: [user("We moved to Austin.")] });
    const austin = moved.memories_created.find((m: any) => m.type === "fact");
    const near = other.memories_created.find((m: any) => m.type === "fact");
    expect(moved.memories_superseded_by).toEqual({ [rich.id]: austin.id, [near.id]: austin.id });
    // Who the home was shared with is still true after the move: kept as a fact of its own.
    expect(await activeFacts(key, "u1")).toEqual([
      "The user and others moved to Austin.",
      "The user lives with the user's two kids and a parrot named Kiwi.",
    ]);
  });

  it("a move from a thing that is no place is no home: the next move ends the home held", async () => {
    const { key } = await svc.newOrg();
    const paris = (await ingestOk(key, { messages: [user("I live in Paris.")] })).memories_created.find(
      (m: any) => m.type === "fact",
    );
    for (const [i, said] of [
      "I moved from Vim to Emacs.",
      "We moved from Fly to Render for hosting.",
    ].entries()) {
      const tool = await ingestOk(key, { conv_id: `t${i}`, messages: [user(said)] });
      expect(tool.memories_superseded_by, said).toEqual({});
    }
    const berlin = await ingestOk(key, { conv_id: "c3", messages: [user("I moved to Berlin.")] });
    const fresh = berlin.memories_created.find((m: any) => m.type === "fact");
    expect(berlin.memories_superseded_by).toEqual({ [paris.id]: fresh.id });
    expect((await activeFacts(key, "u1")).sort()).toEqual([
      "The user and others moved from Fly to Render for hosting.",
      "The user moved from Vim to Emacs.",
      "The user moved to Berlin.",
    ]);
  });

  it("an age turned is found by how old the user is", async () => {
    const { key } = await svc.newOrg();
    const others = [
      "I have a golden retriever called Mango.",
      "My sister lives in Lisbon with her husband.",
      "I work as a pharmacist in Phoenix.",
      "My favorite food is ramen from the place downtown.",
      "I go climbing at the gym every Tuesday.",
      "My old car was a 2009 Honda Civic.",
      "I am learning Portuguese for a trip next year.",
      "My grandmother turned ninety last spring.",
      "I read about twenty books a year, mostly science fiction.",
      "My daughter is seven and loves drawing horses.",
    ];
    await ingestOk(key, {
      messages: ["I'm 29.", ...others].map((m) => user(m, { date: "2024-03-15T10:00:00Z" })),
    });
    const turned = await ingestOk(key, {
      conv_id: "c2",
      messages: [user("I turned 30 on Monday!", { date: "2024-04-10T10:00:00Z" })],
    });
    expect(Object.keys(turned.memories_superseded_by)).toHaveLength(1);
    const fact = turned.memories_created.find((m: any) => m.type === "fact");
    const search = await svc.request("POST", "/v1/memories/search", {
      key,
      body: { query: "How old am I?", user_id: "u1", mode: "retrieve", limit: 5 },
    });
    expect(search.status).toBe(200);
    expect(fact.text).toBe("On 10 April 2024, the user turned 30 years old on Monday (8 April 2024)!");
    expect(search.body.data.map((m: any) => m.id)).toContain(fact.id);
  });

  it("a fact corrected by PATCH in the first person is superseded by a later change", async () => {
    // An agent's correction reads "My favourite colour is green", not "The user's ...": it stayed
    // active beside the later purple, and search served both.
    const { key } = await svc.newOrg();
    const first = await ingestOk(key, { user_id: "u7", messages: [user("My favourite colour is blue.")] });
    const blue = first.memories_created.find((m: any) => m.type === "fact");
    const patched = await svc.request("PATCH", `/v1/memories/${blue.id}/`, {
      key,
      body: { text: "My favourite colour is green." },
    });
    expect(patched.status).toBe(200);
    const third = await ingestOk(key, {
      user_id: "u7",
      messages: [user("My favourite colour is purple now.")],
    });
    const purple = third.memories_created.find((m: any) => m.type === "fact");
    expect(third.memories_superseded_by).toEqual({ [patched.body.id]: purple.id });
    expect(await activeFacts(key, "u7")).toEqual(["The user's favourite colour is purple now."]);
  });

  it("a restated value after a move is the same fact, not a change of the one before", async () => {
    const { key } = await svc.newOrg();
    await ingestOk(key, { user_id: "u6", messages: [user("I live in Paris.")] });
    // "last month" resolves to a month in brackets: when, not where
    await ingestOk(key, { user_id: "u6", messages: [user("I moved to Berlin last month.")] });
    const third = await ingestOk(key, { user_id: "u6", messages: [user("I live in Berlin now.")] });
    expect(third.memories_superseded_by).toEqual({});
    const active = await activeFacts(key, "u6");
    expect(active).toHaveLength(1);
    expect(active[0]).toMatch(/^The user moved to Berlin last month \(\w+ \d{4}\)\.$/);
  });

  it.each([
    ["I live in Austin now and I'll set up a little tea corner.", 2],
    ["I live in Austin now.", 1],
  ])("a restatement of a home that lacks the day of the move keeps the dated move: %s", async (said, n) => {
    const { key } = await svc.newOrg();
    const first = await ingestOk(key, {
      user_id: "d1",
      messages: [user("I moved to Austin on Saturday!", { date: "2025-06-16T10:00:00Z" })],
    });
    const moved = first.memories_created.find((m: any) => m.type === "fact");
    expect(moved.text).toBe("On 16 June 2025, the user moved to Austin on Saturday (14 June 2025)!");
    const again = await ingestOk(key, {
      user_id: "d1",
      conv_id: "c2",
      messages: [user(said, { date: "2025-06-20T10:00:00Z" })],
    });
    expect(again.memories_superseded_by).toEqual({});
    const active = await activeFacts(key, "d1");
    expect(active).toContain(moved.text);
    expect(active).toHaveLength(n);
  });

  it("supersedes a changed single-valued fact and keeps the chain", async () => {
    const { key, orgId } = await svc.newOrg();
    const first = await ingestOk(key, { messages: [user("I live in Paris with two cats.")] });
    const old = first.memories_created.find((m: any) => m.type === "fact" && m.text.includes("Paris"));
    const second = await ingestOk(key, { messages: [user("I live in Berlin with two cats.")] });
    const fresh = second.memories_created.find((m: any) => m.type === "fact" && m.text.includes("Berlin"));
    expect(second.memories_superseded_by).toEqual({ [old.id]: fresh.id });
    const oldRow = await findMemory(svc.deps.db, orgId, old.id);
    expect(oldRow!.status).toBe("superseded");
    expect(oldRow!.updated_at.getTime()).toBeGreaterThan(oldRow!.created_at.getTime());
    const wire = toWire((await findMemory(svc.deps.db, orgId, fresh.id))!);
    expect(wire.details).toMatchObject({ status: "active", supersedes: old.id });
    // another user's fact is never superseded
    const other = await svc.request("POST", "/v1/memories?wait=true", {
      key,
      body: { user_id: "u2", conv_id: "c9", messages: [user("I live in Rome with two cats.")] },
    });
    expect(other.body.result.memories_superseded_by).toEqual({});
  });

  it("supersedes a job, a city and a diet said the everyday ways, and keeps the claim beside the changed one", async () => {
    const { key } = await svc.newOrg();
    const active = async () =>
      (await svc.request("GET", "/v1/memories?user_id=u1&status=active&type=fact", { key })).body.data.map(
        (m: { text: string }) => m.text,
      );
    await ingestOk(key, { messages: [user("I work at Acme Corp as a designer.")] });
    const quit = await ingestOk(key, {
      conv_id: "c2",
      messages: [user("I don't work at Acme Corp anymore.")],
    });
    expect(Object.keys(quit.memories_superseded_by)).toHaveLength(1);
    await ingestOk(key, { user_id: "u4", messages: [user("I'm 29 and I work as a nurse.")] });
    const older = await ingestOk(key, {
      user_id: "u4",
      conv_id: "c2",
      messages: [user("I just turned 30.")],
    });
    expect(Object.keys(older.memories_superseded_by)).toHaveLength(2);
    const u4 = (
      await svc.request("GET", "/v1/memories?user_id=u4&status=active&type=fact", { key })
    ).body.data.map((m: { text: string }) => m.text);
    expect(u4.some((t: string) => t.includes("29"))).toBe(false);
    expect(u4).toContain("The user works as a nurse.");
    await ingestOk(key, { user_id: "u3", messages: [user("I work at Google.")] });
    const left = await ingestOk(key, {
      user_id: "u3",
      conv_id: "c2",
      messages: [user("I quit my job at Google last week.")],
    });
    expect(Object.keys(left.memories_superseded_by)).toHaveLength(1);
    await ingestOk(key, { conv_id: "c3", messages: [user("I'm a vegetarian these days.")] });
    const diet = await ingestOk(key, {
      conv_id: "c4",
      messages: [user("I'm not vegetarian anymore, I eat fish now.")],
    });
    expect(Object.keys(diet.memories_superseded_by)).toHaveLength(1);
    await ingestOk(key, { conv_id: "c5", messages: [user("I live in Oslo and I work as a carpenter.")] });
    const moved = await ingestOk(key, { conv_id: "c6", messages: [user("I moved to Tromso last year.")] });
    const tromso = moved.memories_created.find((m: any) => m.type === "fact").id;
    const now = await active();
    expect(now).not.toContain("The user works at Acme Corp as a designer.");
    expect(now).not.toContain("The user is a vegetarian these days.");
    expect(now).not.toContain("The user lives in Oslo.");
    // The sentence the old city was said in goes with it: its other clause is a fact of its own,
    // which stays. A turn that says more than its clauses stays whole.
    expect(now).not.toContain("The user lives in Oslo and the user works as a carpenter.");
    expect(now).toContain("The user works as a carpenter.");
    expect(Object.values(moved.memories_superseded_by)).toEqual([tromso, tromso]);

    // A turn that says more than its clauses goes too; what it says besides stays, as a fact.
    await ingestOk(key, {
      user_id: "u2",
      messages: [user("I live in Bergen and I work as a baker. My dog Rex loves the snow there.")],
    });
    const again = await ingestOk(key, {
      user_id: "u2",
      conv_id: "c8",
      messages: [user("I moved to Tromso.")],
    });
    expect(Object.keys(again.memories_superseded_by)).toHaveLength(2);
    const u2 = (
      await svc.request("GET", "/v1/memories?user_id=u2&status=active&type=fact", { key })
    ).body.data.map((m: { text: string }) => m.text);
    // Only what no active fact says: the baker is a clause fact of its own.
    expect(u2.filter((t: string) => t.includes("Rex") || t.includes("baker")).sort()).toEqual([
      "The user works as a baker.",
      "The user's dog Rex loves the snow there.",
    ]);
    expect(u2.filter((t: string) => t.includes("Bergen"))).toEqual([]);
  });

  it.each([
    [
      "I live in Portland with my partner Daniel and our two kids.",
      "We moved to Denver last week!",
      "On 6 January 2025, the user lives with the user's partner Daniel and the user's two kids.",
    ],
    // The new home said with the same people: nothing to keep.
    ["I live in Paris with two cats.", "I live in Berlin with two cats.", null],
  ])(
    "a home superseded keeps who it was shared with, as a fact of its own: %s -> %s",
    async (home, move, kept) => {
      const { key, orgId } = await svc.newOrg();
      const first = await ingestOk(key, {
        user_id: "h1",
        messages: [user(home, { date: "2025-01-06T09:00:00Z" })],
      });
      const old = first.memories_created.find((m: any) => m.type === "fact");
      const moved = await ingestOk(key, {
        user_id: "h1",
        conv_id: "c2",
        messages: [user(move, { date: "2025-03-02T09:00:00Z" })],
      });
      const facts = moved.memories_created.filter((m: any) => m.type === "fact");
      const fresh = facts.find((m: any) => m.text !== kept);
      // The home is superseded by the move, not by what is kept of it.
      expect(moved.memories_superseded_by).toEqual({ [old.id]: fresh.id });
      const active = await activeFacts(key, "h1");
      if (kept === null) {
        expect(active).toEqual([fresh.text]);
        return;
      }
      expect(active.sort()).toEqual([fresh.text, kept].sort());
      const rest = facts.find((m: any) => m.text === kept);
      const [row] = await rowsOf(orgId, [rest]);
      const episode = first.memories_created.find((m: any) => m.type === "episode");
      expect(row!).toMatchObject({ conv_id: "c1", status: "active" });
      expect(row!.details).toMatchObject({ episode_id: episode.id });
      const found = await svc.request("POST", "/v1/memories/search", {
        key,
        body: { query: "What's my partner's name?", user_id: "h1", mode: "retrieve", include: ["fact"] },
      });
      expect(found.body.data[0].id).toBe(rest.id);
    },
  );

  it("a changed job leaves no fact stating the old one: the rest of its turn is kept as a fact, in its episode", async () => {
    const { key, orgId } = await svc.newOrg();
    const first = await ingestOk(key, {
      messages: [
        user("I work as a nurse at Mercy Hospital in Ottawa. I have two kids.", {
          date: "2025-01-06T09:00:00Z",
        }),
      ],
    });
    const changed = await ingestOk(key, {
      conv_id: "c2",
      messages: [user("I just got a job at Stripe as a product manager.", { date: "2025-02-06T09:00:00Z" })],
    });
    const stripe = changed.memories_created.find((m: any) => m.type === "fact" && m.text.includes("Stripe"));
    const active = (
      await svc.request("GET", "/v1/memories?user_id=u1&status=active&type=fact", { key })
    ).body.data.map((m: { text: string }) => m.text);
    expect(active.filter((t: string) => t.includes("nurse"))).toEqual([]);
    expect(active).toContain("On 6 January 2025, the user has two kids.");
    // Both facts that said the nurse job are replaced: the clause by the new job, the whole turn by
    // its rest, which stays where the turn was (its conversation and episode).
    const wholeTurn = first.memories_created.find(
      (m: any) => m.type === "fact" && m.text.includes("two kids"),
    );
    const rest = changed.memories_created.find((m: any) => m.type === "fact" && m.text.includes("two kids"));
    expect(changed.memories_superseded_by[wholeTurn.id]).toBe(rest.id);
    expect(Object.values(changed.memories_superseded_by)).toContain(stripe.id);
    const [restRow] = await rowsOf(orgId, [rest]);
    const episode = first.memories_created.find((m: any) => m.type === "episode");
    expect(restRow).toMatchObject({ conv_id: "c1", status: "active" });
    expect(restRow!.details).toMatchObject({ episode_id: episode.id, date: "2025-01-06T09:00:00Z" });
    const [episodeRow] = await rowsOf(orgId, [episode]);
    expect(episodeRow!.details.fact_ids).toContain(rest.id);
    expect(episodeRow!.text).toContain("two kids");
    expect(episodeRow!.text).not.toContain("nurse");
    const found = await svc.request("POST", "/v1/memories/search", {
      key,
      body: { query: "Where do I work?", user_id: "u1", mode: "retrieve" },
    });
    expect(
      found.body.data.map((m: { text: string }) => m.text).filter((t: string) => t.includes("nurse")),
    ).toEqual([]);
  });

  it.each([
    [
      "sup",
      [
        ["I live in Denver and work as an accountant at Deloitte.", "2025-02-01"],
        ["We moved to Austin last month.", "2025-03-15"],
      ],
      ["On 1 February 2025, the user works as an accountant at Deloitte."],
    ],
    [
      "sup4",
      [
        ["I work at Google as a designer and live in Brooklyn with my partner Sam.", "2025-02-01"],
        ["I just started a new job at Figma.", "2025-04-01"],
      ],
      ["On 1 February 2025, the user lives in Brooklyn with the user's partner Sam."],
    ],
    [
      "samr",
      [
        [
          "I live in Denver and work as an accountant at Deloitte, and my wife Priya is a teacher.",
          "2025-02-01",
        ],
        ["I work at Google.", "2025-02-02"],
        ["We moved to Austin last month.", "2025-03-15"],
      ],
      ["On 1 February 2025, the user's wife Priya is a teacher."],
    ],
    [
      "ages",
      [
        ["My daughter Lily is 6 and my son Theo is 3.", "2025-02-01"],
        ["My son Theo turned 4 today!", "2025-05-09"],
      ],
      ["On 1 February 2025, the user's daughter Lily is 6 years old."],
    ],
  ])(
    "the rest of a superseded turn (%s) is whole clauses with their subject, none superseded, none said already",
    async (userId, turns, kept) => {
      const { key } = await svc.newOrg();
      for (const [i, [text, day]] of (turns as string[][]).entries())
        await ingestOk(key, {
          user_id: userId,
          conv_id: `c${i}`,
          messages: [user(text!, { date: `${day}T10:00:00Z` }), { role: "assistant", content: "Noted." }],
        });
      const active = (
        await svc.request("GET", `/v1/memories?user_id=${userId}&status=active&type=fact`, { key })
      ).body.data.map((m: { text: string }) => m.text);
      // Of the first turn, only what still holds, each once, each a sentence with its subject.
      expect(active.filter((t: string) => t.startsWith("On 1 February 2025")).sort()).toEqual(kept);
      expect(active.filter((t: string) => /^On \d+ \w+ \d{4}, \p{Lu}/u.test(t))).toEqual([]);
      if (userId === "samr") {
        const found = await svc.request("POST", "/v1/memories/search", {
          key,
          body: { query: "Where do I work?", user_id: userId, mode: "retrieve" },
        });
        const facts = found.body.data.filter((m: { type: string }) => m.type === "fact");
        expect(facts[0].text).toContain("Google");
        expect(
          facts.map((m: { text: string }) => m.text).filter((t: string) => t.includes("Deloitte")),
        ).toEqual([]);
      }
    },
  );

  it.each([
    [
      "In this repo we use jest for tests. Always run `npm test` before committing.",
      "We moved from jest to vitest. Use `npx vitest run` for tests from now on.",
      "On 9 January 2025, the user asked the assistant to always run `npm test` before committing.",
      "jest",
    ],
    [
      "I play tennis every weekend. I have two kids.",
      "I stopped playing tennis.",
      "On 9 January 2025, the user has two kids.",
      "tennis",
    ],
    [
      "My kids love the park. I drive a Honda Civic, it's great in the snow.",
      "We sold the Civic and bought a Subaru Outback.",
      "On 9 January 2025, the user's kids love the park.",
      "Civic",
    ],
  ])(
    "a fact of several sentences ended by one of them is superseded, what the others say kept as a fact: %s -> %s",
    async (before, after, kept, ended) => {
      const { key, orgId } = await svc.newOrg();
      const first = await ingestOk(key, {
        user_id: "m1",
        messages: [user(before, { date: "2025-01-09T09:00:00Z" })],
      });
      const [old] = first.memories_created.filter((m: any) => m.type === "fact");
      const second = await ingestOk(key, {
        user_id: "m1",
        conv_id: "c2",
        messages: [user(after, { date: "2025-03-09T09:00:00Z" })],
      });
      const rest = second.memories_created.find((m: any) => m.type === "fact" && m.text === kept);
      expect(rest, JSON.stringify(second.memories_created)).toBeDefined();
      expect(Object.keys(second.memories_superseded_by)).toEqual([old.id]);
      expect((await findMemory(svc.deps.db, orgId, old.id))!.status).toBe("superseded");
      const fresh = second.memories_created.filter((m: any) => m.type === "fact" && m.id !== rest.id);
      expect((await activeFacts(key, "m1")).sort()).toEqual([kept, ...fresh.map((m: any) => m.text)].sort());
      // The rest stays where the fact was; its episode says the rest, not what ended.
      const episode = first.memories_created.find((m: any) => m.type === "episode");
      const [restRow, episodeRow] = await rowsOf(orgId, [rest, episode]);
      expect(restRow).toMatchObject({ conv_id: "c1", status: "active", supersedes: old.id });
      expect(episodeRow!.details.fact_ids).toContain(rest.id);
      expect(episodeRow!.text.toLowerCase()).toContain(
        kept.slice("On 9 January 2025, ".length).toLowerCase(),
      );
      expect(episodeRow!.text).not.toContain(ended);
    },
  );

  it("a fact of several sentences ended by one keeps the others in its episode when an active fact says them already", async () => {
    const { key, orgId } = await svc.newOrg();
    const first = await ingestOk(key, {
      user_id: "m3",
      messages: [user("My sister Emma lives in Boston. I live in Chicago.")],
    });
    await ingestOk(key, {
      user_id: "m3",
      conv_id: "c2",
      messages: [user("Emma doesn't live in Boston anymore.")],
    });
    expect(await activeFacts(key, "m3")).toContain("The user lives in Chicago.");
    const episode = first.memories_created.find((m: any) => m.type === "episode");
    const [episodeRow] = await rowsOf(orgId, [episode]);
    // Only what ended leaves the episode: it was emptied to its title ("Conversation") before.
    expect(episodeRow!.text).toContain("The user lives in Chicago.");
    expect(episodeRow!.text).not.toContain("Boston");
  });

  it("a rest kept of a lesson's turn goes when the lesson is reversed, as the turn's fact would", async () => {
    const { key } = await svc.newOrg();
    for (const [i, said] of [
      "In this repo we use jest for tests. Always run `npm test` before committing.",
      "We moved from jest to vitest.",
      "Always run `pnpm test` before committing.",
    ].entries())
      await ingestOk(key, { user_id: "m2", conv_id: `c${i}`, messages: [user(said)] });
    const active = await activeFacts(key, "m2");
    expect(active.filter((t: string) => t.includes("`npm test`"))).toEqual([]);
    expect(active).toContain("The user asked the assistant to always run `pnpm test` before committing.");
  });

  it("supersedes an employer joined or started at, an age said with a name or a day, past a label", async () => {
    const { key } = await svc.newOrg();
    const activeOf = async (userId: string) =>
      (
        await svc.request("GET", `/v1/memories?user_id=${userId}&status=active&type=fact`, { key })
      ).body.data.map((m: { text: string }) => m.text);
    await ingestOk(key, { user_id: "j1", messages: [user("I work at Shopify.")] });
    const joined = await ingestOk(key, {
      user_id: "j1",
      conv_id: "c2",
      messages: [user("I joined Cloudflare as a staff engineer.")],
    });
    expect(Object.keys(joined.memories_superseded_by)).toHaveLength(1);
    expect(await activeOf("j1")).toEqual(["The user joined Cloudflare as a staff engineer."]);
    await ingestOk(key, { user_id: "j2", messages: [user("I work as a product designer at Doctolib.")] });
    const starting = await ingestOk(key, {
      user_id: "j2",
      conv_id: "c2",
      messages: [user("Quick update: I'm starting at Alan as a senior designer.")],
    });
    expect(Object.keys(starting.memories_superseded_by)).toHaveLength(1);
    // An adverb between the subject and its verb: "just moved" is a move.
    await ingestOk(key, { user_id: "r1", messages: [user("I live in Portland with my partner.")] });
    const moved = await ingestOk(key, {
      user_id: "r1",
      conv_id: "c2",
      messages: [user("I just moved to Seattle!")],
    });
    expect(Object.keys(moved.memories_superseded_by)).toHaveLength(1);
    // "He" is the person the sentence before names; one "he" never supersedes another's fact.
    await ingestOk(key, {
      user_id: "p1",
      messages: [user("My brother got his Ph.D. in physics last year. He now works at NASA.")],
    });
    const dad = await ingestOk(key, {
      user_id: "p1",
      conv_id: "c2",
      messages: [user("My dad retired from the army in May. He now works at Home Depot.")],
    });
    expect(dad.memories_superseded_by).toEqual({});
    expect(await activeOf("p1")).toEqual(
      expect.arrayContaining([
        "The user's brother now works at NASA.",
        "The user's dad now works at Home Depot.",
      ]),
    );
    const quit = await ingestOk(key, {
      user_id: "p1",
      conv_id: "c3",
      messages: [user("My brother just quit NASA.")],
    });
    expect(Object.keys(quit.memories_superseded_by)).toHaveLength(1);
    expect(await activeOf("p1")).not.toContain("The user's brother now works at NASA.");
    // An introduction's description is where the user works and lives: a quit and a move replace it.
    await ingestOk(key, {
      user_id: "i1",
      messages: [user("I'm Alex, a backend developer at Globex in Chicago.")],
    });
    const quitGlobex = await ingestOk(key, {
      user_id: "i1",
      conv_id: "c2",
      messages: [user("I quit my job at Globex last week.")],
    });
    expect(Object.keys(quitGlobex.memories_superseded_by)).toHaveLength(1);
    expect((await activeOf("i1")).some((t: string) => t.includes("backend developer"))).toBe(false);
    await ingestOk(key, { user_id: "i2", messages: [user("I'm Sam, a nurse in Austin.")] });
    const movedSam = await ingestOk(key, {
      user_id: "i2",
      conv_id: "c2",
      messages: [user("We moved to Denver.")],
    });
    expect(Object.keys(movedSam.memories_superseded_by)).toHaveLength(1);
    // A gym joined is no employer.
    await ingestOk(key, { user_id: "j3", messages: [user("I work at Google.")] });
    const gym = await ingestOk(key, {
      user_id: "j3",
      conv_id: "c2",
      messages: [user("I joined a gym near home.")],
    });
    expect(gym.memories_superseded_by).toEqual({});
    // A two-word name, and "today" after the new age.
    await ingestOk(key, {
      user_id: "a1",
      messages: [user("My name is Carol Nguyen."), user("I'm 52 and I live in Seattle.")],
    });
    const turned = await ingestOk(key, {
      user_id: "a1",
      conv_id: "c2",
      messages: [user("I just turned 53 today.")],
    });
    expect(Object.keys(turned.memories_superseded_by).length).toBeGreaterThanOrEqual(1);
    expect((await activeOf("a1")).some((t: string) => t.includes("52"))).toBe(false);
    // An age said beside the name ("I'm Dana, 34, from Chicago").
    await ingestOk(key, { user_id: "a2", messages: [user("I'm Dana, 34, from Chicago.")] });
    const a2 = await activeOf("a2");
    expect(a2).toEqual(
      expect.arrayContaining(["The user's name is Dana.", "Dana is 34 years old, from Chicago."]),
    );
    const older = await ingestOk(key, {
      user_id: "a2",
      conv_id: "c2",
      messages: [user("I just turned 35!")],
    });
    expect(Object.keys(older.memories_superseded_by)).toHaveLength(1);
  });

  it("reads a change of mind past its opener: each new favourite replaces the last", async () => {
    const { key } = await svc.newOrg();
    const said = [
      "Actually my favorite color is blue now.",
      "I changed my mind, my favorite color is red.",
      "My favorite color is purple.",
    ];
    for (const [i, text] of said.entries()) {
      const r = await ingestOk(key, { user_id: "u7", conv_id: `c${i}`, messages: [user(text)] });
      expect(Object.keys(r.memories_superseded_by), text).toHaveLength(i === 0 ? 0 : 1);
    }
    const active = (await svc.request("GET", "/v1/memories?user_id=u7&status=active&type=fact", { key })).body
      .data;
    expect(active.map((m: { text: string }) => m.text)).toEqual(["The user's favorite color is purple."]);
  });

  it("takes a superseded claim out of its episode's text, by ingest and by PATCH, and search serves neither", async () => {
    const { key, orgId } = await svc.newOrg();
    const first = await ingestOk(key, { messages: [user("My favourite colour is green.")] });
    const episode = first.memories_created.find((m: any) => m.type === "episode");
    const green = first.memories_created.find((m: any) => m.type === "fact");
    expect((await findMemory(svc.deps.db, orgId, episode.id))!.text).toContain("green");
    const second = await ingestOk(key, { conv_id: "c2", messages: [user("My favourite colour is blue.")] });
    const blue = second.memories_created.find((m: any) => m.type === "fact");
    expect(second.memories_superseded_by).toEqual({ [green.id]: blue.id });
    const ep = (await findMemory(svc.deps.db, orgId, episode.id))!;
    expect(ep.text).not.toContain("green");
    // The superseded fact stays the episode's (history): listed, and readable by id.
    expect(ep.details.fact_ids).toContain(green.id);
    const search = async (query: string) =>
      (
        await svc.request("POST", "/v1/memories/search", {
          key,
          body: { query, user_id: "u1", mode: "retrieve" },
        })
      ).body.data.map((m: { text: string }) => m.text);
    expect((await search("favourite colour green")).join(" | ")).not.toContain("green");

    // A PATCH of the text supersedes too: the episode of the blue fact stops saying blue.
    const blueEpisode = second.memories_created.find((m: any) => m.type === "episode");
    expect((await findMemory(svc.deps.db, orgId, blueEpisode.id))!.text).toContain("blue");
    const patched = await svc.request("PATCH", `/v1/memories/${blue.id}/`, {
      key,
      body: { text: "The user's favourite colour is red." },
    });
    expect(patched.status, patched.text).toBe(200);
    expect((await findMemory(svc.deps.db, orgId, blueEpisode.id))!.text).not.toContain("blue");
    expect((await search("favourite colour blue")).join(" | ")).not.toContain("blue");
  });

  it.each([false, true])(
    "stores a restated fact once and reports the existing row as updated (agentic %s)",
    async (agentic) => {
      const { key, orgId } = await svc.newOrg();
      const first = await ingestOk(key, {
        messages: [user("I play the violin in a quartet.", { dia_id: "D1:1" })],
      });
      const fact = first.memories_created.find((m: any) => m.type === "fact");
      // said again in another conversation: that conversation's episode links to the same fact (an
      // agentic ingest, which recalls the user's facts first, dropped it: neither touched nor linked)
      const second = await ingestOk(key, {
        conv_id: "c2",
        agentic,
        messages: [user("I play the violin in a quartet.", { dia_id: "D2:7" })],
      });
      expect(second.memories_created.filter((m: any) => m.type === "fact")).toEqual([]);
      expect(second.memories_updated.map((m: any) => m.id)).toContain(fact.id);
      const row = await findMemory(svc.deps.db, orgId, fact.id);
      expect([...(row!.details.source_event_ids as string[])].sort()).toEqual(["D1:1", "D2:7"]);
      const episode = second.memories_created.find((m: any) => m.type === "episode");
      const ep = await findMemory(svc.deps.db, orgId, episode.id);
      expect(ep!.details.fact_ids).toEqual([fact.id]);
    },
  );

  it.each([false, true])(
    "stores a conversation ingested again once: its episode is touched, not repeated (agentic %s)",
    async (agentic) => {
      const { key } = await svc.newOrg();
      const messages = [user("I play the cello on Sundays."), user("My teacher lives in Vienna.")];
      const first = await ingestOk(key, { messages, agentic });
      const episode = first.memories_created.find((m: any) => m.type === "episode");
      for (let i = 0; i < 2; i++) {
        // Agentic, the second ingest stored a second episode, linking no fact.
        const again = await ingestOk(key, { messages, agentic });
        expect(again.memories_created.map((m: any) => [m.type, m.memory ?? m.text])).toEqual([]);
        expect(again.memories_updated.map((m: any) => m.id)).toContain(episode.id);
      }
      const list = await svc.request("GET", "/v1/memories?user_id=u1&type=episode", { key });
      expect(list.body.data.map((m: any) => m.id)).toEqual([episode.id]);
      const search = await svc.request("POST", "/v1/memories/search", {
        key,
        body: { query: "cello teacher Vienna", user_id: "u1" },
      });
      expect(search.status).toBe(200);
      // One episode in the block (the agentic one's title also names the cello: "Session: I play ...").
      const episodes = search.body.context.split("### Episodes")[1] ?? "";
      expect(episodes.split("\n").filter((l: string) => l.startsWith("- "))).toHaveLength(1);
      if (!agentic) expect(search.body.context.match(/cello/g)?.length).toBeLessThanOrEqual(2);
      // something new in the conversation is a new episode
      const more = await ingestOk(key, {
        messages: [...messages, user("I bought a new bow for it in May.")],
        agentic,
      });
      expect(more.memories_created.filter((m: any) => m.type === "episode")).toHaveLength(1);
    },
  );

  it("stores a conversation ingested twice at once with one episode: the later job touches it", async () => {
    const { key } = await svc.newOrg();
    const messages = [user("I play the cello on Sundays."), user("My teacher lives in Vienna.")];
    // Both jobs plan (extract) before either stores: the two workers take one each.
    const [a, b] = await withConfig(svc.deps, { MNEMO_TEST_EXTRACT_DELAY_MS: 400 }, () =>
      Promise.all([ingestOk(key, { messages }), ingestOk(key, { messages })]),
    );
    const episodes = await svc.request("GET", "/v1/memories?user_id=u1&type=episode", { key });
    expect(episodes.body.data).toHaveLength(1);
    const facts = await svc.request("GET", "/v1/memories?user_id=u1&type=fact", { key });
    expect(facts.body.data).toHaveLength(2);
    const episode = episodes.body.data[0].id;
    // One job created it; the other reports it updated, with the facts it restated.
    const created = [a, b].flatMap((r) => r.memories_created.filter((m: any) => m.type === "episode"));
    expect(created.map((m: any) => m.id)).toEqual([episode]);
    const other = [a, b].find((r) => !r.memories_created.some((m: any) => m.type === "episode"));
    expect(other.memories_created).toEqual([]);
    expect(other.memories_updated.map((m: any) => m.id)).toContain(episode);
    expect(episodes.body.data[0].details.fact_ids.sort()).toEqual(
      facts.body.data.map((f: any) => f.id).sort(),
    );
  });

  it("records each new fact's neighbours in its episode's final fact order, kept off the wire", async () => {
    const { key, orgId } = await svc.newOrg();
    await ingestOk(key, { messages: [user("I play the violin in a quartet.")] });
    // The restated fact (second turn) is the earlier row: the new facts' places are after the swap.
    const result = await ingestOk(key, {
      messages: [
        user("I adopted a greyhound called Rocket last spring."),
        user("I play the violin in a quartet."),
        user("My brother moved to Lisbon for a job at a bank."),
        user("I am training for the Berlin marathon in September."),
      ],
    });
    const episode = result.memories_created.find((m: any) => m.type === "episode");
    const ep = (await findMemory(svc.deps.db, orgId, episode.id))!;
    const order = ep.details.fact_ids as string[];
    expect(order).toHaveLength(4);
    const created = await rowsOf(
      orgId,
      result.memories_created.filter((m: any) => m.type === "fact"),
    );
    expect(created).toHaveLength(3);
    // Each new fact stores its neighbours in that order (ids by offset, two places either side).
    for (const f of created) {
      const i = order.indexOf(f.id);
      expect(f.details.episode_id).toBe(episode.id);
      expect(f.details.episode_near).toEqual(
        Object.fromEntries([-2, -1, 1, 2].filter((d) => order[i + d]).map((d) => [String(d), order[i + d]])),
      );
      expect(toWire(f).details).not.toHaveProperty("episode_near");
    }
    expect(created.map((f) => order.indexOf(f.id)).sort()).toEqual([0, 2, 3]);
  });

  it("two ingests of the same fact at once store it once", async () => {
    const { key, orgId } = await svc.newOrg();
    const body = {
      user_id: "u1",
      conv_id: "c1",
      messages: [user("I collect vintage fountain pens from Japan.")],
    };
    const [a, b] = await Promise.all([
      svc.request("POST", "/v1/memories?wait=true", { key, body }),
      svc.request("POST", "/v1/memories?wait=true", { key, body }),
    ]);
    expect([a.body.status, b.body.status]).toEqual(["succeeded", "succeeded"]);
    const { rows } = await svc.deps.db.query(
      "SELECT count(*)::int AS n FROM memories WHERE org_id = $1 AND type = 'fact' AND text LIKE '%fountain pens%'",
      [orgId],
    );
    expect(rows[0].n).toBe(1);
  });
});

describe("two big ingests of the same facts at once", () => {
  it("store each fact once, and every episode fact and neighbour link names a stored fact", async () => {
    // 120 facts: store transactions of 50, 50 and the last with the rest, the two jobs' possibly
    // interleaved; whichever stores a fact first, the other touches it and links to it.
    const { key, orgId } = await svc.newOrg();
    const body = {
      user_id: "u1",
      conv_id: "c1",
      messages: Array.from({ length: 120 }, (_, i) =>
        user(`I keep ${i} jars of honey from hive number ${i}.`),
      ),
    };
    const [a, b] = await Promise.all([
      svc.request("POST", "/v1/memories?wait=true", { key, body }),
      svc.request("POST", "/v1/memories?wait=true", { key, body }),
    ]);
    expect([a.body.status, b.body.status]).toEqual(["succeeded", "succeeded"]);
    const { rows } = await svc.deps.db.query(
      `SELECT count(*)::int AS n, count(DISTINCT content_hash)::int AS hashes FROM memories
       WHERE org_id = $1 AND type = 'fact' AND text LIKE '%jars of honey%'`,
      [orgId],
    );
    expect(rows[0]).toEqual({ n: 120, hashes: 120 });
    expect(await danglingLinks(svc.deps.db, orgId)).toEqual([0, 0]);
  });
});

describe("jobs of one user at once, re-checked under the store lock", () => {
  const count = async (orgId: string, sql: string) =>
    (await svc.deps.db.query(`SELECT count(*)::int AS n FROM memories WHERE org_id = $1 AND ${sql}`, [orgId]))
      .rows[0].n as number;
  const ingestAll = async (key: string, bodies: object[]) => {
    const all = await Promise.all(
      bodies.map((body) =>
        svc.request("POST", "/v1/memories?wait=true", { key, body: { user_id: "u1", ...body } }),
      ),
    );
    expect(all.map((r) => r.body.status)).toEqual(bodies.map(() => "succeeded"));
    return all.map((r) => r.body.result);
  };

  it("six jobs changing one fact the same way leave one active fact replacing it", async () => {
    const { key, orgId } = await svc.newOrg();
    await ingestOk(key, { messages: [user("My favourite colour is blue.")] });
    const results = await ingestAll(
      key,
      Array.from({ length: 6 }, (_, i) => ({
        conv_id: `c${i}`,
        messages: [user("My favourite colour is green.")],
      })),
    );
    expect(await count(orgId, "type = 'fact' AND status = 'active' AND text LIKE '%colour%'")).toBe(1);
    expect(await count(orgId, "type = 'fact' AND text LIKE '%green%'")).toBe(1);
    // One job replaced blue; the other five restated its green.
    expect(results.filter((r) => Object.keys(r.memories_superseded_by).length === 1)).toHaveLength(1);
    expect(results.filter((r) => r.memories_updated.some((m: any) => m.text.includes("green")))).toHaveLength(
      5,
    );
  });

  it("six jobs giving a first value at once leave one active value", async () => {
    const { key, orgId } = await svc.newOrg();
    const colours = ["green", "red", "yellow", "purple", "orange", "pink"];
    await ingestAll(
      key,
      colours.map((c, i) => ({ conv_id: `c${i}`, messages: [user(`My favourite colour is ${c}.`)] })),
    );
    expect(await count(orgId, "type = 'fact' AND status = 'active' AND text LIKE '%colour%'")).toBe(1);
    expect(await count(orgId, "type = 'fact' AND text LIKE '%colour%'")).toBe(6);
  });

  it("walks a replaced fact's chain to its end, through a successor replaced in turn", async () => {
    // blue <- red <- green, red already replaced: a job that planned to replace blue replaces
    // green (the probe of two API and two worker processes forked chains into two active values
    // when only active successors were followed: blue's only successor, red, was not).
    const { orgId } = await svc.newOrg();
    const [blue, red, green] = [newMemoryId(), newMemoryId(), newMemoryId()] as const;
    const fact = (id: string, text: string, status: "active" | "superseded", supersedes: string | null) => ({
      id,
      org_id: orgId,
      type: "fact" as const,
      text,
      user_id: "u1",
      status,
      supersedes,
    });
    await svc.deps.db.tx((tx) =>
      insertMemoryRows(tx, [
        fact(blue, "The user's favourite colour is blue.", "superseded", null),
        fact(red, "The user's favourite colour is red.", "superseded", blue),
        fact(green, "The user's favourite colour is green.", "active", red),
      ]),
    );
    const scope = { orgId, userId: "u1" };
    let at: string = blue;
    for (let hop = 0; hop < 5; hop++) {
      const next = (await newestSuccessors(svc.deps.db, scope, [at], "job_other")).get(at);
      if (!next) break;
      at = next;
    }
    expect(at).toBe(green);
  });

  it("six jobs changing one fact differently leave one chain, the last change its only active fact", async () => {
    const { key, orgId } = await svc.newOrg();
    await ingestOk(key, { messages: [user("My favourite colour is blue.")] });
    const colours = ["green", "red", "yellow", "purple", "orange", "pink"];
    await ingestAll(
      key,
      colours.map((c, i) => ({ conv_id: `c${i}`, messages: [user(`My favourite colour is ${c}.`)] })),
    );
    const { rows } = await svc.deps.db.query(
      "SELECT id::text, status, supersedes::text FROM memories WHERE org_id = $1 AND type = 'fact'",
      [orgId],
    );
    expect(rows).toHaveLength(7);
    expect(rows.filter((r) => r.status === "active")).toHaveLength(1);
    // Each change replaces a different fact: blue, then each in turn, never one fact twice.
    const replaced = rows.map((r) => r.supersedes).filter(Boolean);
    expect(new Set(replaced).size).toBe(6);
    const active = rows.find((r) => r.status === "active")!;
    expect(replaced).not.toContain(active.id);
  });

  it("six identical agentic jobs store each artifact and directive once", async () => {
    const { key, orgId } = await svc.newOrg();
    const messages = [
      user("Always run prettier_check before committing to the repo."),
      user(
        "Here is the deploy script:\n```bash\n#!/bin/bash\nset -e\nnpm ci\nnpm run build\n```\nSave it as deploy.sh",
      ),
      user("To release:\n1. Run make_release\n2. Tag the commit\n3. Push the tag"),
    ];
    const results = await ingestAll(
      key,
      Array.from({ length: 6 }, (_, i) => ({
        conv_id: `c${i}`,
        agentic: true,
        extract_artifacts: true,
        messages,
      })),
    );
    for (const type of ["artifact", "lesson", "procedure"])
      expect(await count(orgId, `type = '${type}'`)).toBe(1);
    const artifact = (
      await svc.deps.db.query(
        "SELECT id::text, details FROM memories WHERE org_id = $1 AND type = 'artifact'",
        [orgId],
      )
    ).rows[0];
    expect(artifact.details.version).toBe(1);
    expect(artifact.details.observation_count ?? 1).toBeGreaterThanOrEqual(1);
    // The five later jobs report the stored artifact as updated, and their facts and episodes link to it.
    const touching = results.filter((r) => r.memories_updated.some((m: any) => m.id === artifact.id));
    expect(touching).toHaveLength(5);
    expect(
      await count(orgId, `type = 'episode' AND details -> 'artifact_ids' = '["${artifact.id}"]'::jsonb`),
    ).toBe(6);
    expect(
      await count(
        orgId,
        `type = 'fact' AND jsonb_array_length(details -> 'artifact_ids') > 0 AND details -> 'artifact_ids' <> '["${artifact.id}"]'::jsonb`,
      ),
    ).toBe(0);
  });
});

describe("store transactions sized by time (inTimedChunks)", () => {
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  it("writes every row once, in order; a slow chunk makes the next smaller, a fast one larger again", async () => {
    const rows = Array.from({ length: 300 }, (_, i) => i);
    const chunks: number[][] = [];
    const firsts: boolean[] = [];
    const from = await inTimedChunks(
      rows,
      async (chunk, first) => {
        chunks.push(chunk);
        firsts.push(first);
        // The first transaction as slow as an embedded database's under load, the rest instant.
        if (first) await sleep(300);
      },
      { timed: true },
    );
    expect([...chunks.flat(), ...rows.slice(from)]).toEqual(rows);
    expect(from).toBeGreaterThan(0);
    // What is left for the last transaction fits in one chunk.
    expect(rows.length - from).toBeLessThanOrEqual(50);
    expect(rows.length - from).toBeGreaterThan(0);
    expect(firsts).toEqual(chunks.map((_, i) => i === 0));
    const sizes = chunks.map((c) => c.length);
    expect(sizes[0]).toBe(50);
    // 50 rows in 300 ms or more: at most 16 rows make 100 ms, and 15 is the floor.
    expect(sizes[1]).toBeGreaterThanOrEqual(15);
    expect(sizes[1]).toBeLessThanOrEqual(16);
    expect(sizes[2]).toBeGreaterThan(sizes[1]!);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(50);
  });

  it("rows that fit in one chunk are all left for the last transaction", async () => {
    let calls = 0;
    const from = await inTimedChunks(
      Array.from({ length: 50 }, (_, i) => i),
      async () => {
        calls++;
      },
      { timed: true },
    );
    expect(from).toBe(0);
    expect(calls).toBe(0);
  });

  it("the pause between chunks (a test setting) does not count as the chunk's time", async () => {
    const sizes: number[] = [];
    await inTimedChunks(
      Array.from({ length: 200 }, (_, i) => i),
      async (chunk) => {
        sizes.push(chunk.length);
      },
      { timed: true, between: () => sleep(200) },
    );
    expect(sizes).toEqual([50, 50, 50]);
  });

  it("a budget of 0 ms (MNEMO_TEST_TX_MS) keeps every chunk after the first at the floor", async () => {
    const sizes: number[] = [];
    const from = await inTimedChunks(
      Array.from({ length: 120 }, (_, i) => i),
      async (chunk) => {
        sizes.push(chunk.length);
      },
      { timed: true, ms: 0 },
    );
    expect(sizes).toEqual([50, 15, 15, 15, 15]);
    expect(from).toBe(110);
  });

  it("untimed (a PostgreSQL server), every chunk has 50 rows however long it takes", async () => {
    const sizes: number[] = [];
    const from = await inTimedChunks(
      Array.from({ length: 160 }, (_, i) => i),
      async (chunk) => {
        sizes.push(chunk.length);
        await sleep(150);
      },
      { timed: false },
    );
    expect(sizes).toEqual([50, 50, 50]);
    expect(from).toBe(150);
  });
});

describe("changes made while a job is stored (a pause between its store transactions)", () => {
  // A pause between store transactions (test only) leaves time to change what the job read. At
  // 400 ms a machine loaded by three suites at once let a job finish before the change arrived
  // (the PATCH then met a fact already superseded: 422); 1.5 s leaves room on a slow machine.
  let slow: TestService;
  beforeAll(async () => {
    slow = await startTestService({ env: { MNEMO_TEST_STORE_CHUNK_DELAY_MS: "1500" } });
  });
  afterAll(async () => {
    await slow?.stop();
  });
  /** Submits a job and waits until its first store transaction has committed. */
  const submitAndWaitForFirstChunk = async (key: string, body: object) => {
    const job = await slow.request("POST", "/v1/memories", { key, body: { user_id: "u1", ...body } });
    expect(job.status).toBe(202);
    await waitFor(
      async () =>
        (await slow.deps.db.query("SELECT count(*)::int AS n FROM memories WHERE job_id = $1", [job.body.id]))
          .rows[0].n > 0,
      { timeoutMs: 60_000, intervalMs: 20 },
    );
    return job.body.id as string;
  };
  const finished = async (key: string, jobId: string) => {
    await waitFor(
      async () =>
        (await slow.request("GET", `/v1/memories/jobs/${jobId}`, { key })).body.status === "succeeded",
      { timeoutMs: 60_000, intervalMs: 100 },
    );
    return (await slow.request("GET", `/v1/memories/jobs/${jobId}`, { key })).body.result;
  };
  const jam = (n: number) =>
    Array.from({ length: n }, (_, i) => user(`I keep ${i} jars of plum jam on shelf number ${i}.`));

  it("a restated fact whose stored copy is deleted is stored after all, in its episode with its neighbours", async () => {
    const { key, orgId } = await slow.newOrg();
    const first = await slow.request("POST", "/v1/memories?wait=true", {
      key,
      body: { user_id: "u1", conv_id: "c0", messages: [user("I collect antique brass telescopes.")] },
    });
    const old = first.body.result.memories_created.find((m: any) => m.type === "fact").id as string;
    // 80 new facts (two store transactions), then the restated one.
    const jobId = await submitAndWaitForFirstChunk(key, {
      conv_id: "c1",
      messages: [...jam(80), user("I collect antique brass telescopes.")],
    });
    expect((await slow.request("DELETE", `/v1/memories/${old}`, { key })).status).toBe(204);
    const result = await finished(key, jobId);
    const telescopes = result.memories_created.filter((m: any) => m.text.includes("telescopes"));
    expect(telescopes).toHaveLength(1);
    expect(result.memories_updated).toEqual([]);
    const row = (await findMemory(slow.deps.db, orgId, telescopes[0].id))!;
    expect(row.status).toBe("active");
    const episode = result.memories_created.find((m: any) => m.type === "episode");
    const ep = (await findMemory(slow.deps.db, orgId, episode.id))!;
    expect((ep.details.fact_ids as string[]).at(-1)).toBe(row.id);
    // Its neighbours link to it, and the deleted copy left the first job's episode.
    expect(await danglingLinks(slow.deps.db, orgId)).toEqual([0, 0]);
  });

  it("a fact of the job's own deleted between its store transactions leaves the episode it writes last", async () => {
    const { key, orgId } = await slow.newOrg();
    const jobId = await submitAndWaitForFirstChunk(key, {
      conv_id: "c1",
      messages: [user("I photographed a scarlet ibis near Ibiza last summer."), ...jam(80)],
    });
    const { rows } = await slow.deps.db.query(
      "SELECT id::text FROM memories WHERE job_id = $1 AND text LIKE '%ibis%'",
      [jobId],
    );
    expect(rows).toHaveLength(1);
    expect((await slow.request("DELETE", `/v1/memories/${rows[0].id}`, { key })).status).toBe(204);
    const result = await finished(key, jobId);
    expect(result.memories_created.some((m: any) => m.id === rows[0].id)).toBe(false);
    const episode = result.memories_created.find((m: any) => m.type === "episode");
    const ep = (await findMemory(slow.deps.db, orgId, episode.id))!;
    expect(ep.text).toContain("jars of plum jam");
    expect(ep.text).not.toMatch(/ibis|Ibiza/);
    expect(ep.details.fact_ids as string[]).not.toContain(rows[0].id);
    expect(ep.details.fact_ids as string[]).toHaveLength(80);
    expect(await danglingLinks(slow.deps.db, orgId)).toEqual([0, 0]);
    const search = await slow.request("POST", "/v1/memories/search", {
      key,
      body: { user_id: "u1", query: "scarlet ibis Ibiza", mode: "retrieve" },
    });
    expect(search.body.data.filter((m: any) => /ibis/i.test(m.text))).toEqual([]);
  });

  it("two jobs restating a fact deleted meanwhile store it again once, not twice", async () => {
    const { key, orgId } = await slow.newOrg();
    const said = "I collect antique brass telescopes.";
    const first = await slow.request("POST", "/v1/memories?wait=true", {
      key,
      body: { user_id: "u1", conv_id: "c0", messages: [user(said)] },
    });
    const old = first.body.result.memories_created.find((m: any) => m.type === "fact").id as string;
    // Both jobs planned the restatement against the stored copy (their first transactions are in).
    const jars = (kind: string) =>
      Array.from({ length: 80 }, (_, i) => user(`I keep ${i} jars of ${kind} jam on shelf number ${i}.`));
    const a = await submitAndWaitForFirstChunk(key, {
      conv_id: "c1",
      messages: [...jars("plum"), user(said)],
    });
    const b = await submitAndWaitForFirstChunk(key, {
      conv_id: "c2",
      messages: [...jars("fig"), user(said)],
    });
    expect((await slow.request("DELETE", `/v1/memories/${old}`, { key })).status).toBe(204);
    await finished(key, a);
    await finished(key, b);
    const { rows } = await slow.deps.db.query(
      "SELECT count(*)::int AS n FROM memories WHERE org_id = $1 AND type = 'fact' AND text LIKE '%telescopes%'",
      [orgId],
    );
    expect(rows[0].n).toBe(1);
    expect(await danglingLinks(slow.deps.db, orgId)).toEqual([0, 0]);
  });

  it("a fact whose text is changed (PATCH) after the job replaced it is replaced in turn: one active", async () => {
    const { key, orgId } = await slow.newOrg();
    const first = await slow.request("POST", "/v1/memories?wait=true", {
      key,
      body: { user_id: "u1", conv_id: "c0", messages: [user("My favourite colour is blue.")] },
    });
    const blue = first.body.result.memories_created.find((m: any) => m.type === "fact").id as string;
    // The change to green is in the first store transaction of 61 facts; the PATCH comes after it.
    const jobId = await submitAndWaitForFirstChunk(key, {
      conv_id: "c1",
      messages: [user("My favourite colour is green."), ...jam(60)],
    });
    const patched = await slow.request("PATCH", `/v1/memories/${blue}/`, {
      key,
      body: { text: "The user's favourite colour is purple." },
    });
    expect(patched.status).toBe(200);
    const result = await finished(key, jobId);
    const { rows } = await slow.deps.db.query(
      `SELECT id::text, text, status, supersedes::text FROM memories
       WHERE org_id = $1 AND type = 'fact' AND text LIKE '%colour%' ORDER BY created_at`,
      [orgId],
    );
    // blue <- green (the job) ... purple (the PATCH) came between: blue <- purple <- green.
    const byText = (w: string) => rows.find((r) => r.text.includes(w))!;
    expect(rows.filter((r) => r.status === "active").map((r) => r.text)).toEqual([byText("green").text]);
    expect(byText("purple")).toMatchObject({ status: "superseded", supersedes: blue });
    expect(byText("green").supersedes).toBe(byText("purple").id);
    expect(result.memories_superseded_by).toEqual({ [byText("purple").id]: byText("green").id });
  });
});

describe("the day composed context shows before a fact", () => {
  // What ingest read the message's date as (the fact's "On <day>" lead), else the day it was stored.
  it.each([
    ["2023-05-08T23:30:00-0500", undefined, "2023-05-08", "On 8 May 2023, "],
    ["2023-05-08T01:30:00+0900", undefined, "2023-05-08", "On 8 May 2023, "],
    ["1:56 pm on 8 May, 2023", undefined, "2023-05-08", "On 8 May 2023, "],
    // Read by neither day (ingest does not guess day and month), and not a date at all.
    ["08/05/2023 10:00", undefined, "stored", null],
    ["not a date", undefined, "stored", null],
    // The batch path reads it with timestamp_format.
    ["08/05/2023 23:30 -0500", "%d/%m/%Y %H:%M %z", "2023-05-08", "On 8 May 2023, "],
  ])("%s (%s): %s", async (date, timestamp_format, day, lead) => {
    const { key } = await svc.newOrg();
    const conv = `c-${day}`;
    const messages = [
      user("I bought a blue bicycle called Comet.", { date }),
      ...(timestamp_format ? [user("Hello.", { date }), user("Thanks.", { date })] : []),
    ];
    const stored = new Date().toISOString().slice(0, 10);
    await withConfig(svc.deps, { MNEMO_BATCH_THRESHOLD: timestamp_format ? 2 : 20 }, () =>
      ingestOk(key, { conv_id: conv, messages, ...(timestamp_format ? { timestamp_format } : {}) }),
    );
    const res = await svc.request("POST", "/v1/memories/search", {
      key,
      body: { query: "blue bicycle Comet", user_id: "u1", mode: "compose" },
    });
    expect(res.status).toBe(200);
    const fact = res.body.data.find((m: { type: string }) => m.type === "fact");
    if (lead) expect(fact.text.startsWith(lead)).toBe(true);
    else expect(fact.text).not.toMatch(/^On /);
    const facts = (res.body.context as string).split("### Facts\n")[1]!.split("\n")[0]!;
    expect(facts).toMatch(new RegExp(`^- ${day === "stored" ? stored : day}: `));
  });
});

describe("directives", () => {
  it("captures lessons and procedures with trigger entities, namespace and outcome", async () => {
    const { key, orgId } = await svc.newOrg();
    const result = await ingestOk(key, {
      namespace: "repo:mnemo",
      outcome: "resolved",
      messages: [
        user("Always run `npm test` before pushing to the main branch."),
        {
          role: "assistant",
          content:
            "To release a version:\n1. Bump the version in package.json\n2. Run `npm run build`\n3. Tag it with `git tag`",
        },
      ],
    });
    const rows = await rowsOf(orgId, result.memories_created);
    const lesson = rows.find((r) => r.type === "lesson")!;
    expect(lesson.text).toContain("npm test");
    expect(lesson.trigger_entities).toContain("npm");
    expect(lesson).toMatchObject({
      namespace: "repo:mnemo",
      outcome: "resolved",
      user_id: "u1",
      conv_id: "c1",
    });
    const proc = rows.find((r) => r.type === "procedure")!;
    expect(proc.details.steps).toEqual([
      "Bump the version in package.json",
      "Run `npm run build`",
      "Tag it with `git tag`",
    ]);
    expect(proc.trigger_entities).toEqual(expect.arrayContaining(["package.json", "npm", "git"]));
    expect(toWire(proc).details).toMatchObject({ source_outcome: "resolved", namespace: "repo:mnemo" });
    // seen again: counted, not duplicated
    const again = await ingestOk(key, {
      namespace: "repo:mnemo",
      messages: [user("Always run `npm test` before pushing to the main branch.")],
    });
    expect(again.memories_created.filter((m: any) => m.type === "lesson")).toEqual([]);
    expect(again.memories_updated.map((m: any) => m.id)).toContain(lesson.id);
    expect((await findMemory(svc.deps.db, orgId, lesson.id))!.details.observation_count).toBe(2);
  });

  it("a rule in force said again in other words is seen again, not a second lesson", async () => {
    const { key, orgId } = await svc.newOrg();
    const first = await ingestOk(key, { messages: [user("Don't use npm in this repo, use pnpm.")] });
    const lesson = first.memories_created.find((m: any) => m.type === "lesson");
    const again = await ingestOk(key, { messages: [user("Please don't use npm here, use pnpm.")] });
    expect(again.memories_created.filter((m: any) => m.type === "lesson")).toEqual([]);
    expect(again.memories_updated.map((m: any) => m.id)).toContain(lesson.id);
    expect((await findMemory(svc.deps.db, orgId, lesson.id))!.details.observation_count).toBe(2);
    expect((await recalledBy(key, "npm install zod")).map((d) => d.id)).toEqual([lesson.id]);
    // A rule scoped its own way is another rule.
    const scoped = await ingestOk(key, { messages: [user("For the e2e suite, don't use npm, use pnpm.")] });
    expect(scoped.memories_created.filter((m: any) => m.type === "lesson")).toHaveLength(1);
  });

  it("'stop using X' reverses a rule that chose X", async () => {
    for (const said of ["Stop using yarn; we use pnpm now.", "Actually, go back to pnpm, stop using yarn."]) {
      const { key } = await svc.newOrg();
      await ingestOk(key, { messages: [user("Use yarn from now on, not pnpm.")] });
      const reversal = await ingestOk(key, { messages: [user(said)] });
      const lesson = reversal.memories_created.find((m: any) => m.type === "lesson");
      expect(lesson, said).toBeDefined();
      expect(
        (await recalledBy(key, "yarn add left-pad")).map((d) => d.id),
        said,
      ).toEqual([lesson.id]);
    }
  });

  it("a reversal that names one side says the other too: 'go back to yarn' after 'use pnpm, not yarn' is '..., not pnpm'", async () => {
    for (const [rule, said, now] of [
      [
        "Don't use yarn in this repo, use pnpm instead.",
        "Actually, go back to yarn.",
        "Go back to yarn, not pnpm.",
      ],
      ["Use pnpm from now on, not yarn.", "Switch back to yarn please.", "Switch back to yarn, not pnpm."],
    ]) {
      const { key } = await svc.newOrg();
      const first = await ingestOk(key, { messages: [user(rule!)] });
      const old = first.memories_created.find((m: any) => m.type === "lesson");
      const reversal = await ingestOk(key, { messages: [user(said!)] });
      const lesson = reversal.memories_created.find((m: any) => m.type === "lesson");
      expect(lesson.text, said).toBe(now);
      const stored = await svc.request("GET", `/v1/memories/${lesson.id}`, { key });
      expect(stored.body.details.trigger_entities, said).toEqual(["yarn", "pnpm"]);
      expect(reversal.memories_superseded_by[old.id], said).toBe(lesson.id);
      // Recalled before either tool's call: the rule held now, whole.
      for (const command of ["yarn add left-pad", "pnpm add left-pad"])
        expect(
          (await recalledBy(key, command)).map((d) => d.text),
          command,
        ).toEqual([now]);
      // Searched by its words, as stored.
      const found = await svc.request("POST", "/v1/memories/search", {
        key,
        body: { user_id: "u1", query: "pnpm", mode: "retrieve", include: ["lesson"] },
      });
      expect(found.body.data.map((m: any) => m.text)).toEqual([now]);
      // Said again as first said, it is the rule in force seen again, not a second lesson.
      const again = await ingestOk(key, { messages: [user(said!)] });
      expect(
        again.memories_created.filter((m: any) => m.type === "lesson"),
        said,
      ).toEqual([]);
      expect(
        again.memories_updated.map((m: any) => m.id),
        said,
      ).toContain(lesson.id);
    }
  });

  it("a lesson reversing one in force supersedes it: recall serves the rule held now, revisions show the change", async () => {
    const { key, orgId } = await svc.newOrg();
    const lessonOf = (result: any) => result.memories_created.find((m: any) => m.type === "lesson");
    const recalled = async () => {
      return (await recalledBy(key, "yarn add left-pad")).map((d) => d.text);
    };
    const first = lessonOf(await ingestOk(key, { messages: [user("Never use yarn here, use pnpm.")] }));
    // Another rule that agrees with it (pnpm) is no reversal: both stay in force.
    const agreeing = lessonOf(await ingestOk(key, { messages: [user("Use pnpm, never npm.")] }));
    expect((await findMemory(svc.deps.db, orgId, first.id))!.status).not.toBe("superseded");
    expect(await recalled()).toEqual(["Never use yarn here, use pnpm."]);

    const reversal = await ingestOk(key, { messages: [user("Use yarn from now on, not pnpm.")] });
    const second = lessonOf(reversal);
    expect(second.text).toBe("Use yarn from now on, not pnpm.");
    // Both rules that chose pnpm are reversed ("never npm" went with "use pnpm"), and so are the
    // facts that recorded them, by the fact that records the new one.
    const ruleFact = reversal.memories_created.find((m: any) => m.type === "fact");
    expect(ruleFact.text).toContain("yarn from now on");
    const oldFacts = Object.keys(reversal.memories_superseded_by).filter(
      (id) => id !== first.id && id !== agreeing.id,
    );
    expect(reversal.memories_superseded_by).toEqual({
      [first.id]: second.id,
      [agreeing.id]: second.id,
      ...Object.fromEntries(oldFacts.map((id) => [id, ruleFact.id])),
    });
    expect(oldFacts).toHaveLength(2);
    const search = await svc.request("POST", "/v1/memories/search", {
      key,
      body: { user_id: "u1", query: "which package manager should I use, yarn or pnpm?", mode: "retrieve" },
    });
    const texts: string[] = search.body.data.map((m: any) => m.text);
    expect(texts.some((t) => /yarn from now on/.test(t))).toBe(true);
    expect(texts.filter((t) => /never (?:to )?use yarn/i.test(t))).toEqual([]);
    expect(await recalled()).toEqual(["Use yarn from now on, not pnpm."]);
    expect((await findMemory(svc.deps.db, orgId, first.id))!.status).toBe("superseded");
    const active = await svc.deps.db.query(
      "SELECT id::text FROM memories WHERE org_id = $1 AND type = 'lesson' AND status IS DISTINCT FROM 'superseded'",
      [orgId],
    );
    expect(active.rows.map((r) => r.id)).toEqual([second.id]);
    const revisions = await svc.request("GET", `/v1/memories/${second.id}/revisions`, { key });
    // One link per row: the newer lesson names the newest it reversed.
    expect(revisions.body.data.map((m: any) => m.id)).toEqual([agreeing.id, second.id]);

    // Turning back to the first rule stores it again (the superseded copy is not "seen again").
    const back = await ingestOk(key, { messages: [user("Never use yarn here, use pnpm.")] });
    const third = lessonOf(back);
    expect(third.id).not.toBe(first.id);
    expect(back.memories_superseded_by).toMatchObject({ [second.id]: third.id });
    expect(await recalled()).toEqual(["Never use yarn here, use pnpm."]);

    // Said again after a reversal in one conversation, the rule in force stays, and nothing is
    // superseded by a lesson never stored.
    const again = await ingestOk(key, {
      messages: [
        user("Use yarn from now on, not pnpm."),
        { role: "assistant", content: "Okay." },
        user("Never use yarn here, use pnpm."),
      ],
    });
    expect(again.memories_created.filter((m: any) => m.type === "lesson")).toEqual([]);
    expect(again.memories_superseded_by).toEqual({});
    expect(await recalled()).toEqual(["Never use yarn here, use pnpm."]);
  });

  it.each([
    [
      "Always use Node 18: run `nvm use 18` first.",
      "We upgraded to Node 22. Always run `nvm use 22`, not 18.",
      "nvm use 18",
    ],
    ["Always run `npm test` before committing.", "Always run `pnpm test` before committing.", "npm test"],
    [
      "Always run `npm run lint` before pushing, ESLint catches a lot.",
      "We replaced ESLint and Prettier with Biome. Don't run eslint anymore, run `pnpm biome check --write` before pushing.",
      "npm run lint",
    ],
  ])(
    "a rule changed (%s -> %s) supersedes the old one, and the trigger serves it no more",
    async (rule, changed, command) => {
      const { key, orgId } = await svc.newOrg();
      const scope = { agent_id: "claude-code", namespace: "webapp", agentic: true };
      const lessonsOf = (result: any) => result.memories_created.filter((m: any) => m.type === "lesson");
      const [old] = lessonsOf(await ingestOk(key, { ...scope, messages: [user(rule)] }));
      expect(old.text).toBe(rule);
      // Another rule sharing the program stays in force beside either.
      const [other] = lessonsOf(
        await ingestOk(key, {
          ...scope,
          messages: [user("Always run `npm audit` after adding a dependency.")],
        }),
      );
      const reversal = await ingestOk(key, { ...scope, messages: [user(changed)] });
      const [now] = lessonsOf(reversal);
      expect(reversal.memories_superseded_by[old.id]).toBe(now.id);
      expect(reversal.memories_superseded_by[other.id]).toBeUndefined();
      expect((await findMemory(svc.deps.db, orgId, old.id))!.status).toBe("superseded");
      const served = await svc.request("POST", "/v1/memories/trigger", {
        key,
        body: { user_id: "u1", agent_id: "claude-code", action: bash(command), mode: "retrieve" },
      });
      expect(served.body.data.map((d: any) => d.id)).not.toContain(old.id);
      // Search serves the old rule neither as a lesson nor through the fact that recorded it.
      const found = await svc.request("POST", "/v1/memories/search", {
        key,
        body: {
          user_id: "u1",
          agent_id: "claude-code",
          query: rule,
          mode: "retrieve",
          include: ["lesson", "fact"],
        },
      });
      const texts: string[] = found.body.data.map((m: any) => m.text);
      expect(texts.filter((t) => t.includes(`\`${command}\``))).toEqual([]);
      expect(texts.some((t) => t.includes(now.text.slice(0, 20)))).toBe(true);
    },
  );

  it("a procedure for the goal of one in force replaces it; another goal stays", async () => {
    const { key, orgId } = await svc.newOrg();
    const scope = { agent_id: "claude-code", namespace: "webapp", agentic: true };
    const assistant = (content: string) => ({ role: "assistant", content });
    const procOf = async (content: string) =>
      (
        await ingestOk(key, { ...scope, messages: [user("How do we do it?"), assistant(content)] })
      ).memories_created.find((m: any) => m.type === "procedure");
    const old = await procOf(
      "To release the webapp:\n1. Bump the version in package.json\n2. Run `npm run build`\n3. Deploy with `fly deploy`",
    );
    const other = await procOf("To rotate the signing key:\n1. Run `make keys`\n2. Deploy with `fly deploy`");
    const result = await ingestOk(key, {
      ...scope,
      messages: [
        user("How do we release now?"),
        assistant(
          "To release the webapp:\n1. Bump the version in package.json\n2. Run `pnpm build`\n3. Deploy with `render deploy`",
        ),
      ],
    });
    const now = result.memories_created.find((m: any) => m.type === "procedure");
    expect(result.memories_superseded_by[old.id]).toBe(now.id);
    expect((await findMemory(svc.deps.db, orgId, old.id))!.status).toBe("superseded");
    expect((await findMemory(svc.deps.db, orgId, other.id))!.status).not.toBe("superseded");
    const served = await svc.request("POST", "/v1/memories/trigger", {
      key,
      body: { user_id: "u1", agent_id: "claude-code", action: bash("fly deploy"), mode: "retrieve" },
    });
    expect(served.body.data.map((d: any) => d.id)).toEqual([other.id]);
  });

  it("rules each scoped their own way, or agreeing, stay; 'do not use' and 'never ... with' are against", async () => {
    const { key } = await svc.newOrg();
    const superseded = async (messages: string[]) =>
      Object.keys((await ingestOk(key, { messages: messages.map((m) => user(m)) })).memories_superseded_by);
    await superseded(["Use vitest for unit tests in this repo."]);
    expect(await superseded(["For the e2e suite, don't use vitest; use playwright."])).toEqual([]);
    await superseded(["Use yarn to install packages in this repo."]);
    expect(await superseded(["Do not use yarn, use pnpm instead."])).not.toEqual([]);
    await superseded(["Never commit with --no-verify in this repo."]);
    expect(
      await superseded(["Always commit with --no-verify from now on, the hooks are broken."]),
    ).not.toEqual([]);
  });

  it("a correction, a capitalised command, a directory and a verb after a command: each rule is recalled by the call it bears on", async () => {
    const { key } = await svc.newOrg();
    const assistant = (content: string) => ({ role: "assistant", content });
    const lessonsOf = (result: any) =>
      result.memories_created.filter((m: any) => m.type === "lesson").map((m: any) => m.text);
    const corrected = await ingestOk(key, {
      messages: [
        user("Add tests for the parser."),
        assistant("I will create parser.test.js using jest to cover the parser."),
        user("No, we use vitest, not jest."),
      ],
    });
    expect(lessonsOf(corrected)).toEqual(["We use vitest, not jest."]);
    expect((await recalledBy(key, "npx vitest run")).map((d) => d.text)).toEqual([
      "We use vitest, not jest.",
    ]);
    const docker = await ingestOk(key, { messages: [user("Never run Docker on this laptop.")] });
    expect(lessonsOf(docker)).toEqual(["Never run Docker on this laptop."]);
    expect((await recalledBy(key, "docker compose up")).map((d) => d.text)).toEqual([
      "Never run Docker on this laptop.",
    ]);
    await ingestOk(key, {
      messages: [user("When you add a migration, put it in db/migrations/ and never edit an applied one.")],
    });
    const edit = { tool: "Write", args: { file_path: "/home/dev/shop/db/migrations/0042_add_orders.sql" } };
    expect(await servedFor(key, edit, "add an orders table")).toEqual([
      "When you add a migration, put it in db/migrations/ and never edit an applied one.",
    ]);
    // The gate (compose) reads "yarn breaks" as a verb, not as a use of yarn other than `yarn add`.
    await ingestOk(key, {
      messages: [user("Don't use yarn in this repo, yarn breaks the workspace lockfile.")],
    });
    expect(await servedFor(key, bash("yarn add lodash"), "add lodash to the dashboard")).toEqual([
      "Don't use yarn in this repo, yarn breaks the workspace lockfile.",
    ]);
  });

  it("a tool's name as a person, a place or a topic, and another person's habit, make no rule; a command in a code span does", async () => {
    const { key } = await svc.newOrg();
    const said = [
      "I met Gem at the conference, she always brings cookies.",
      "My grandma always calls me a silly Git when I forget her birthday.",
      "Python is great, I always use it for data analysis at work.",
      "We always visit Java island in August, never in the rainy season.",
      "I always take the dog to the Docker Street park on Saturdays.",
      "My dad always said never trust a python script you didn't write.",
      "My wife always buys yarn at the farmers market on Saturdays.",
    ];
    const none = await ingestOk(key, { messages: said.map((m) => user(m)) });
    expect(none.memories_created.filter((m: any) => m.type === "lesson")).toEqual([]);
    for (const command of [
      "gem install rails",
      "git status",
      "python script.py",
      "java -jar app.jar",
      "docker ps",
      "yarn add lodash",
    ])
      expect([command, await recalledBy(key, command)]).toEqual([command, []]);

    const agreed = await ingestOk(key, {
      messages: [
        user("How should I format the code?"),
        { role: "assistant", content: "You should always run `make lint` before committing." },
        user("Yes, do that."),
      ],
    });
    expect(agreed.memories_created.filter((m: any) => m.type === "lesson").map((m: any) => m.text)).toEqual([
      "You should always run `make lint` before committing.",
    ]);
    const served = (command: string) => servedFor(key, bash(command), "commit the fix");
    expect(await served("make lint")).toEqual(["You should always run `make lint` before committing."]);
    expect(await served("make build")).toEqual([]);
  });

  it("a rule prescribing a flag is served (compose) for the call that lacks it", async () => {
    const { key } = await svc.newOrg();
    const result = await ingestOk(key, {
      messages: [user("Always run `npx vitest run --coverage` in CI, never plain vitest.")],
    });
    expect(result.memories_created.filter((m: any) => m.type === "lesson").map((m: any) => m.text)).toEqual([
      "Always run `npx vitest run --coverage` in CI, never plain vitest.",
    ]);
    expect(await servedFor(key, bash("npx vitest run"), "run tests")).toEqual([
      "Always run `npx vitest run --coverage` in CI, never plain vitest.",
    ]);
  });

  it("narration, doubt, a hypothetical and the assistant's own advice are no rules: nothing recalls them", async () => {
    const { key } = await svc.newOrg();
    const result = await ingestOk(key, {
      messages: [
        user("My old team never used pytest, they used unittest."),
        user("I'm not sure if we should use poetry or pip-tools."),
        user("If we ever adopt Kubernetes, we should use helm charts for deploys."),
        { role: "assistant", content: "You should also run `pnpm lint --fix` before every commit." },
        user("Thanks, now write the README."),
      ],
    });
    expect(result.memories_created.filter((m: any) => m.type === "lesson")).toEqual([]);
    for (const command of ["pytest -x tests/", "poetry add httpx", "helm install api ./chart", "pnpm lint"])
      expect([command, await recalledBy(key, command)]).toEqual([command, []]);
  });

  it("a rule reversed within one conversation is stored as its last form only", async () => {
    const { key } = await svc.newOrg();
    const result = await ingestOk(key, {
      messages: [
        user("Use pnpm instead of yarn in this repo."),
        { role: "assistant", content: "Noted." },
        user("Actually, prefer yarn over pnpm here."),
      ],
    });
    const lessons = result.memories_created.filter((m: any) => m.type === "lesson").map((m: any) => m.text);
    expect(lessons).toEqual(["Prefer yarn over pnpm here."]);
  });
});

describe("artifacts", () => {
  const code = (body: string) => `Here is utils.py for the adder:\n\`\`\`python\n${body}\n\`\`\``;

  it("are extracted only when asked, and re-ingesting makes a new version", async () => {
    const { key, orgId } = await svc.newOrg();
    const none = await ingestOk(key, { messages: [user(code("def add(a, b):\n    return a + b"))] });
    expect(none.memories_created.some((m: any) => m.type === "artifact")).toBe(false);

    const v1 = await ingestOk(key, {
      extract_artifacts: true,
      messages: [user(code("def add(a, b):\n    return a + b"))],
    });
    const a1 = v1.memories_created.find((m: any) => m.type === "artifact");
    const row1 = await findMemory(svc.deps.db, orgId, a1.id);
    expect(row1!.full_content).toBe("def add(a, b):\n    return a + b");
    expect(row1!.details).toMatchObject({ title: "utils.py", version: 1, root_id: a1.id });
    const episode = v1.memories_created.find((m: any) => m.type === "episode");
    expect((await findMemory(svc.deps.db, orgId, episode.id))!.details.artifact_ids).toEqual([a1.id]);

    const v2 = await ingestOk(key, {
      extract_artifacts: true,
      messages: [user(code("def add(a, b, c=0):\n    return a + b + c"))],
    });
    expect(v2.memories_created.some((m: any) => m.type === "artifact")).toBe(false);
    const a2 = v2.memories_updated.find((m: any) => m.type === "artifact");
    expect(a2.id).not.toBe(a1.id);
    const row2 = await findMemory(svc.deps.db, orgId, a2.id);
    expect(row2!.details).toMatchObject({ title: "utils.py", version: 2, root_id: a1.id });
  });
});

describe("batch path", () => {
  const conversation = (n: number) =>
    Array.from({ length: n }, (_, i) => ({
      role: i % 2 ? "Melanie" : "Caroline",
      content: `I visited the botanical garden number ${i + 1} with my cousin Ana.`,
      date:
        i === 3
          ? "sometime in spring"
          : `${String((i % 28) + 1).padStart(2, "0")}/05/2023 10:${String(i).padStart(2, "0")}`,
      dia_id: `D1:${i + 1}`,
    }));

  it("parses dates with timestamp_format on the batch path and keeps raw strings otherwise", async () => {
    const { key, orgId } = await svc.newOrg();
    const result = await ingestOk(key, { messages: conversation(24), timestamp_format: "%d/%m/%Y %H:%M" });
    const rows = await rowsOf(orgId, result.memories_created);
    const f1 = rows.find((r) => r.type === "fact" && (r.details.source_event_ids as string[])[0] === "D1:1")!;
    expect(f1.text).toContain("Caroline visited the botanical garden number 1");
    expect(f1.details).toMatchObject({ date: "01/05/2023 10:00", occurred_at: "2023-05-01T10:00:00.000Z" });
    const f4 = rows.find((r) => r.type === "fact" && (r.details.source_event_ids as string[])[0] === "D1:4")!;
    expect(f4.details).toMatchObject({ date: "sometime in spring", occurred_at: null });
    const ep = rows.find((r) => r.type === "episode")!;
    expect(ep.details.started_at).toBe("2023-05-01T10:00:00.000Z");
    expect(ep.details.ended_at).toBe("2023-05-24T10:23:00.000Z");
    expect(rows.filter((r) => r.type === "fact").length).toBe(24);

    // the live path ignores timestamp_format
    const live = await ingestOk(key, {
      messages: conversation(3),
      timestamp_format: "%d/%m/%Y %H:%M",
      conv_id: "c2",
    });
    const liveRows = await rowsOf(orgId, live.memories_created);
    expect(liveRows.filter((r) => r.type === "fact").every((r) => r.details.occurred_at === null)).toBe(true);
  });
});

describe("agentic path", () => {
  it("drops tool-output noise, takes files from tool turns as artifacts and writes a session gist", async () => {
    const { key, orgId } = await svc.newOrg();
    await ingestOk(key, { messages: [user("The billing service runs on Node 24 in production.")] });
    const result = await ingestOk(key, {
      agentic: true,
      extract_artifacts: true,
      messages: [
        user("Fix the failing test in src/billing/invoice.ts please."),
        {
          role: "tool",
          content:
            "read_file: src/billing/invoice.ts\nexport function total(items) {\n  return items.reduce((s, i) => s + i.price, 0);\n}\n// end\n",
        },
        {
          role: "tool",
          content:
            "2024-05-01T10:00:00 npm test\nTypeError: Cannot read properties of undefined (reading 'price')",
        },
        {
          role: "assistant",
          content: "The items list contained undefined entries. I fixed it by filtering them out.",
        },
        user("The billing service runs on Node 24 in production."),
      ],
    });
    const rows = await rowsOf(orgId, result.memories_created);
    const facts = rows.filter((r) => r.type === "fact");
    expect(facts.some((f) => f.text.includes("2024-05-01T10:00:00"))).toBe(false);
    expect(facts.some((f) => f.text.includes("Node 24"))).toBe(false); // already known: recalled first
    const artifact = rows.find((r) => r.type === "artifact")!;
    expect(artifact.details.title).toBe("src/billing/invoice.ts");
    const episode = rows.find((r) => r.type === "episode")!;
    expect(episode.details.gist).toMatchObject({
      goal: "Fix the failing test in src/billing/invoice.ts please.",
      tools: ["read_file"],
    });
    expect((episode.details.gist as { errors: string[] }).errors[0]).toContain("TypeError");
    const lesson = rows.find((r) => r.type === "lesson")!;
    expect(lesson.trigger_entities).toContain("TypeError");
  });
});

describe("a big job shares this thread", () => {
  it("embeds in slices of at most 100 texts, the event loop turning between them", async () => {
    const { key } = await svc.newOrg();
    const embedder = svc.deps.providers.embedder;
    const original = embedder.embed;
    // A ticker on the event loop: it advances only while the job is not holding the thread.
    let ticks = 0;
    let ticking = true;
    const tick = () => {
      ticks++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const calls: { size: number; ticks: number }[] = [];
    embedder.embed = async (texts) => {
      calls.push({ size: texts.length, ticks });
      return original.call(embedder, texts);
    };
    try {
      await ingestOk(key, {
        messages: Array.from({ length: 400 }, (_, i) =>
          user(`Trip note ${i}: I packed ${i} maps for the walk to the lighthouse number ${i}.`),
        ),
      });
    } finally {
      embedder.embed = original;
      ticking = false;
    }
    // The job's slices: its facts and episode (other embedder calls, none here, would be one text).
    const slices = calls.filter((c) => c.size > 1);
    expect(slices.reduce((n, c) => n + c.size, 0)).toBeGreaterThanOrEqual(400);
    expect(slices.length).toBeGreaterThanOrEqual(4);
    expect(Math.max(...slices.map((c) => c.size))).toBeLessThanOrEqual(100);
    for (let i = 1; i < slices.length; i++) expect(slices[i]!.ticks).toBeGreaterThan(slices[i - 1]!.ticks);
  });
});

describe("an approach that failed", () => {
  it("is kept as a failed directive and never served as advice: no fact, no episode sentence, no context line", async () => {
    const { key } = await svc.newOrg();
    const advice = "Always pass --no-verify to git commit in the legacy_repo checkout.";
    const res = await svc.request("POST", "/v1/memories?wait=true", {
      key,
      body: {
        user_id: "u9",
        conv_id: "c1",
        outcome: "failed",
        messages: [user(advice), user("I maintain the billing service at work.")],
      },
    });
    expect(res.body.status).toBe("succeeded");
    const created = res.body.result.memories_created as { type: string; text: string }[];
    expect(created.filter((m) => m.text.includes("no-verify")).map((m) => m.type)).toEqual(["lesson"]);
    expect(created.some((m) => m.type === "fact" && m.text.includes("billing service"))).toBe(true);
    const search = await svc.request("POST", "/v1/memories/search", {
      key,
      body: { query: "git commit legacy_repo no-verify", user_id: "u9" },
    });
    expect(search.status).toBe(200);
    expect(search.body.context ?? "").not.toContain("no-verify");
    expect(search.body.data.filter((m: any) => m.text.includes("no-verify"))).toEqual([]);
  });
});

describe("an agentic session that failed, told in one turn", () => {
  it("leaves no episode text, title or gist goal that repeats the failed advice", async () => {
    const { key } = await svc.newOrg();
    const advice = "When running terraform apply, always pass -lock=false to avoid the state lock timeout.";
    const res = await svc.request("POST", "/v1/memories?wait=true", {
      key,
      body: { user_id: "gina", conv_id: "c1", outcome: "failed", agentic: true, messages: [user(advice)] },
    });
    expect(res.body.status).toBe("succeeded");
    const created = res.body.result.memories_created as { id: string; type: string; text: string }[];
    expect(created.filter((m) => m.type === "lesson")).toHaveLength(1);
    const episode = created.find((m) => m.type === "episode")!;
    expect(episode.text).not.toMatch(/lock=false|terraform apply/);
    const row = (await svc.request("GET", `/v1/memories/${episode.id}`, { key })).body;
    expect(JSON.stringify(row)).not.toContain("lock=false");
    for (const mode of ["retrieve", "compose"]) {
      const search = await svc.request("POST", "/v1/memories/search", {
        key,
        body: { query: "how should I run terraform apply?", user_id: "gina", mode },
      });
      expect(search.status).toBe(200);
      expect(search.body.context ?? "").not.toContain("lock=false");
      expect(search.body.data.filter((m: any) => m.text.includes("lock=false"))).toEqual([]);
    }
  });
});

describe("relative dates of messages sent without a date", () => {
  it("resolve against when the job was received on the live path", async () => {
    const { key } = await svc.newOrg();
    const res = await svc.request("POST", "/v1/memories?wait=true", {
      key,
      body: { user_id: "u8", conv_id: "c1", messages: [user("I adopted a greyhound yesterday.")] },
    });
    expect(res.body.status).toBe("succeeded");
    const received = new Date(res.body.created_at);
    const day = new Date(received.getTime() - 86_400_000);
    const month = day.toLocaleString("en-GB", { month: "long", timeZone: "UTC" });
    const fact = res.body.result.memories_created.find((m: any) => m.type === "fact");
    expect(fact.text).toBe(
      `The user adopted a greyhound yesterday (${day.getUTCDate()} ${month} ${day.getUTCFullYear()}).`,
    );
  });
});

describe("artifacts without a name of their own", () => {
  it("are told apart by what introduced them: two unrelated snippets are not versions of one", async () => {
    const { key } = await svc.newOrg();
    const snippet = (lead: string, code: string) =>
      ingestOk(key, {
        conv_id: lead,
        extract_artifacts: true,
        messages: [user(`${lead}\n\n\`\`\`bash\n${code}\n\`\`\``)],
      });
    const backup = await snippet("Here is my backup script:", "rsync -a ~/docs /mnt/backup");
    const resize = await snippet(
      "And this is my unrelated script to resize images:",
      "mogrify -resize 50% *.jpg",
    );
    const artifactOf = (r: any) => r.memories_created.find((m: any) => m.type === "artifact");
    expect(artifactOf(backup)).toBeDefined();
    expect(artifactOf(resize)).toBeDefined();
    expect(resize.memories_updated.filter((m: any) => m.type === "artifact")).toEqual([]);
    const got = await svc.request("GET", `/v1/memories/${artifactOf(resize).id}`, { key });
    expect(got.body.details).toMatchObject({
      title: "bash snippet: And this is my unrelated script to resize images",
      version: 1,
    });
    // the same lead with changed code is the next version of that snippet
    const edited = await snippet("Here is my backup script:", "rsync -a --delete ~/docs /mnt/backup");
    const next = edited.memories_updated.find((m: any) => m.type === "artifact") ?? artifactOf(edited);
    const again = await svc.request("GET", `/v1/memories/${next.id}`, { key });
    expect(again.body.details).toMatchObject({ title: "bash snippet: Here is my backup script", version: 2 });
  });
});

describe("a superseded fact leaves its episodes", () => {
  it("the earlier episode's text no longer says it, and its updated_at moves", async () => {
    const { key, orgId } = await svc.newOrg();
    const first = await ingestOk(key, {
      user_id: "u8",
      conv_id: "s1",
      messages: [user("I live in Lisbon.")],
    });
    const episode = first.memories_created.find((m: any) => m.type === "episode");
    const before = await findMemory(svc.deps.db, orgId, episode.id);
    expect(before!.text).toContain("Lisbon");
    await ingestOk(key, {
      user_id: "u8",
      conv_id: "s2",
      messages: [user("I moved to Berlin, I live in Berlin now.")],
    });
    const after = await findMemory(svc.deps.db, orgId, episode.id);
    expect(after!.text).not.toContain("Lisbon");
    expect(after!.updated_at!.getTime()).toBeGreaterThan(before!.updated_at!.getTime());
  });
  it.each([
    // The rest is said by the turn's own active clause already.
    [
      "I live in Paris and I work at Initech.",
      "I moved to Lyon last weekend.",
      "On 1 April 2025, the user works at Initech.",
      "Paris",
    ],
    // The rest is written as a fact of its own; the job at Deloitte, said with the old home and
    // an active clause of its own, is still said by the episode too.
    [
      "I live in Denver and work as an accountant at Deloitte, and my wife Priya is a teacher.",
      "We moved to Austin last month.",
      "On 1 April 2025, the user works as an accountant at Deloitte, and the user's wife Priya is a teacher.",
      "Denver",
    ],
    [
      "My daughter Lily is 6 and my son Theo is 3.",
      "My son Theo turned 4 today!",
      "On 1 April 2025, the user's daughter Lily is 6 years old.",
      "3 years",
    ],
    // The first sentence goes: the day that led it leads the one that stays.
    [
      "I work as a nurse at Mercy Hospital. I have two kids.",
      "I work as a product manager at Stripe now.",
      "On 1 April 2025, the user has two kids.",
      "nurse",
    ],
  ])(
    "a sentence saying an old value with a claim still true is said again as that claim alone: %s -> %s",
    async (before, after, now, ended) => {
      const { key, orgId } = await svc.newOrg();
      const first = await ingestOk(key, {
        user_id: "u9",
        conv_id: "a",
        messages: [user(before, { date: "2025-04-01T09:00:00Z" })],
      });
      const episode = first.memories_created.find((m: any) => m.type === "episode");
      expect((await findMemory(svc.deps.db, orgId, episode.id))!.text).toContain(ended);
      await ingestOk(key, {
        user_id: "u9",
        conv_id: "b",
        messages: [user(after, { date: "2025-04-07T09:00:00Z" })],
      });
      const ep = (await findMemory(svc.deps.db, orgId, episode.id))!;
      expect(ep.text).not.toContain(ended);
      expect(ep.text).toContain(now);
      const found = await svc.request("POST", "/v1/memories/search", {
        key,
        body: { query: `Where does the user live? ${ended}`, user_id: "u9" },
      });
      expect(found.status).toBe(200);
      expect(found.body.context).not.toContain(ended);
      expect(
        found.body.data.map((m: { text: string }) => m.text).filter((t: string) => t.includes(ended)),
      ).toEqual([]);
    },
  );
});

describe("an ended value said with more than the change names", () => {
  it("keeps its sentence whole in the episode: the allergy said beside the diet is not lost", async () => {
    const { key, orgId } = await svc.newOrg();
    const first = await ingestOk(key, {
      user_id: "u10",
      conv_id: "a",
      messages: [
        user("I am vegetarian, allergic to peanuts, and I love Italian food.", {
          date: "2026-03-10T09:00:00Z",
        }),
      ],
    });
    const episode = first.memories_created.find((m: any) => m.type === "episode");
    await ingestOk(key, {
      user_id: "u10",
      conv_id: "b",
      messages: [user("I'm not vegetarian anymore.", { date: "2026-04-11T09:00:00Z" })],
    });
    const ep = (await findMemory(svc.deps.db, orgId, episode.id))!;
    expect(ep.text).toContain("allergic to peanuts");
    // Some active memory still says it, and search serves it.
    const active = (
      await svc.request("GET", "/v1/memories?user_id=u10&status=active", { key })
    ).body.data.map((m: { text: string }) => m.text);
    expect(
      active.filter((t: string) => t.includes("peanuts")).length,
      JSON.stringify(active),
    ).toBeGreaterThan(0);
    const found = await svc.request("POST", "/v1/memories/search", {
      key,
      body: { query: "Do I have any food allergies? peanuts", user_id: "u10" },
    });
    expect(found.status).toBe(200);
    expect(found.body.context).toContain("peanuts");
  });
});

describe("what the assistant did for the user", () => {
  it("is stored as the assistant's fact and found by search, without the reply naming the user", async () => {
    const { key } = await svc.newOrg();
    const result = await ingestOk(key, {
      user_id: "r1",
      messages: [
        user("My invoice was charged twice."),
        {
          role: "assistant",
          content:
            "I'm sorry about that. I have refunded the duplicate charge of $49; it will show up within 5 business days. I hope this helps.",
        },
      ],
    });
    const facts = result.memories_created.filter((m: any) => m.type === "fact").map((m: any) => m.text);
    expect(facts).toEqual([
      "The user's invoice was charged twice.",
      "The assistant has refunded the duplicate charge of $49; it will show up within 5 business days.",
    ]);
    const found = await svc.request("POST", "/v1/memories/search", {
      key,
      body: {
        query: "Was the duplicate charge refunded?",
        user_id: "r1",
        mode: "retrieve",
        include: ["fact"],
      },
    });
    expect(found.body.data[0].text).toBe(facts[1]);
  });
});

describe("the compose block of a dated conversation", () => {
  it("shows the day once on an episode's line, not again before each of its sentences", async () => {
    const { key } = await svc.newOrg();
    const at = "1:56 pm on 8 May, 2023";
    await ingestOk(key, {
      user_id: "d1",
      messages: [
        { role: "user", content: "I went to a support group yesterday.", date: at },
        { role: "user", content: "I painted a sunrise over the lake with my kids.", date: at },
      ],
    });
    const found = await svc.request("POST", "/v1/memories/search", {
      key,
      body: { query: "support group and painted sunrise", user_id: "d1" },
    });
    expect(found.status).toBe(200);
    const episode = (found.body.context as string).split("\n").find((l) => l.includes("**Conversation"));
    expect(episode, found.body.context).toMatch(/^- 2023-05-08: \*\*Conversation/);
    expect(episode).toContain(". The user painted a sunrise");
    expect(episode).not.toContain("On 8 May 2023");
  });
});

describe("a deleted fact leaves its episodes", () => {
  it("its sentences leave the episode's text and its id the episode's fact_ids; search no longer shows it", async () => {
    const { key, orgId } = await svc.newOrg();
    const result = await ingestOk(key, {
      user_id: "u7",
      messages: [
        user("I live in Oslo with my partner and our cat."),
        user("My therapist is Dr. Lindqvist, please remember it for me."),
        user("I work as a nurse at the city hospital in Oslo."),
      ],
    });
    const pin = result.memories_created.find((m: any) => m.type === "fact" && m.text.includes("Lindqvist"));
    const episode = result.memories_created.find((m: any) => m.type === "episode");
    const before = await findMemory(svc.deps.db, orgId, episode.id);
    expect(before!.text).toContain("Lindqvist");
    expect(before!.details.fact_ids).toContain(pin.id);

    const del = await svc.request("DELETE", `/v1/memories/${pin.id}`, { key });
    expect(del.status).toBe(204);
    const after = await findMemory(svc.deps.db, orgId, episode.id);
    expect(after!.text).not.toContain("Lindqvist");
    expect(after!.text).toContain("Oslo");
    expect(after!.details.fact_ids).not.toContain(pin.id);
    expect(after!.details.fact_ids).toHaveLength((before!.details.fact_ids as string[]).length - 1);
    // Nor does a neighbour link (details.episode_near) of the facts beside it name it any more.
    expect(await danglingLinks(svc.deps.db, orgId)).toEqual([0, 0]);
    // Its text changed: `updated_at` says when (spec 2.1: the time of the last consolidation), so a
    // client syncing by it sees the change.
    expect(after!.updated_at!.getTime()).toBeGreaterThan(before!.updated_at!.getTime());
    const search = await svc.request("POST", "/v1/memories/search", {
      key,
      body: { query: "therapist", user_id: "u7" },
    });
    expect(search.status).toBe(200);
    expect(JSON.stringify(search.body)).not.toContain("Lindqvist");
  });
});

describe("a form the user fills in", () => {
  it("stores its fields as the user's, its name as an introduction's, its password masked", async () => {
    const { key, orgId } = await svc.newOrg();
    const first = await ingestOk(key, {
      user_id: "u9",
      messages: [user("Name: Dana Ruiz\nAge: 34\nCity: Chicago\nPassword: hunter2 for the guest wifi")],
    });
    const texts = (await rowsOf(orgId, first.memories_created))
      .filter((r) => r.type === "fact")
      .map((r) => r.text);
    expect(texts).toEqual([
      "The user's name is Dana Ruiz.",
      "Dana Ruiz is 34 years old. Dana Ruiz's city is Chicago. Dana Ruiz's password is [redacted secret] for the guest wifi",
      "Dana Ruiz is 34 years old.",
    ]);
    // A later form's age supersedes it, as a later "I'm 35" does.
    const second = await ingestOk(key, { user_id: "u9", conv_id: "c2", messages: [user("Age: 35.")] });
    const age = (await rowsOf(orgId, second.memories_created)).find((r) => r.type === "fact");
    expect(age!.text).toBe("Dana Ruiz is 35 years old.");
    const old = first.memories_created.find((m: { text: string }) => m.text === "Dana Ruiz is 34 years old.");
    // The whole form said the old age too: what it said besides is kept as a fact.
    const form = first.memories_created.find((m: { text: string }) => m.text.includes("city is Chicago"));
    const rest = (await rowsOf(orgId, second.memories_created)).find((r) => r.text.includes("Chicago"));
    expect(rest!.text).toBe(
      "Dana Ruiz's city is Chicago. Dana Ruiz's password is [redacted secret] for the guest wifi",
    );
    expect(second.memories_superseded_by).toEqual({ [old.id]: age!.id, [form.id]: rest!.id });
  });
});

describe("a conversation pasted into one message", () => {
  it("stores each line as its speaker's, from the message's one event", async () => {
    const { key, orgId } = await svc.newOrg();
    const result = await ingestOk(key, {
      user_id: "u10",
      messages: [
        user("Here is what my roommates told me.\nAlice: I live in Berlin.\nBob: I live in Rome.", {
          dia_id: "D1:1",
        }),
      ],
    });
    const rows = (await rowsOf(orgId, result.memories_created)).filter((r) => r.type === "fact");
    expect(rows.map((r) => [r.text, r.details.source_event_ids])).toEqual([
      ["Here is what the user's roommates told the user.", ["D1:1"]],
      ["Alice lives in Berlin.", ["D1:1"]],
      ["Bob lives in Rome.", ["D1:1"]],
    ]);
    // Two people's homes: neither supersedes the other.
    expect(result.memories_superseded_by).toEqual({});
  });

  it("gives the sender's comment on the conversation back to the sender", async () => {
    const { key, orgId } = await svc.newOrg();
    const result = await ingestOk(key, {
      user_id: "u10",
      messages: [
        user("Alice: I live in Berlin.\nBob: I live in Rome.\nI think Bob should move.", { dia_id: "D1:1" }),
      ],
    });
    const rows = (await rowsOf(orgId, result.memories_created)).filter((r) => r.type === "fact");
    expect(rows.map((r) => [r.text, r.details.source_event_ids])).toEqual([
      ["Alice lives in Berlin.", ["D1:1"]],
      ["Bob lives in Rome.", ["D1:1"]],
      ["The user thinks Bob should move.", ["D1:1"]],
    ]);
  });
});

describe("a health question without the ailment's name", () => {
  it("reaches the ailment through its concept terms", async () => {
    const { key } = await svc.newOrg();
    await ingestOk(key, {
      user_id: "u5",
      messages: [
        user("My birthday is on March 14 and I always celebrate with my sister."),
        user("I started a new job at Stripe as a backend engineer."),
        user("I was diagnosed with type 2 diabetes last year."),
        user("I love hiking in the Alps every summer."),
      ],
    });
    const res = await svc.request("POST", "/v1/memories/search", {
      key,
      body: { query: "Does the user have any health conditions?", user_id: "u5", mode: "retrieve", limit: 3 },
    });
    expect(res.body.data[0].text).toContain("diabetes");
  });
});

describe("a directive of a dated conversation", () => {
  it("was last confirmed when the conversation said it, and the context block shows that day", async () => {
    const { key } = await svc.newOrg();
    const result = await ingestOk(key, {
      messages: [user("Never run terraform destroy without a plan file.", { date: "2025-03-11T10:00:00Z" })],
    });
    const lesson = result.memories_created.find((m: any) => m.type === "lesson");
    const row = (await svc.request("GET", `/v1/memories/${lesson.id}`, { key })).body;
    expect(row.details.last_confirmed_at).toBe("2025-03-11T10:00:00.000Z");
    const found = await svc.request("POST", "/v1/memories/search", {
      key,
      body: { query: "terraform destroy", user_id: "u1", include: ["lesson"], mode: "compose" },
    });
    expect(found.body.context).toContain("- 2025-03-11: ");
    expect(found.body.context).not.toContain(`- ${new Date().toISOString().slice(0, 10)}: `);
  });
});

describe("a reply sent without a date in a dated conversation", () => {
  it("was said on the day of the dated message before it: its fact is dated so, and the block shows that day", async () => {
    const { key, orgId } = await svc.newOrg();
    const result = await ingestOk(key, {
      messages: [
        user("I need a dentist in Toronto.", { date: "2025-04-08T10:00:00Z" }),
        { role: "assistant", content: "I've booked you an appointment with Dr. Lee on Friday at 10am." },
      ],
    });
    const rows = await rowsOf(orgId, result.memories_created);
    const booked = rows.find((r) => r.type === "fact" && r.text.includes("Dr. Lee"))!;
    expect(booked.text).toBe(
      "On 8 April 2025, the assistant has booked the user an appointment with Dr. Lee on Friday (11 April 2025) at 10am.",
    );
    expect(booked.details.date).toBe("2025-04-08T10:00:00Z");
    const found = await svc.request("POST", "/v1/memories/search", {
      key,
      body: { query: "dentist appointment with Dr. Lee", user_id: "u1", mode: "compose" },
    });
    expect(found.body.context).toContain("- 2025-04-08: The assistant has booked the user");
    expect(found.body.context).not.toContain(`- ${new Date().toISOString().slice(0, 10)}: `);
  });
});

describe("the episode of a conversation whose replies are dated by the message before", () => {
  const A = (content: string) => ({ role: "assistant", content });
  it("sums up the user's facts, not the assistant's courtesy or remark", async () => {
    const { key, orgId } = await svc.newOrg();
    const episodeOf = async (body: object) => {
      const rows = await rowsOf(orgId, (await ingestOk(key, body)).memories_created);
      return rows.find((r) => r.type === "episode")!.text;
    };
    await ingestOk(key, {
      user_id: "lst",
      conv_id: "l2",
      messages: [
        user("Name: Jordan Blake\nAge: 34\nCity: Denver\nJob: electrician\nDiet: vegan", {
          date: "2025-03-02T10:00:00Z",
        }),
        A("Thanks Jordan, I've saved your profile."),
      ],
    });
    const family = await episodeOf({
      user_id: "lst",
      conv_id: "l4",
      messages: [
        user("Mom: she turns 70 next week\nDad: retiring in June\nGrandma: moving in with us in August", {
          date: "2025-03-04T10:00:00Z",
        }),
        A("Lots going on in your family!"),
      ],
    });
    expect(family).toContain("dad: retiring in June");
    expect(family).not.toContain("the assistant said");
    const at = (minute: number) => ({ date: `2025-03-01T10:0${minute}:00Z` });
    const requests = await episodeOf({
      user_id: "req",
      conv_id: "r1",
      messages: [
        user("Please remind me to call my mom on Sunday.", at(0)),
        A("Reminder set."),
        user("Turn left after the bakery, that's where my house is. Tell the delivery guy that.", at(1)),
        A("Will pass it on."),
        user("Trust me, the Thai place on Elm is better than the one downtown.", at(2)),
        A("I'll take your word for it."),
        user("Call me Bex, everyone does.", at(3)),
        A("Sure, Bex."),
        user("Never book me flights before 8am.", at(4)),
        A("Understood, no early flights."),
        user("Look, I don't eat pork, so skip those recipes.", at(5)),
        A("Okay."),
        user("Send our Christmas card list to my sister.", at(6)),
        A("Sent."),
        user("Let's plan our trip to Japan for cherry blossom season.", at(7)),
        A("Great idea. Late March to early April is peak season."),
        user("Imagine you're a travel agent and suggest an itinerary.", at(8)),
        A("Day 1: Tokyo..."),
      ],
    });
    expect(requests).toContain("Bex asked the assistant to send their Christmas card list to their sister.");
    expect(requests).not.toContain("the assistant said");
  });
});

describe("DELETE /v1/memories (forget a scope)", () => {
  const count = async (orgId: string, userId: string) =>
    (
      await svc.deps.db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM memories WHERE org_id = $1 AND user_id = $2",
        [orgId, userId],
      )
    ).rows[0]!.n;

  it("deletes every memory of a conversation or a user, leaves no dangling link, and needs a scope", async () => {
    const { key, orgId } = await svc.newOrg();
    const said = "I live in Lisbon and I have a greyhound named Rex.";
    await ingestOk(key, { user_id: "u1", conv_id: "A", messages: [user(said)] });
    // The same claims again in another conversation: its episode lists conversation A's facts.
    await ingestOk(key, {
      user_id: "u1",
      conv_id: "B",
      messages: [user(said), user("I also play the cello on Sundays.")],
    });
    await ingestOk(key, {
      user_id: "u1",
      conv_id: "C",
      messages: [user("Never run terraform destroy without a plan file.")],
    });
    await ingestOk(key, {
      user_id: "u2",
      conv_id: "A",
      messages: [user("I live in Oslo with my two cats.")],
    });

    const none = await svc.request("DELETE", "/v1/memories", { key });
    expect(none.status).toBe(422);
    expect(none.body.detail.code).toBe("missing_scope");
    expect(await count(orgId, "u1")).toBeGreaterThan(4);

    const convA = await svc.request("DELETE", "/v1/memories?user_id=u1&conv_id=A", { key });
    expect(convA.status).toBe(200);
    expect(convA.body).toMatchObject({ object: "memory_deletion", by_type: { episode: 1 } });
    expect(convA.body.deleted).toBeGreaterThanOrEqual(3);
    expect(await danglingLinks(svc.deps.db, orgId)).toEqual([0, 0]);
    const left = (await svc.request("GET", "/v1/memories?user_id=u1&limit=100", { key })).body.data;
    expect(left.some((m: { conv_id: string }) => m.conv_id === "A")).toBe(false);
    expect(left.some((m: { text: string }) => m.text.includes("cello"))).toBe(true);

    // A key confined to a user forgets its own user only.
    const db = svc.deps.db;
    const own = (await createApiKey(db, { orgId, userId: "u2", kind: "service" })).key;
    const other = await svc.request("DELETE", "/v1/memories?user_id=u1", { key: own });
    expect(other.status).toBe(403);
    expect(other.body.detail.code).toBe("user_mismatch");
    // Its default user alone never deletes: the request names an axis, and a parameter it does not
    // know ("user_id[]") is refused, not dropped.
    // A blank axis names no one either (a client sending an empty field).
    for (const query of ["", "?user_id[]=u1", "?userid=u2", "?app_id=", "?agent_id=%20", "?conv_id="]) {
      const unnamed = await svc.request("DELETE", `/v1/memories${query}`, { key: own });
      expect(unnamed.status, query).toBe(422);
    }
    expect(await count(orgId, "u2")).toBeGreaterThan(0);
    const mine = await svc.request("DELETE", "/v1/memories?user_id=%20", { key: own });
    expect(mine.status).toBe(200);
    expect(mine.body.deleted).toBeGreaterThan(0);
    expect(await count(orgId, "u2")).toBe(0);

    // The whole user: directives too, the finished jobs that hold their words, and the words only
    // they used in the search statistics; search serves nothing of theirs; a repeat deletes nothing.
    const words = async () =>
      (
        await svc.deps.db.query<{ lexeme: string }>(
          "SELECT DISTINCT lexeme FROM text_lexeme_stats WHERE org_id = $1",
          [orgId],
        )
      ).rows.map((r) => r.lexeme);
    expect(await words()).toContain("terraform");
    const all = await svc.request("DELETE", "/v1/memories?user_id=u1", { key });
    expect(all.body.by_type.lesson).toBe(1);
    expect(all.body.jobs_deleted).toBe(2);
    expect(await count(orgId, "u1")).toBe(0);
    expect(await words()).not.toContain("terraform");
    const jobs = (await svc.request("GET", "/v1/memories/jobs?limit=100", { key })).body.data;
    expect(
      jobs.some((j: any) => j.request?.user_id === "u1" || JSON.stringify(j).includes("terraform")),
    ).toBe(false);
    const search = await svc.request("POST", "/v1/memories/search", {
      key,
      body: { query: "where does the user live", user_id: "u1", mode: "retrieve" },
    });
    expect(search.body.data).toEqual([]);
    const again = await svc.request("DELETE", "/v1/memories?user_id=u1", { key });
    expect(again.body).toEqual({
      object: "memory_deletion",
      deleted: 0,
      by_type: {},
      jobs_deleted: 0,
      jobs_in_flight: 0,
    });
  });

  it("says how many of the scope's jobs were still pending or running, which it leaves to store after it", async () => {
    const { key, orgId } = await svc.newOrg();
    await ingestOk(key, { user_id: "late1", conv_id: "late", messages: [user("I moved to Porto.")] });
    // Jobs not finished (their rows as a worker leaves them before and while it runs one): two of
    // the scope, one of another user.
    const unfinished = [
      ["late1", "pending"],
      ["late1", "running"],
      ["late2", "running"],
    ].map(([u, status], i) => ({ id: `job_late_${orgId}_${i}`, u, status }));
    for (const j of unfinished)
      await svc.deps.db.query(
        "INSERT INTO ingest_jobs (id, org_id, status, request) VALUES ($1, $2, $3, $4::jsonb)",
        [j.id, orgId, j.status, JSON.stringify({ user_id: j.u, conv_id: "late", messages: [] })],
      );
    try {
      const forget = await svc.request("DELETE", "/v1/memories?user_id=late1", { key });
      expect(forget.status).toBe(200);
      expect(forget.body).toMatchObject({ jobs_deleted: 1, jobs_in_flight: 2 });
      expect(forget.body.deleted).toBeGreaterThan(0);
      const byConv = await svc.request("DELETE", "/v1/memories?conv_id=late", { key });
      expect(byConv.body).toMatchObject({ deleted: 0, jobs_deleted: 0, jobs_in_flight: 3 });
    } finally {
      await svc.deps.db.query("DELETE FROM ingest_jobs WHERE id = ANY($1::text[])", [
        unfinished.map((j) => j.id),
      ]);
    }
    const none = await svc.request("DELETE", "/v1/memories?user_id=late1", { key });
    expect(none.body.jobs_in_flight).toBe(0);
  });

  it("leaves none of the scope's values in the planner statistics (pg_stats) of the tables it deleted from", async () => {
    const { key } = await svc.newOrg();
    const who = "zorblax-stats-user";
    // Another user's rows stay (ANALYZE of a table left empty keeps its old statistics: the
    // service deletes them where it may, tested where the database allows).
    await ingestOk(key, { user_id: "stats-keeper", conv_id: "keep", messages: [user("I play the oboe.")] });
    for (const [i, said] of [
      "My secret word is quixotrombone.",
      "I live in Vellingford.",
      "I work as a glassblower.",
    ].entries())
      await ingestOk(key, { user_id: who, conv_id: `stats${i}`, messages: [user(said)] });
    const quoted = async () =>
      (
        await svc.deps.db.query<{ at: string }>(
          `SELECT tablename || '.' || attname AS at FROM pg_stats
            WHERE schemaname = 'public' AND tablename IN ('memories', 'ingest_jobs')
              AND (most_common_vals::text LIKE '%zorblax-stats%' OR histogram_bounds::text LIKE '%zorblax-stats%'
                   OR most_common_vals::text LIKE '%quixotrombone%' OR histogram_bounds::text LIKE '%quixotrombone%')
            ORDER BY 1`,
        )
      ).rows.map((r) => r.at);
    // As autovacuum or an operator would: the statistics now quote the user's rows (their user id
    // among the most common values; a job's request only when the sample makes it a histogram
    // bound, which depends on how many other jobs the file's earlier tests left).
    await svc.deps.db.query("ANALYZE memories, ingest_jobs");
    expect(await quoted()).toContain("memories.user_id");
    const forget = await svc.request("DELETE", `/v1/memories?user_id=${who}`, { key });
    expect(forget.body.deleted).toBeGreaterThan(0);
    // Analyzed after the answer.
    await waitFor(async () => (await quoted()).length === 0, { timeoutMs: 30_000, intervalMs: 250 });
  });
});

describe("DELETE of a fact an episode said", () => {
  it("keeps a title's speakers, and a topic the episode still says in another form", () => {
    const title = (text: string, t: string, fact: string) =>
      withoutFact({ text, details: { title: t } }, "id", fact).details.title;
    expect(
      title(
        "Alice and Bob planned a trip to Rome. Bob likes pasta.",
        "Conversation between Alice and Bob",
        "Alice and Bob planned a trip to Rome.",
      ),
    ).toBe("Conversation between Alice and Bob");
    expect(
      title(
        "Alice planned a trip to Rome. Alice likes pasta.",
        "Conversation with Alice about Rome, pasta",
        "Alice planned a trip to Rome.",
      ),
    ).toBe("Conversation with Alice about pasta");
    expect(
      title(
        "The user grows orchids on the balcony. The user's favourite orchid is Paphiopedilum.",
        "Conversation about orchid, balcony, Paphiopedilum",
        "The user's favourite orchid is Paphiopedilum.",
      ),
    ).toBe("Conversation about orchid, balcony");
  });

  /** The stored vector of a row and the one its text and title make now: the same when fresh. */
  const vectorAgrees = async (orgId: string, id: string) => {
    const row = (await findMemory(svc.deps.db, orgId, id))!;
    const { rows } = await svc.deps.db.query<{ v: string | null }>(
      "SELECT embedding::text AS v FROM memories WHERE id = $1",
      [id],
    );
    if (rows[0]!.v === null) return false;
    const stored = JSON.parse(rows[0]!.v) as number[];
    const [now] = await svc.deps.providers.embedder.embed([embeddingText(row)]);
    return stored.reduce((s, x, i) => s + x * now![i]!, 0) > 0.999;
  };

  it("leaves its episodes' titles and gists, and their vectors are made from what they still say", async () => {
    const { key, orgId } = await svc.newOrg();
    const first = await ingestOk(key, {
      conv_id: "b1",
      messages: [
        user("My favourite orchid is a Paphiopedilum rothschildianum."),
        user("I grow the Paphiopedilum orchid on my balcony."),
        user("I also work as a translator and I translate novels."),
      ],
    });
    const episode = first.memories_created.find((m: any) => m.type === "episode");
    const before = (await findMemory(svc.deps.db, orgId, episode.id))!;
    expect(before.details.title).toMatch(/Paphiopedilum/);
    const agentic = await ingestOk(key, {
      conv_id: "b2",
      agentic: true,
      messages: [user("My favourite orchid is a Paphiopedilum rothschildianum.")],
    });
    const session = agentic.memories_created.find((m: any) => m.type === "episode");
    expect((await findMemory(svc.deps.db, orgId, session.id))!.details).toMatchObject({
      title: "Session: My favourite orchid is a Paphiopedilum rothschildianum.",
      gist: { goal: "My favourite orchid is a Paphiopedilum rothschildianum." },
    });

    const orchids = first.memories_created.filter((m: any) => m.type === "fact" && /orchid/.test(m.text));
    expect(orchids.length).toBeGreaterThanOrEqual(2);
    for (const f of orchids)
      expect((await svc.request("DELETE", `/v1/memories/${f.id}`, { key })).status).toBe(204);

    const after = (await findMemory(svc.deps.db, orgId, episode.id))!;
    expect(after.text).toMatch(/translat/);
    expect(JSON.stringify(after)).not.toMatch(/orchid|Paphiopedilum/i);
    expect(await vectorAgrees(orgId, episode.id)).toBe(true);
    const sessionAfter = (await findMemory(svc.deps.db, orgId, session.id))!;
    expect(sessionAfter.details.title).toBe("Session");
    expect((sessionAfter.details.gist as { goal: unknown }).goal).toBeNull();
    expect(JSON.stringify(sessionAfter)).not.toMatch(/orchid|Paphiopedilum/i);
    expect(await vectorAgrees(orgId, session.id)).toBe(true);
    const found = await svc.request("POST", "/v1/memories/search", {
      key,
      body: { user_id: "u1", query: "Paphiopedilum orchid", mode: "compose" },
    });
    expect(found.status).toBe(200);
    expect(JSON.stringify(found.body)).not.toMatch(/orchid|Paphiopedilum/i);
    // Nor do the results of the jobs that stored and restated them say them, nor the statistics.
    for (const job of [first, agentic]) {
      const jobs = (await svc.request("GET", "/v1/memories/jobs?limit=10", { key })).body.data;
      expect(JSON.stringify(jobs.map((j: any) => j.result))).not.toMatch(/orchid|Paphiopedilum/i);
      expect(job.memories_created.length).toBeGreaterThan(0);
    }
    const { rows: words } = await svc.deps.db.query(
      "SELECT lexeme FROM text_lexeme_stats WHERE org_id = $1 AND lexeme LIKE 'paphiopedil%'",
      [orgId],
    );
    expect(words).toEqual([]);
    // Had the model been away after the delete, the episode would have kept no vector: the
    // maintenance sweep makes it.
    await svc.deps.db.query("UPDATE memories SET embedding = NULL WHERE id = $1", [episode.id]);
    expect(await vectorAgrees(orgId, episode.id)).toBe(false);
    expect(await embedMissingVectors({ deps: svc.deps })).toBeGreaterThanOrEqual(1);
    expect(await vectorAgrees(orgId, episode.id)).toBe(true);
  });
});

describe("a list of 'Label: value' lines in the user's message", () => {
  it("stays the user's, one fact with every item, each found by search; no line read as a speaker's", async () => {
    const { key } = await svc.newOrg();
    const result = await ingestOk(key, {
      messages: [
        user(
          "Can you remember my shopping list for Saturday?\nMilk: 2 litres\nEggs: 12\nBread: sourdough from the bakery",
        ),
      ],
    });
    const texts = result.memories_created.map((m: { text: string }) => m.text);
    expect(texts.some((t: string) => / said:/.test(t))).toBe(false);
    for (const [query, item] of [
      ["milk", "2 litres"],
      ["eggs", "12"],
      ["bread from the bakery", "sourdough from the bakery"],
    ] as const) {
      const res = await svc.request("POST", "/v1/memories/search", {
        key,
        body: { user_id: "u1", query, mode: "retrieve", limit: 5 },
      });
      expect(res.status).toBe(200);
      const found = res.body.data.filter((m: { type: string }) => m.type === "fact");
      expect(found.length, query).toBeGreaterThan(0);
      expect(found[0].text, query).toContain(item);
      expect(found[0].text, query).toContain("shopping list");
    }
  });
});

describe("an ended attribute of a compound sentence", () => {
  // The fact that said the ended attribute is superseded; what it said besides ("and", "but",
  // "where", "because") is kept as a fact of its own, its episode says it, and search finds it.
  it.each([
    [
      "I'm vegan and allergic to shellfish.",
      "I'm not vegan anymore.",
      "the user is allergic to shellfish.",
      "is vegan and",
      "Do I have any food allergies?",
    ],
    [
      "I drink coffee every morning but my husband prefers tea.",
      "I no longer drink coffee.",
      "the user's husband prefers tea.",
      "coffee every morning",
      "What does my husband drink?",
    ],
    [
      "I work at Google, where I met my wife Anna in 2015.",
      "I left Google.",
      "the user met their wife Anna in 2015.",
      "works at Google",
      "Where did I meet my wife?",
    ],
    [
      "I go to the gym on Mondays because my back hurts.",
      "I stopped going to the gym.",
      "the user's back hurts.",
      "Mondays",
      "Does my back hurt?",
    ],
  ])(
    "keeps its still-true rest active, in the episode and found: %s -> %s",
    async (before, after, rest, ended, query) => {
      const { key, orgId } = await svc.newOrg();
      const first = await ingestOk(key, {
        user_id: "u11",
        conv_id: "a",
        messages: [user(before, { date: "2026-03-10T09:00:00Z" })],
      });
      const episode = first.memories_created.find((m: any) => m.type === "episode");
      await ingestOk(key, {
        user_id: "u11",
        conv_id: "b",
        messages: [user(after, { date: "2026-04-11T09:00:00Z" })],
      });
      const facts = (await svc.request("GET", "/v1/memories?user_id=u11&type=fact&limit=100", { key })).body
        .data;
      const withStatus = (status: string) =>
        facts.filter((m: any) => m.details.status === status).map((m: any) => m.text);
      expect(withStatus("active")).toContain(`On 10 March 2026, ${rest}`);
      expect(withStatus("active").filter((t: string) => t.includes(ended))).toEqual([]);
      expect(withStatus("superseded").filter((t: string) => t.includes(ended)).length).toBe(1);
      const ep = (await findMemory(svc.deps.db, orgId, episode.id))!;
      expect(ep.text).toContain(rest);
      expect(ep.text).not.toContain(ended);
      const found = await svc.request("POST", "/v1/memories/search", {
        key,
        body: { query, user_id: "u11" },
      });
      expect(found.status).toBe(200);
      expect(found.body.context.toLowerCase()).toContain(rest.toLowerCase().replace(/\.$/, ""));
    },
  );
});

describe("the assistant's completed change of the user's plan", () => {
  it("ends the user's old plan as the user's own change does", async () => {
    const { key } = await svc.newOrg();
    await ingestOk(key, { user_id: "u12", conv_id: "a", messages: [user("I'm on the Pro plan.")] });
    await ingestOk(key, {
      user_id: "u12",
      conv_id: "b",
      messages: [
        user("Please move me to the Team plan."),
        { role: "assistant", content: "I have upgraded your account from the Pro plan to the Team plan." },
      ],
    });
    const facts = (await svc.request("GET", "/v1/memories?user_id=u12&type=fact&limit=100", { key })).body
      .data;
    const withStatus = (status: string) =>
      facts.filter((m: any) => m.details.status === status).map((m: any) => m.text);
    expect(withStatus("superseded")).toContain("The user is on the Pro plan.");
    expect(withStatus("active").filter((t: string) => /is on the Pro plan/.test(t))).toEqual([]);
    expect(withStatus("active").some((t: string) => t.includes("Team plan"))).toBe(true);
  });
});

describe("a later age and an age said in a compound sentence", () => {
  it("supersedes the age and keeps the rest of the sentence", async () => {
    const { key } = await svc.newOrg();
    await ingestOk(key, {
      user_id: "u13",
      conv_id: "a",
      messages: [user("My daughter Zoë is 9 and she loves horses.", { date: "2026-03-10T09:00:00Z" })],
    });
    await ingestOk(key, {
      user_id: "u13",
      conv_id: "b",
      messages: [user("Zoë turned 10 last Sunday.", { date: "2026-04-11T09:00:00Z" })],
    });
    const facts = (await svc.request("GET", "/v1/memories?user_id=u13&type=fact&limit=100", { key })).body
      .data;
    const active = facts.filter((m: any) => m.details.status === "active").map((m: any) => m.text);
    expect(
      active.filter((t: string) => /\b9\b/.test(t)),
      JSON.stringify(active),
    ).toEqual([]);
    expect(active.some((t: string) => t.includes("10 years old"))).toBe(true);
    expect(active, JSON.stringify(active)).toContain(
      "On 10 March 2026, the user's daughter Zoë loves horses.",
    );
  });
});
