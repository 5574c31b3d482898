import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertMemoryRows } from "../src/db/memories.js";
import type { MemoryRow } from "../src/db/memory-row.js";
import { newMemoryId } from "../src/ids.js";
import {
  factsBeforeTheirEpisode,
  sessionsThatMatch,
  withinOne,
  withLinkedFacts,
} from "../src/search/linked.js";
import { rerank } from "../src/search/rerank.js";
import { asksForSeveral } from "../src/search/several.js";
import { preferNamedSpeaker, preferTheUserThemself } from "../src/search/speaker.js";
import { namedDay, preferDated, preferNamedDay, withNamedDay } from "../src/search/temporal.js";
import { startTestService, type TestService } from "./helpers/harness.js";

/** A ranked fact of an episode. */
const factOf = (id: string, score: number, episode_id: string) => ({
  row: { id, type: "fact", text: id, details: { episode_id } } as unknown as MemoryRow,
  score,
});

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.stop();
});

describe("linked facts (one hop through the episode)", () => {
  it("adds the facts next to a top hit, scored below it, within the scope", async () => {
    const { key } = await svc.newOrg();
    const ingest = (user_id: string, messages: unknown[]) =>
      svc.request("POST", "/v1/memories?wait=true", { key, body: { user_id, conv_id: "c1", messages } });
    const messages = [
      { role: "Ana", content: "My sister Mia moved to Valparaiso with her partner last year." },
      { role: "Ben", content: "How is she finding it there?" },
      { role: "Ana", content: "She loves it and just opened a small bakery near the harbour." },
      { role: "Ben", content: "I finally repaired the old bicycle in my garage this weekend." },
    ];
    expect((await ingest("u1", messages)).body.status).toBe("succeeded");
    expect((await ingest("u2", messages)).body.status).toBe("succeeded");
    const res = await svc.request("POST", "/v1/memories/search", {
      key,
      body: {
        query: "Which city did Mia move to?",
        user_id: "u1",
        mode: "retrieve",
        limit: 10,
        include: ["fact"],
      },
    });
    expect(res.status).toBe(200);
    const rows = res.body.data as { text: string; score: number; user_id: string }[];
    expect(rows.every((r) => r.user_id === "u1")).toBe(true);
    const hit = rows.findIndex((r) => r.text.includes("Valparaiso"));
    const next = rows.findIndex((r) => r.text.includes("bakery"));
    expect(hit).toBe(0);
    // The next turn shares no word with the query: it ranks second through the hit, below it.
    expect(next).toBe(1);
    // Ana's own next turn (two places on, Ben's between): one step, 0.6 of the hit.
    expect(rows[next]!.score).toBe(Math.round(rows[hit]!.score * 0.6 * 1e6) / 1e6);
  });

  it("are left out for questions asking for several things", () => {
    const several = [
      "What books has John read?",
      "Which cities has she been to?",
      "What kind of films does Joanna enjoy?",
      "What board games has Nate played?",
      "How many children does Melanie have?",
      "What do Jon and Gina both like?",
      // A modifier with a hyphen, plus or slash; an irregular plural; a prepositional phrase; "is".
      "What family-friendly restaurants has Ana tried?",
      "What indie/folk bands has Ben seen live?",
      "What people has Ana met at the club?",
      "What kinds of bread have Ana and her son baked?",
      "What charities for children does Ben support?",
      "What trips is Ana planning this summer?",
      // The present perfect of what someone has done over time.
      "What has Ana knitted?",
      "Where has Ben travelled?",
    ];
    const one = [
      "Which city did Mia move to?",
      "What is John's favourite book?",
      "What helps Joanna stay focused?",
      "What type of workout class did Maria start?",
      "When did Melanie go camping?",
      "What is Ana planning this summer?",
      "What has Ben decided to do?",
      "Where has Ana put the keys?",
    ];
    expect(several.filter((q) => !asksForSeveral(q))).toEqual([]);
    expect(one.filter(asksForSeveral)).toEqual([]);

    // The same statement result, re-ranked under each kind of question.
    const fact = (id: string, episode_id: string, speaker: string) =>
      ({ id, type: "fact", text: id, details: { episode_id, source_role: speaker } }) as unknown as MemoryRow;
    const ranked = [
      { row: fact("moved", "e1", "Ana"), score: 0.9 },
      { row: fact("same-session", "e1", "Ana"), score: 0.5 },
      { row: fact("other-session", "e2", "Ana"), score: 0.45 },
    ];
    const links = [{ of: "moved", offset: 2, distance: 2, row: fact("bakery", "e1", "Ana") }];
    const order = (q: string) => rerank(q, ranked, links, ["fact"], 10).map((r) => r.row.id);
    // One answer: its session agrees (+10% each), and the hit's neighbour comes in at 0.6 of it.
    expect(order("Which city did Mia move to?")).toEqual([
      "moved",
      "bakery",
      "same-session",
      "other-session",
    ]);
    // Several: no neighbour, no session agreement; the statement's order.
    expect(order("Which cities has Mia lived in?")).toEqual(["moved", "same-session", "other-session"]);
  });
});

describe("the facts a hit brings", () => {
  const said = (id: string, speaker: string) =>
    ({
      id,
      type: "fact",
      text: id,
      details: { episode_id: "e1", source_role: speaker },
    }) as unknown as MemoryRow;
  it("are one step away when next to it or the same speaker's own turn two places away; ties go by the conversation", () => {
    const hit = { row: said("hit", "Ana"), score: 0.8 };
    const other = { row: said("elsewhere", "Cy"), score: 0.3 };
    const link = (offset: number, speaker: string) => ({
      of: "hit",
      offset,
      distance: Math.abs(offset),
      row: said(`${speaker}${offset}`, speaker),
    });
    const out = withLinkedFacts(
      [link(-2, "Ana"), link(-1, "Ben"), link(1, "Ben"), link(2, "Ana"), link(-2, "Cy")],
      ["fact"],
      [hit, other],
      10,
    );
    expect(out.map((r) => [r.row.id, r.score])).toEqual([
      ["hit", 0.8],
      // One step (0.8 x 0.6): the speaker's own turns first, after before before; then the turns next to it.
      ["Ana2", 0.48],
      ["Ana-2", 0.479999],
      ["Ben1", 0.479998],
      ["Ben-1", 0.479997],
      ["elsewhere", 0.3],
      // Another speaker two places away: two steps (0.8 x 0.36).
      ["Cy-2", 0.287997],
    ]);
  });
});

describe("a question naming one speaker", () => {
  const said = (id: string, speaker: string, score: number) => ({
    row: { id, type: "fact", text: id, details: { source_role: speaker } } as unknown as MemoryRow,
    score,
  });
  const ranked = [
    said("tims-books", "Tim", 0.8),
    said("johns-books", "John", 0.75),
    said("johns-dog", "John", 0.5),
  ];
  const johnLeads = [
    said("johns-books", "John", 0.8),
    said("tims-books", "Tim", 0.75),
    said("johns-dog", "John", 0.5),
  ];
  it.each([
    // One thing asked, his words leading: lifted by 10%.
    [
      "What book did John read last week?",
      johnLeads,
      [
        ["johns-books", 0.88],
        ["tims-books", 0.75],
        ["johns-dog", 0.55],
      ],
    ],
    // One thing asked, the other speaker's words leading (the question's words fit what Tim said):
    // left as ranked.
    [
      "What book did John read last week?",
      ranked,
      [
        ["tims-books", 0.8],
        ["johns-books", 0.75],
        ["johns-dog", 0.5],
      ],
    ],
    // Several things asked of him (a list of his own, told over several conversations): by 30%,
    // whoever leads.
    [
      "What books has John read?",
      ranked,
      [
        ["johns-books", 0.975],
        ["tims-books", 0.8],
        ["johns-dog", 0.65],
      ],
    ],
    [
      "How many books has John read?",
      ranked,
      [
        ["johns-books", 0.975],
        ["tims-books", 0.8],
        ["johns-dog", 0.65],
      ],
    ],
    // What he would, might or is likely to do, be or like (an inference about him, from his own
    // account): tripled, whoever leads.
    [
      "Would John enjoy a book club?",
      ranked,
      [
        ["johns-books", 2.25],
        ["johns-dog", 1.5],
        ["tims-books", 0.8],
      ],
    ],
    [
      "What might John's favourite genre be?",
      ranked,
      [
        ["johns-books", 2.25],
        ["johns-dog", 1.5],
        ["tims-books", 0.8],
      ],
    ],
    // "Could" is mostly ability: one thing asked, Tim's words leading, left as ranked.
    ["Could John read French?", ranked, ranked.map((r) => [r.row.id, r.score])],
  ])("prefers that speaker's own words: %s", (query, list, expected) => {
    const out = preferNamedSpeaker(query, list);
    expect(out.map((r) => [r.row.id, r.score])).toEqual(expected);
  });
  it("knows a speaker named with or without accents ('Zoë' asked about as 'Zoe', 'Jose' as 'José')", () => {
    const accented = [said("tims-books", "Tim", 0.8), said("zoes-books", "Zoë", 0.75)];
    for (const query of [
      "What books has Zoe read?",
      "What books has Zoë read?",
      "What books has Zoe\u0308 read?",
    ]) {
      expect(
        preferNamedSpeaker(query, accented).map((r) => [r.row.id, r.score]),
        query,
      ).toEqual([
        ["zoes-books", 0.975],
        ["tims-books", 0.8],
      ]);
    }
    const plain = [said("tims-books", "Tim", 0.8), said("joses-books", "Jose", 0.75)];
    expect(preferNamedSpeaker("What books has José read?", plain)[0]!.row.id).toBe("joses-books");
  });
  it("leaves the list alone when it names both speakers or none", () => {
    expect(preferNamedSpeaker("Which books did Tim recommend to John?", ranked)).toBe(ranked);
    expect(preferNamedSpeaker("What books were mentioned?", ranked)).toBe(ranked);
  });
});

describe("a question the user asks about themselves", () => {
  it("finds what is said of the user before what is said of the user's people", async () => {
    const { key } = await svc.newOrg();
    const said = [
      "My mom lives in Lyon and she loves gardening.",
      "I live in Paris, near the Louvre.",
      "My brother works at Google in Zurich.",
      "I work as a nurse at the city hospital.",
      "My sister has two cats.",
      "I have a dog named Rex.",
    ];
    const stored = await svc.request("POST", "/v1/memories?wait=true", {
      key,
      body: { user_id: "me", conv_id: "c1", messages: said.map((content) => ({ role: "user", content })) },
    });
    expect(stored.body.status).toBe("succeeded");
    const top = async (query: string) => {
      const res = await svc.request("POST", "/v1/memories/search", {
        key,
        body: { user_id: "me", query, mode: "retrieve", types: ["fact"], limit: 3 },
      });
      expect(res.status).toBe(200);
      return res.body.data[0]?.text as string;
    };
    expect(await top("Where do I live?")).toBe("The user lives in Paris, near the Louvre.");
    expect(await top("Do I have pets?")).toBe("The user has a dog named Rex.");
    expect(await top("What do I do for work?")).toBe("The user works as a nurse at the city hospital.");
    // A question naming one of them still finds theirs.
    expect(await top("Where does my mom live?")).toBe(
      "The user's mom lives in Lyon and she loves gardening.",
    );
    expect(await top("What pets does my sister have?")).toBe("The user's sister has two cats.");
  });

  it("finds the user's own job and ailment before a relative's under a question about 'the user'", async () => {
    const { key } = await svc.newOrg();
    const said = async (user_id: string, conv_id: string, content: string, day: string) => {
      const stored = await svc.request("POST", "/v1/memories?wait=true", {
        key,
        body: {
          user_id,
          conv_id,
          messages: [
            { role: "user", content, created_at: `2025-${day}T10:00:00Z` },
            { role: "assistant", content: "Noted." },
          ],
        },
      });
      expect(stored.body.status).toBe("succeeded");
    };
    await said("emp", "a", "I joined a startup called Fernwood as CTO.", "02-01");
    await said("emp", "b", "My brother just got a job at Amazon.", "03-01");
    await said("al", "a", "My son is allergic to peanuts.", "02-01");
    await said("al", "b", "I get hay fever every spring.", "03-01");
    const top = async (user_id: string, query: string) => {
      const res = await svc.request("POST", "/v1/memories/search", {
        key,
        body: { user_id, query, mode: "retrieve", limit: 5 },
      });
      expect(res.status).toBe(200);
      return res.body.data[0]?.text as string;
    };
    expect(await top("emp", "Who is the user's employer?")).toMatch(
      /joined a startup called Fernwood as CTO/,
    );
    expect(await top("emp", "Where does the user's brother work?")).toMatch(
      /brother just got a job at Amazon/,
    );
    expect(await top("al", "Does the user have any allergies?")).toMatch(/hay fever every spring/);
    expect(await top("al", "Is the user's son allergic to anything?")).toMatch(/son is allergic to peanuts/);
  });

  it("leaves a fact about one of them that names the user again, and questions without a first person", () => {
    const row = (id: string, text: string, score: number) => ({
      row: { id, type: "fact", text, details: {} } as unknown as MemoryRow,
      score,
    });
    const ranked = [
      row("mom", "On 8 May 2023, the user's mom lives with the user in Lyon.", 0.9),
      row("me", "The user lives in Lyon.", 0.8),
    ];
    expect(preferTheUserThemself("Who do I live with?", ranked)).toBe(ranked);
    const other = [row("sis", "The user's sister has two cats.", 0.9), row("me", "The user has a dog.", 0.8)];
    expect(preferTheUserThemself("What pets does the user's sister have?", other)).toBe(other);
    expect(preferTheUserThemself("What pets does Tim have?", other)).toBe(other);
    expect(preferTheUserThemself("Does the user have pets?", other).map((r) => r.row.id)).toEqual([
      "me",
      "sis",
    ]);
    expect(preferTheUserThemself("Do I have pets?", other).map((r) => [r.row.id, r.score])).toEqual([
      ["me", 0.8],
      ["sis", 0.45],
    ]); // A lower-case word before 's is no one's name: "today's kids" are not the user's people.
    const kids = [
      row("kids", "On 8 May 2023, today's kids love Minecraft.", 0.9),
      row("me", "The user plays chess.", 0.8),
    ];
    expect(preferTheUserThemself("What games do I like?", kids)).toBe(kids);
  });

  it("keeps a halved fact's own episode below it (the episode of the sister's city led before)", async () => {
    const { key } = await svc.newOrg();
    for (const [conv_id, content, date] of [
      ["c1", "We moved to Toronto last weekend!", "2025-03-20T10:00:00Z"],
      ["c2", "My sister Anna lives in Vancouver.", "2025-06-01T10:00:00Z"],
    ]) {
      const stored = await svc.request("POST", "/v1/memories?wait=true", {
        key,
        body: { user_id: "home", conv_id, messages: [{ role: "user", content, date }] },
      });
      expect(stored.body.status).toBe("succeeded");
    }
    const res = await svc.request("POST", "/v1/memories/search", {
      key,
      body: { user_id: "home", query: "Where do I live?", mode: "retrieve" },
    });
    const rows = res.body.data as { type: string; text: string; score: number }[];
    const at = (type: string, word: string) =>
      rows.findIndex((r) => r.type === type && r.text.includes(word));
    expect(at("fact", "Vancouver")).toBeGreaterThanOrEqual(0);
    // Each episode after its own fact, whatever weighed that fact down.
    expect(at("episode", "Vancouver")).toBeGreaterThan(at("fact", "Vancouver"));
    expect(at("episode", "Toronto")).toBeGreaterThan(at("fact", "Toronto"));
    expect(rows[at("episode", "Vancouver")]!.score).toBeLessThan(rows[at("fact", "Vancouver")]!.score);
  });

  it("takes a named user's people as not the user ('Priya's mom', once Priya's name is on record)", async () => {
    const { key } = await svc.newOrg();
    const said = [
      "Hi, I'm Priya.",
      "My mom lives in Lyon and she loves gardening.",
      "I live in Paris, near the Louvre.",
    ];
    const stored = await svc.request("POST", "/v1/memories?wait=true", {
      key,
      body: { user_id: "pr", conv_id: "c1", messages: said.map((content) => ({ role: "user", content })) },
    });
    expect(stored.body.status).toBe("succeeded");
    const res = await svc.request("POST", "/v1/memories/search", {
      key,
      body: { user_id: "pr", query: "Where do I live?", mode: "retrieve", types: ["fact"], limit: 3 },
    });
    const texts: string[] = res.body.data.map((m: any) => m.text);
    expect(texts.some((t) => /^Priya's mom lives in Lyon/.test(t))).toBe(true);
    expect(texts[0]).toBe("Priya lives in Paris, near the Louvre.");
  });
});

describe("temporal questions", () => {
  const row = (id: string, text: string) => ({ row: { id, text } as MemoryRow, score: 0.5 });
  const ranked = [
    row("a", "On 8 May 2023, Ana went to a pottery class."),
    row("b", "On 8 May 2023, Ana went to a pottery class last week (the week before 8 May 2023)."),
  ];
  it("lifts memories that say when under a 'when' question, and only then", () => {
    expect(preferDated("When did Ana go to the pottery class?", ranked).map((r) => r.row.id)).toEqual([
      "b",
      "a",
    ]);
    expect(preferDated("Where did Ana go?", ranked).map((r) => r.row.id)).toEqual(["a", "b"]);
  });

  it("prefer the memories of a day the question names, however it writes the day", () => {
    expect(namedDay("What did Tim read on 8th December, 2023?")).toBe("8 December 2023");
    expect(namedDay("Who did Maria meet on May 3, 2023?")).toBe("3 May 2023");
    expect(namedDay("What happened in May 2023?")).toBeNull();
    expect(namedDay("What happened on 31 February 2023?")).toBeNull();
    expect(withNamedDay("What did Tim read on 8th December, 2023?")).toBe(
      "What did Tim read on 8 December 2023?",
    );
    const day = [
      { row: { id: "other", text: "On 1 December 2023, Tim finished a novel." } as MemoryRow, score: 0.6 },
      {
        row: { id: "that-day", text: "On 8 December 2023, Tim finished a novel." } as MemoryRow,
        score: 0.55,
      },
    ];
    expect(preferNamedDay("What did Tim finish on December 8th, 2023?", day).map((r) => r.row.id)).toEqual([
      "that-day",
      "other",
    ]);
    expect(preferNamedDay("What did Tim finish?", day)).toBe(day);
  });
});

describe("episodes and their facts", () => {
  const r = (id: string, type: string, score: number, episode_id?: string) => ({
    row: { id, type, text: id, details: episode_id ? { episode_id } : {} } as unknown as MemoryRow,
    score,
  });
  it("puts an episode below every one of its own facts in the list, and leaves other episodes alone", () => {
    const out = factsBeforeTheirEpisode([
      r("e1", "episode", 0.9),
      r("e2", "episode", 0.8),
      r("f1", "fact", 0.7, "e1"),
      r("f2", "fact", 0.6, "e3"),
      r("f3", "fact", 0.5, "e1"),
    ]);
    // e1 repeats f1 and f3: below both (below f1 only, it still took the slot above f2 and f3).
    expect(out.map((x) => x.row.id)).toEqual(["e2", "f1", "f2", "f3", "e1"]);
    expect(out[4]!.score).toBeLessThan(out[3]!.score);
  });

  it("puts an episode below a fact of another conversation that it quotes word for word", () => {
    const row = (id: string, type: string, text: string, score: number, episode_id?: string) => ({
      row: { id, type, text, details: episode_id ? { episode_id } : {} } as unknown as MemoryRow,
      score,
    });
    // The fact was stored once, in the first conversation (e0); later ones quote its sentence.
    const shoes = "the user needs to buy new school shoes for Lily.";
    const out = factsBeforeTheirEpisode([
      row("e9", "episode", `On 31 August 2025, ${shoes} On 31 August 2025, Lily practiced piano.`, 0.96),
      row("park", "fact", "On 1 August 2025, the user went to the park.", 0.9),
      row("shoes", "fact", `On 1 August 2025, ${shoes}`, 0.84, "e0"),
      row("e8", "episode", "On 28 August 2025, the user needs new shoes. The user cleaned the garage.", 0.83),
    ]);
    expect(out.map((x) => x.row.id)).toEqual(["park", "shoes", "e9", "e8"]);
    expect(out[2]!.score).toBeLessThan(out[1]!.score);
    // Words in another order, or only some of them, are no quote: "e8" keeps its score.
    expect(out[3]!.score).toBe(0.83);
  });
});

describe("episodes after every weighting", () => {
  it("stay below their own facts when a later weighting lowers a fact (rerank)", () => {
    const text = "On 1 June 2025, the user's sister Anna lives in Vancouver.";
    const row = (id: string, type: string, t: string, details: Record<string, unknown>) =>
      ({ id, type, text: t, details }) as unknown as MemoryRow;
    const ranked = [
      { row: row("sister", "fact", text, { episode_id: "ep" }), score: 0.96 },
      { row: row("ep", "episode", text, {}), score: 0.95 },
      { row: row("me", "fact", "The user moved to Toronto.", { episode_id: "ep2" }), score: 0.3 },
    ];
    const out = rerank("Where do I live?", ranked, [], ["fact", "episode"], 10);
    expect(out.map((r) => r.row.id)).toEqual(["sister", "ep", "me"]);
    expect(out[1]!.score).toBeLessThan(out[0]!.score);
  });
});

describe("session agreement", () => {
  it("lifts facts of an episode with several hits above a stray match of similar score", () => {
    const out = sessionsThatMatch([
      factOf("stray", 0.6, "e9"),
      factOf("a", 0.58, "e1"),
      factOf("b", 0.4, "e1"),
    ]);
    expect(out.map((x) => x.row.id)).toEqual(["a", "stray", "b"]);
    expect(out.every((x) => x.score <= 1)).toBe(true);
  });
});

describe("scores past 1 after the boosts", () => {
  it("keep their order (the list is scaled back to 0..1, not clamped into a tie broken by id)", () => {
    // Both lifted past 1: clamped, they tied at 1 and the id put "a" (the weaker) first.
    const boosted = sessionsThatMatch([
      factOf("z", 0.98, "e1"),
      factOf("a", 0.95, "e1"),
      factOf("m", 0.5, "e2"),
    ]);
    const out = withinOne(boosted);
    expect(out.map((x) => x.row.id)).toEqual(["z", "a", "m"]);
    expect(out[0]!.score).toBe(1);
    expect(out[1]!.score).toBeLessThan(1);
    expect(out.every((x) => x.score >= 0 && x.score <= 1)).toBe(true);
    const dated = (id: string, score: number) => ({
      row: { id, text: `On 8 May 2023, Ana moved in 2019 (${id}).` } as MemoryRow,
      score,
    });
    const when = withinOne(preferDated("When did Ana move?", [dated("z", 0.95), dated("a", 0.9)]));
    expect(when.map((x) => x.row.id)).toEqual(["z", "a"]);
    expect(when[1]!.score).toBeLessThan(when[0]!.score);
  });
});

describe("a name introduced after the user's first facts", () => {
  it("reaches the earlier facts that say 'the user' (indexed context), not the assistant's", async () => {
    const { key } = await svc.newOrg();
    const ingest = (conv_id: string, messages: unknown[]) =>
      svc.request("POST", "/v1/memories?wait=true", { key, body: { user_id: "u1", conv_id, messages } });
    const first = await ingest("c1", [
      { role: "user", content: "I repair vintage radios in my garage at weekends." },
      {
        role: "assistant",
        content: "You could try the soldering course at the Leeds makerspace next month.",
      },
    ]);
    expect(first.body.status).toBe("succeeded");
    expect((await ingest("c2", [{ role: "user", content: "Hi, my name is Tomas." }])).body.status).toBe(
      "succeeded",
    );
    const { rows } = await svc.runtime.deps.db.query<{ text: string; context: string | null }>(
      "SELECT text, context FROM memories WHERE user_id = 'u1' AND type = 'fact' ORDER BY text",
    );
    const radios = rows.find((r) => r.text.includes("radios"))!;
    const course = rows.find((r) => r.text.includes("soldering"))!;
    expect(radios.text).toContain("The user");
    expect(radios.context).toContain("(Tomas)");
    expect(course.context ?? "").not.toContain("Tomas");
    const res = await svc.request("POST", "/v1/memories/search", {
      key,
      body: { query: "What does Tomas do?", user_id: "u1", mode: "retrieve", limit: 10, include: ["fact"] },
    });
    const texts = (res.body.data as { text: string }[]).map((r) => r.text);
    expect(texts.findIndex((t) => t.includes("radios"))).toBeLessThan(
      texts.findIndex((t) => t.includes("soldering")),
    );
    // A second ingest naming the user again adds nothing twice.
    expect(
      (await ingest("c3", [{ role: "user", content: "Call me Tomas, everyone does." }])).body.status,
    ).toBe("succeeded");
    const again = await svc.runtime.deps.db.query<{ context: string | null }>(
      "SELECT context FROM memories WHERE user_id = 'u1' AND type = 'fact' AND text LIKE '%radios%'",
    );
    expect(again.rows[0]!.context!.split("(Tomas)").length).toBe(2);
  });

  it("names many earlier facts in short transactions of their own, not in the job's last one", async () => {
    const { orgId, key } = await svc.newOrg();
    const db = svc.runtime.deps.db;
    const earlier = Array.from({ length: 250 }, (_, i) => ({
      id: newMemoryId(),
      org_id: orgId,
      type: "fact" as const,
      text: `The user planted tree number ${i} in the orchard.`,
      user_id: "u9",
      status: "active" as const,
      details: { source_role: "user" },
    }));
    await db.tx((tx) => insertMemoryRows(tx, earlier));
    const res = await svc.request("POST", "/v1/memories?wait=true", {
      key,
      body: { user_id: "u9", conv_id: "c9", messages: [{ role: "user", content: "Hi, my name is Zorro." }] },
    });
    expect(res.body.status).toBe("succeeded");
    const { rows } = await db.query<{ named: number; txs: number }>(
      `SELECT count(*)::int AS named, count(DISTINCT xmin::text)::int AS txs FROM memories
       WHERE org_id = $1 AND id = ANY($2::uuid[]) AND context LIKE '%(Zorro)%'`,
      [orgId, earlier.map((r) => r.id)],
    );
    expect(rows[0]!.named).toBe(250);
    // 100 rows a statement: three transactions.
    expect(rows[0]!.txs).toBe(3);
  });
});
