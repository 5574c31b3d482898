import { describe, expect, it } from "vitest";
import { parseLooseDate, resolveRelativeDates } from "../src/dates/dates.js";
import { strptime } from "../src/dates/strptime.js";
import { identifiersFromText } from "../src/identifiers/identifiers.js";
import { holdsClaim, restOf } from "../src/ingest/reconcile.js";
import { routeTurns } from "../src/ingest/route.js";
import type { StoredRequest } from "../src/ingest/submit.js";
import { classifyLocally } from "../src/providers/local/classifier.js";
import { toThirdPerson } from "../src/providers/local/english.js";
import { createLocalExtractor, extractLocally, judgeLocally } from "../src/providers/local/extractor.js";
import { turn } from "./helpers/turns.js";

describe("strptime subset", () => {
  it("parses every supported directive", () => {
    expect(strptime("2024-03-05 14:07:09", "%Y-%m-%d %H:%M:%S")?.toISOString()).toBe(
      "2024-03-05T14:07:09.000Z",
    );
    expect(strptime("1:56 pm on 8 May, 2023", "%I:%M %p on %d %B, %Y")?.toISOString()).toBe(
      "2023-05-08T13:56:00.000Z",
    );
    expect(strptime("12:05 AM 01 Jan 99", "%I:%M %p %d %b %y")?.toISOString()).toBe(
      "1999-01-01T00:05:00.000Z",
    );
    expect(strptime("05/03/24 10:00:00.250+0200", "%d/%m/%y %H:%M:%S.%f%z")?.toISOString()).toBe(
      "2024-03-05T08:00:00.250Z",
    );
    expect(strptime("2024 060", "%Y %j")?.toISOString()).toBe("2024-02-29T00:00:00.000Z");
    expect(strptime("Tue, 5 March 2024", "%a, %d %B %Y")?.toISOString()).toBe("2024-03-05T00:00:00.000Z");
    expect(strptime("Tuesday 5 Mar 2024 100%", "%A %d %b %Y 100%%")?.toISOString()).toBe(
      "2024-03-05T00:00:00.000Z",
    );
  });

  it("returns null when the value does not match", () => {
    expect(strptime("yesterday", "%Y-%m-%d")).toBeNull();
    expect(strptime("2024-13-01", "%Y-%m-%d")).toBeNull();
    expect(strptime("2023-02-29", "%Y-%m-%d")).toBeNull();
    expect(strptime("2024-01-01", "%Y-%m-%d %Q")).toBeNull();
  });

  it("reads a four-digit year as written, and only years PostgreSQL's timestamps hold", () => {
    // Date.UTC would have read year 99 as 1999, and year 0 as 1900.
    expect(strptime("0099-05-01", "%Y-%m-%d")?.toISOString()).toBe("0099-05-01T00:00:00.000Z");
    expect(strptime("0001-01-01", "%Y-%m-%d")?.toISOString()).toBe("0001-01-01T00:00:00.000Z");
    // No year 0; past 9999 (here through the offset) JavaScript writes "+010000-...", which
    // PostgreSQL does not read as a timestamp.
    expect(strptime("0000-06-01", "%Y-%m-%d")).toBeNull();
    expect(strptime("9999-12-31 23:59 -0500", "%Y-%m-%d %H:%M %z")).toBeNull();
    expect(strptime("9999-12-31 23:59 +0500", "%Y-%m-%d %H:%M %z")?.toISOString()).toBe(
      "9999-12-31T18:59:00.000Z",
    );
    expect(parseLooseDate("0000-01-01")).toBeNull();
  });

  it("reads the message dates of mail, HTTP and European and American exports; never a day the calendar lacks", () => {
    const iso = (s: string) => parseLooseDate(s)?.toISOString() ?? null;
    expect(iso("Fri, 15 Mar 2024 10:00:00 GMT")).toBe("2024-03-15T10:00:00.000Z");
    expect(iso("Mar 15, 2024 9:00 AM")).toBe("2024-03-15T09:00:00.000Z");
    expect(iso("15.03.2024")).toBe("2024-03-15T00:00:00.000Z");
    expect(iso("15/03/2024")).toBe("2024-03-15T00:00:00.000Z");
    expect(iso("03/15/2024")).toBe("2024-03-15T00:00:00.000Z");
    // Day and month both 12 or under: which is which is the writer's convention, so not read.
    expect(iso("03/04/2024")).toBeNull();
    // Date.parse reads 2024-02-30 as 1 March.
    expect(iso("2024-02-30")).toBeNull();
    expect(iso("2024-02-30T10:00:00Z")).toBeNull();
    expect(iso("2024-02-29T10:00:00Z")).toBe("2024-02-29T10:00:00.000Z");
    expect(iso("15 Mar 2024 10:00 GMT")).toBe("2024-03-15T10:00:00.000Z");
    // A word that starts like a weekday is none.
    expect(iso("monitor 2024-03-15")).toBeNull();
  });

  it.each([
    ["2025年3月10日", "2025-03-10"],
    ["2025年3月10日 14:30", "2025-03-10"],
    ["2025년 3월 10일", "2025-03-10"],
    ["２０２５-０３-１０", "2025-03-10"],
    ["１５/０３/２０２５", "2025-03-15"],
    ["10 mars 2025", "2025-03-10"],
    ["10. März 2025", "2025-03-10"],
    ["10 de marzo de 2025", "2025-03-10"],
    ["1 de janeiro de 2025", "2025-01-01"],
    ["10 maggio 2025", "2025-05-10"],
    ["10 марта 2025 г.", "2025-03-10"],
  ])("reads a date written in another language: %s", (raw, day) => {
    expect(parseLooseDate(raw)?.toISOString().slice(0, 10)).toBe(day);
  });
});

describe("the days a fact names are the sender's", () => {
  const factOf = (date: string, timestamp_format?: string) => {
    const request = {
      messages: [{ role: "user", content: "Yesterday I adopted a parrot named Kiwi.", date }],
      ...(timestamp_format ? { timestamp_format } : {}),
    } as StoredRequest;
    // Threshold 0: the batch path, where timestamp_format applies.
    const { turns } = routeTurns(request, timestamp_format ? 0 : 30);
    return extractLocally({ turns, path: "batch", extractArtifacts: false, agentic: false, known: [] })
      .facts[0]!.text;
  };
  it.each([
    ["2023-05-08T23:30:00-0500", "%Y-%m-%dT%H:%M:%S%z"],
    ["2023-05-08T23:30:00-05:00", undefined],
    ["2023-05-08 23:30 -0500", "%Y-%m-%d %H:%M %z"],
    ["2023-05-08T00:30:00+0200", "%Y-%m-%dT%H:%M:%S%z"],
    ["2023-05-08T23:30:00Z", undefined],
  ])("%s (%s): 8 May, yesterday 7 May", (date, format) => {
    const text = factOf(date, format);
    expect(text).toMatch(/^On 8 May 2023, /);
    expect(text).toContain("(7 May 2023)");
  });
});

describe("a message sent without a date", () => {
  it("was said on the day of the dated message before it; live, with none before, when received", () => {
    const received = new Date("2026-11-27T10:00:00Z");
    const request = {
      messages: [
        { role: "user", content: "Hi.", date: null },
        { role: "Caroline", content: "I went to a support group yesterday.", date: "1:56 pm on 8 May, 2023" },
        { role: "Melanie", content: "I painted a lake sunrise last week." },
      ],
    } as unknown as StoredRequest;
    for (const path of ["live", "batch"] as const) {
      const { turns } = routeTurns(request, path === "live" ? 30 : 0, received);
      expect(turns[2]!.refDate).toEqual(turns[1]!.refDate);
      expect(turns[0]!.refDate).toEqual(path === "live" ? received : null);
      const facts = extractLocally({ turns, path, extractArtifacts: false, agentic: false, known: [] }).facts;
      const painted = facts.find((f) => f.text.includes("sunrise"))!.text;
      expect(painted).toContain("2023");
      expect(painted).not.toContain("2026");
    }
  });
});

describe("a message whose date cannot be read", () => {
  const received = new Date("2026-11-27T10:00:00Z");
  const factOf = (date: string) => {
    const request = {
      messages: [{ role: "user", content: "I went to the dentist yesterday for a filling.", date }],
    } as unknown as StoredRequest;
    const { turns } = routeTurns(request, 30, received);
    return extractLocally({ turns, path: "live", extractArtifacts: false, agentic: false, known: [] })
      .facts[0]!.text;
  };

  it("resolves its relative dates as a message without a date does, and leads with no day", () => {
    expect(factOf("le jour de la fête")).toBe(
      "The user went to the dentist yesterday (26 November 2026) for a filling.",
    );
  });

  it.each(["2025年3月10日", "10 mars 2025", "10. März 2025", "10 марта 2025"])(
    "is read when another language wrote it: %s",
    (date) => {
      expect(factOf(date)).toBe(
        "On 10 March 2025, the user went to the dentist yesterday (9 March 2025) for a filling.",
      );
    },
  );
});

describe("relative dates", () => {
  const fri = new Date("2024-03-15T10:00:00Z"); // a Friday
  const sat = new Date("2024-03-16T10:00:00Z");
  const mon = new Date("2024-03-18T10:00:00Z");
  const wed = new Date("2025-04-02T10:00:00Z");
  const sat1 = new Date("2025-03-01T10:00:00Z");
  const rows: Array<[string, string, Date]> = [
    // "this <weekday>" told in the past is that day of the message's week; ahead otherwise
    ["I went to the doctor this Tuesday and got my results.", "this Tuesday (12 March 2024)", fri],
    ["This Monday I finally signed the lease.", "This Monday (11 March 2024)", fri],
    [
      "The party was this Friday, it was fun.",
      "this Friday (15 March 2024)",
      new Date("2024-03-16T10:00:00Z"),
    ],
    ["I have a dentist appointment this Tuesday.", "this Tuesday (19 March 2024)", fri],
    ["I got tickets for this Saturday.", "this Saturday (16 March 2024)", fri],
    // number words past six, "a couple of", "last night", a month named, a thing that ends
    ["I moved here ten years ago.", "ten years ago (2014)", fri],
    ["I started there twelve days ago.", "twelve days ago (3 March 2024)", fri],
    ["I saw her a couple of days ago.", "a couple of days ago (13 March 2024)", fri],
    ["I slept badly last night.", "last night (14 March 2024)", fri],
    ["We went to Lisbon last June.", "last June (June 2023)", fri],
    ["We went to Lisbon last February.", "last February (February 2024)", fri],
    ["We fly to Oslo next March.", "next March (March 2025)", fri],
    ["My lease ends in two months.", "in two months (May 2024)", fri],
    // a compound number is read whole, never its last word alone; the tens up to ninety
    ["We got married twenty-five years ago.", "twenty-five years ago (1999)", fri],
    ["My parents divorced twenty-one years ago.", "twenty-one years ago (2003)", fri],
    ["I graduated thirty-two years ago.", "thirty-two years ago (1992)", fri],
    ["We bought the house twenty two years ago.", "twenty two years ago (2002)", fri],
    ["My grandpa emigrated forty years ago.", "forty years ago (1984)", fri],
    ["The mill closed ninety-nine years ago.", "ninety-nine years ago (1925)", fri],
    ["I quit smoking seventeen days ago.", "seventeen days ago (27 February 2024)", fri],
    // "this weekend" told in the past is the weekend just gone; ahead otherwise
    ["We had a blast at the lake this weekend.", "this weekend (the weekend of 16 March 2024)", mon],
    ["We had a blast at the lake this weekend.", "this weekend (the weekend of 16 March 2024)", sat],
    ["We're going to the lake this weekend.", "this weekend (the weekend of 23 March 2024)", mon],
    // "until Friday" told in the past is the Friday before; ahead otherwise
    ["I worked there until Friday.", "until Friday (15 March 2024)", mon],
    ["I'm off work until Friday.", "until Friday (22 March 2024)", mon],
    [
      "I worked at Acme, or rather I did until Friday.",
      "until Friday (5 April 2024)",
      new Date("2024-04-10T10:00:00Z"),
    ],
    // a reservation made, a class signed up for, an appointment put in a calendar: ahead
    ["I made a reservation at Nobu on Saturday.", "on Saturday (23 March 2024)", sat],
    ["I signed up for a yoga class on Wednesday.", "on Wednesday (20 March 2024)", sat],
    [
      "I've added the dentist appointment on Thursday at 3pm to your calendar.",
      "on Thursday (21 March 2024) at 3pm",
      sat,
    ],
    // a title's stop does not end the sentence; the weekday's own clause gives its tense
    ["I booked an appointment with Dr. Lee on Friday at 10am.", "on Friday (22 March 2024)", mon],
    ["My appointment with Dr. Lee is on Friday.", "on Friday (22 March 2024)", mon],
    ["I went hiking last week and I have a dentist appointment on Friday.", "on Friday (22 March 2024)", mon],
    [
      "I have a dentist appointment tomorrow, and I went to the gym on Friday.",
      "on Friday (15 March 2024)",
      mon,
    ],
    ["I had a yoga class on Wednesday.", "on Wednesday (13 March 2024)", sat],
    // a booking told with what happened after it is past
    [
      "I made a reservation at Nobu on Saturday and the food was amazing.",
      "on Saturday (29 March 2025)",
      wed,
    ],
    ["I signed up for a yoga class on Wednesday and loved it.", "on Wednesday (26 March 2025)", wed],
    [
      "I registered for the 10k class on Saturday and finished in 52 minutes.",
      "on Saturday (29 March 2025)",
      wed,
    ],
    [
      "I signed up for a pottery class on Tuesday, the first session was fun.",
      "on Tuesday (1 April 2025)",
      wed,
    ],
    [
      "I added the meeting on Monday to my calendar and then forgot all about it.",
      "on Monday (31 March 2025)",
      wed,
    ],
    [
      "We had a great time, I made a reservation at Nobu on Saturday and everyone loved the omakase.",
      "on Saturday (29 March 2025)",
      wed,
    ],
    ["I went hiking last week and I have a dentist appointment on Friday.", "on Friday (4 April 2025)", wed],
    // a request to be reminded is ahead
    ["Please remind me on Sunday to call my mom.", "on Sunday (2 March 2025)", sat1],
  ];
  it.each(rows)("%s", (text, want, at) => {
    expect(resolveRelativeDates(text, at)).toContain(want);
  });
  // The extractor resolves a fact's dates once it is in the third person ("the user went hiking
  // ... and the user has ..."): the same days.
  it.each(rows)("through the extractor: %s", (text, want, at) => {
    const { facts } = extractLocally({
      turns: [turn(0, "user", text, { date: at.toISOString(), refDate: at })],
      path: "live",
      extractArtifacts: false,
      agentic: false,
      known: [],
    });
    // (a sentence's first word is lower case after the fact's "On <day>, " lead)
    expect(facts.map((f) => f.text.toLowerCase()).join(" | ")).toContain(want.toLowerCase());
  });
  it.each([
    // as the extractor words the user's request
    "The user asked the assistant to make sure to always water the plants on Sunday.",
    "I usually call my mom on Sunday.",
    "Growing up, we regularly visited my grandma on Sunday.",
    "We often go hiking on Saturday.",
  ])("leaves a habit's weekday as said: %s", (text) => {
    expect(resolveRelativeDates(text, mon)).toBe(text);
  });
});

describe("local extraction", () => {
  it("turns first-person statements into third-person facts and resolves relative dates", () => {
    expect(toThirdPerson("I live in Paris", "Ana")).toBe("Ana lives in Paris");
    expect(toThirdPerson("I really love my dog", "Ana")).toBe("Ana really loves their dog");
    expect(resolveRelativeDates("I went yesterday", new Date("2023-05-08T13:56:00Z"))).toBe(
      "I went yesterday (7 May 2023)",
    );
    // 8 May 2023 was a Monday
    expect(resolveRelativeDates("I fly out next Saturday", new Date("2023-05-08T13:56:00Z"))).toBe(
      "I fly out next Saturday (13 May 2023)",
    );
    expect(resolveRelativeDates("I will move in three months", new Date("2023-05-08T13:56:00Z"))).toBe(
      "I will move in three months (August 2023)",
    );
    // a duration, not a time ahead
    expect(resolveRelativeDates("I grew a lot in a year", new Date("2023-05-08T13:56:00Z"))).toBe(
      "I grew a lot in a year",
    );
    const at = new Date("2023-05-08T13:56:00Z");
    const ex = extractLocally({
      turns: [
        turn(0, "user", "Hey Mel! I went to a LGBTQ support group yesterday and it was so powerful.", {
          speaker: "Caroline",
          refDate: at,
          eventId: "D1:3",
        }),
        turn(1, "assistant", "Wow, that's cool! How did it go?", { speaker: "Melanie", eventId: "D1:4" }),
        turn(2, "assistant", "I painted a sunrise over the lake with my kids last week.", {
          speaker: "Melanie",
          refDate: at,
          eventId: "D1:5",
        }),
      ],
      path: "live",
      extractArtifacts: false,
      agentic: false,
      known: [],
    });
    const texts = ex.facts.map((f) => f.text);
    expect(texts).toContain(
      "Caroline went to a LGBTQ support group yesterday (7 May 2023) and it was so powerful.",
    );
    expect(ex.facts.find((f) => f.text.startsWith("Caroline"))!.source_event_ids).toEqual(["D1:3"]);
    const mel = ex.facts.find((f) => f.text.startsWith("Melanie"))!;
    expect(mel.text).toContain("Melanie painted a sunrise over the lake with Melanie's kids");
    expect(mel.source_event_ids).toEqual(["D1:5"]);
    expect(mel.source_role).toBe("assistant");
    expect(ex.facts.some((f) => f.source_event_ids.includes("D1:4"))).toBe(false);
    expect(ex.episode.title).toContain("Caroline and Melanie");
  });

  it("names unnamed speakers as the user and the assistant, in grammatical third person", () => {
    const ex = extractLocally({
      turns: [
        turn(0, "assistant", "Welcome back! How do you like Lisbon so far?"),
        turn(1, "user", "I moved to Lisbon last month and I work as a nurse there."),
      ],
      path: "live",
      extractArtifacts: false,
      agentic: false,
      known: [],
    });
    expect(ex.facts[0]!.text).toBe(
      "The user moved to Lisbon last month and the user works as a nurse there.",
    );
    expect(ex.facts[0]!.context).toBe("How does the user like Lisbon so far?");
    // "user" names a speaker, not a topic of the conversation.
    expect(ex.episode.title).not.toMatch(/about .*\buser\b/);
  });

  it("keeps a turn's substantive sentences together in one fact, attributes also on their own", () => {
    const ex = extractLocally({
      turns: [
        turn(0, "user", "Hi! We went camping at the lake. The kids loved the meteor shower. Any plans?", {
          speaker: "Melanie",
          eventId: "D2:1",
        }),
        turn(1, "assistant", "Nice. I moved to Berlin. The flat is tiny but bright.", {
          speaker: "Caroline",
          eventId: "D2:2",
        }),
      ],
      path: "live",
      extractArtifacts: false,
      agentic: false,
      known: [],
    });
    expect(ex.facts.map((f) => [f.text, f.source_event_ids])).toEqual([
      ["Melanie and others went camping at the lake. The kids loved the meteor shower.", ["D2:1"]],
      ["Caroline moved to Berlin. The flat is tiny but bright.", ["D2:2"]],
      ["Caroline moved to Berlin.", ["D2:2"]],
    ]);
    // The whole turn is never read as an attribute; its attribute sentence is what gets superseded.
    const cand = (text: string) => ({ id: "old", text, similarity: 0.5 });
    expect(judgeLocally({ text: ex.facts[1]!.text, candidates: [cand("Caroline moved to Paris.")] })).toEqual(
      {
        verdict: "new",
      },
    );
    expect(judgeLocally({ text: ex.facts[2]!.text, candidates: [cand("Caroline moved to Paris.")] })).toEqual(
      {
        verdict: "supersedes",
        id: "old",
      },
    );
  });

  it("leads a fact with the day its message carried; the same claim on another day is the same", () => {
    const at = new Date("2023-05-08T13:56:00Z");
    const ex = extractLocally({
      turns: [
        turn(0, "user", "I moved to Berlin last month.", {
          speaker: "Ana",
          date: "1:56 pm on 8 May, 2023",
          refDate: at,
        }),
      ],
      path: "live",
      extractArtifacts: false,
      agentic: false,
      known: [],
    });
    const text = ex.facts[0]!.text;
    expect(text).toBe("On 8 May 2023, Ana moved to Berlin last month (April 2023).");
    const cand = (t: string) => ({ id: "old", text: t, similarity: 0.6 });
    expect(
      judgeLocally({
        text,
        candidates: [cand("On 2 June 2023, Ana moved to Berlin last month (April 2023).")],
      }),
    ).toEqual({
      verdict: "duplicate",
      id: "old",
    });
    expect(judgeLocally({ text, candidates: [cand("On 1 March 2023, Ana moved to Paris.")] })).toEqual({
      verdict: "supersedes",
      id: "old",
    });
  });

  it("gives a reply the question it answers as context, and judges the claim without it", () => {
    const ex = extractLocally({
      turns: [
        turn(0, "user", "Hey Ana! What got you into running?", { speaker: "Ben", eventId: "D3:1" }),
        turn(1, "assistant", "My dad took me to races every Sunday.", { speaker: "Ana", eventId: "D3:2" }),
        turn(2, "assistant", "I live in Porto now.", { speaker: "Ana", eventId: "D3:3" }),
      ],
      path: "live",
      extractArtifacts: false,
      agentic: false,
      known: [],
    });
    expect(ex.facts.map((f) => [f.text, f.context])).toEqual([
      ["Ana's dad took Ana to races every Sunday.", "What got Ana into running?"],
      ["Ana lives in Porto now.", undefined],
    ]);
    const cand = (t: string) => ({ id: "old", text: t, similarity: 0.6 });
    // Facts stored before the context had its own field carry it in the text.
    const restated = "Ana lives in Porto now. (answering: Where does Ana live?)";
    expect(judgeLocally({ text: restated, candidates: [cand("Ana lives in Porto now.")] })).toEqual({
      verdict: "duplicate",
      id: "old",
    });
    expect(judgeLocally({ text: restated, candidates: [cand("Ana lives in Lisbon.")] })).toEqual({
      verdict: "supersedes",
      id: "old",
    });
  });

  it("pulls exact identifiers for triggers and ignores common words", () => {
    const ids = identifiersFromText(
      "Run `npm run build` then fix src/db/pool.ts; a TypeError in pg.Pool or max_connections, use --force.",
    );
    for (const id of [
      "npm",
      "src/db/pool.ts",
      "pool.ts",
      "TypeError",
      "pg.Pool",
      "max_connections",
      "--force",
    ]) {
      expect(ids).toContain(id);
    }
    expect(ids).not.toContain("then");
    expect(ids).not.toContain("fix");
  });

  it("judges duplicates and supersedes for single-valued attributes only", () => {
    const cand = (text: string, similarity = 0.8) => ({ id: "old", text, similarity });
    expect(judgeLocally({ text: "Ana lives in Berlin.", candidates: [cand("Ana lives in Paris.")] })).toEqual(
      {
        verdict: "supersedes",
        id: "old",
      },
    );
    expect(judgeLocally({ text: "Ana lives in Paris!", candidates: [cand("Ana lives in Paris.")] })).toEqual({
      verdict: "duplicate",
      id: "old",
    });
    expect(
      judgeLocally({ text: "Ana went to a concert.", candidates: [cand("Ana went to a support group.")] }),
    ).toEqual({ verdict: "new" });
  });

  it("classifies personal content as personal and matches prompted groups by overlap", () => {
    const g = [
      { id: "g1", prompt: "Anything about the billing service" },
      { id: "g2", prompt: "marketing campaigns" },
    ];
    expect(classifyLocally({ type: "fact", text: "Ana's sister was diagnosed with asthma." }, g)).toEqual({
      verdict: "personal",
      matched_group_ids: [],
    });
    expect(classifyLocally({ type: "fact", text: "Ana likes sunsets." }, g).verdict).toBe("personal");
    expect(
      classifyLocally({ type: "fact", text: "The billing service deploys with terraform on Fridays." }, g),
    ).toEqual({ verdict: "shareable", matched_group_ids: ["g1"] });
  });

  it.each([
    ["The user's bank PIN is 4417, please remember it.", "personal"],
    ["The user's SSH private key passphrase is CorrectHorse42.", "personal"],
    ["The user's home Wi-Fi key is Blue-Falcon-2291 if you need it.", "personal"],
    ["The user's apartment door code is 4711B and the buzzer is broken.", "personal"],
    ["The user takes Sertraline_50mg every morning for the user's mood.", "personal"],
    ["The user's recovery codes are in the drawer: 1234-5678.", "personal"],
    // a word of work beside them does not share them (a probe of a team's ingests)
    ["The user tested positive for COVID, so the user will miss the team standup all week.", "personal"],
    ["The user had a panic attack right before the release meeting.", "personal"],
    ["The user is going through IVF treatment, so please don't schedule deploys on Fridays.", "personal"],
    ["The user earns 7000 a month at the company and is behind on rent.", "personal"],
    ["The user's partner lost his job, so the user will ask the company for a raise.", "personal"],
    ["The user will be on parental leave from the project when the baby is due.", "personal"],
    ["The user was arrested last year; keep it out of the hiring process notes.", "personal"],
    ["The root login for the billing server is admin.", "personal"],
    // a password or PIN named in another language, its value an identifier (Soleil2024)
    ["Mon mot de passe est Soleil2024!", "personal"],
    ["Mein Passwort für den Server ist Hund2024!", "personal"],
    ["La contraseña del wifi de la oficina es Gato2024!", "personal"],
    ["Mon code de carte bancaire est 4821.", "personal"],
    ["A senha do servidor é Gato2024!", "personal"],
    ["Het wachtwoord van de database is Kat2024!", "personal"],
    ["Пароль от сервера — Kot2024!", "personal"],
    ["我的密码是 Panda2024!", "personal"],
    ["サーバーのパスワードは Panda2024 です。", "personal"],
    ["서버 비밀번호는 Panda2024!입니다.", "personal"],
    // technical wording that only looks like a credential stays shareable
    ["Pin the node version to 24 in package.json.", "shareable"],
    ["The billing service release moved to Thursday after the incident review.", "shareable"],
    ["The deploy uses a combination of terraform and ansible in the build.", "shareable"],
  ])(
    "health, family, money, legal trouble and credentials stay personal, even beside identifiers: %s",
    (text, verdict) => {
      expect(classifyLocally({ type: "fact", text }, []).verdict).toBe(verdict);
    },
  );
});

describe("an episode's summary", () => {
  it("ends each sentence once, with the full stop of its own script where it has one", () => {
    const turns = [
      turn(0, "user", "I live in Pune and I work as a nurse at the city hospital."),
      turn(1, "assistant", "आपसे मिलकर बहुत खुशी हुई, पुणे एक सुंदर शहर है।"),
      turn(2, "assistant", "很高兴认识你，北京是一个美丽的城市。"),
    ];
    const { episode } = extractLocally({
      turns,
      path: "batch",
      extractArtifacts: false,
      agentic: false,
      known: [],
    });
    expect(episode.summary).toBe(
      "The user lives in Pune and the user works as a nurse at the city hospital. " +
        "The assistant said: आपसे मिलकर बहुत खुशी हुई, पुणे एक सुंदर शहर है। " +
        "The assistant said: 很高兴认识你，北京是一个美丽的城市。",
    );
  });
});

describe("the local extractor on a long conversation", () => {
  const turns = Array.from({ length: 1200 }, (_, i) =>
    turn(i, i % 2 ? "assistant" : "user", `I moved to city number ${i} and I still live there.`),
  );
  const input = { turns, path: "batch" as const, extractArtifacts: false, agentic: false, known: [] };

  it("gives the event loop turns while it works, with the same result as in one go", async () => {
    let finished = false;
    let servedMeanwhile = false;
    setImmediate(() => {
      servedMeanwhile = !finished;
    });
    const stepped = await createLocalExtractor()
      .extract(input)
      .then((ex) => {
        finished = true;
        return ex;
      });
    expect(servedMeanwhile).toBe(true);
    expect(stepped).toEqual(extractLocally(input));
    expect(stepped.facts.length).toBeGreaterThanOrEqual(600); // the user turns (the assistant's "I ..." are offers)
  });
});

describe("a whole fact without its superseded clauses (what is kept of it)", () => {
  it.each([
    [
      "On 6 January 2025, the user works as a nurse at Mercy Hospital in Ottawa. The user has two kids.",
      ["On 6 January 2025, the user works as a nurse at Mercy Hospital in Ottawa."],
      "On 6 January 2025, the user has two kids.",
    ],
    ["The user lives in Paris and the user has a dog.", ["The user lives in Paris."], "The user has a dog."],
    [
      "On 3 May 2024, the user has a dog and the user lives in Paris.",
      ["On 3 May 2024, the user lives in Paris."],
      "On 3 May 2024, the user has a dog.",
    ],
    ["The user lives in Paris.", ["The user lives in Paris."], null],
    // A verb phrase sharing the subject goes with its clause, never left without its subject.
    [
      "On 1 February 2025, the user lives in Denver and works as an accountant at Deloitte.",
      ["On 1 February 2025, the user lives in Denver."],
      null,
    ],
    [
      "On 1 February 2025, the user lives in Denver and works as an accountant at Deloitte, and the user's wife Priya is a teacher.",
      ["On 1 February 2025, the user lives in Denver."],
      "On 1 February 2025, the user's wife Priya is a teacher.",
    ],
    // Every clause superseded goes, the one superseded before too.
    [
      "The user's wife Priya is a teacher, and the user works as an accountant at Deloitte. The user lives in Denver. The user has a dog.",
      ["The user works as an accountant at Deloitte.", "The user lives in Denver."],
      "The user's wife Priya is a teacher. The user has a dog.",
    ],
    // Another's possessive is no claim of the user's.
    ["The user's sister lives in Paris.", ["The user lives in Paris."], "The user's sister lives in Paris."],
    // Items joined by "and" are no clauses.
    ["The user has a cat and a big dog.", ["The user has a cat."], null],
  ])("%s without %j", (text, dropped, want) => {
    expect(restOf(text, (c) => dropped.some((d) => holdsClaim(c, d)))).toBe(want);
  });
});
