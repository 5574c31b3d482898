import { describe, expect, it } from "vitest";
import { BarChart } from "../console/components.js";
import { Markdown } from "../console/markdown.js";
import { parseTranscript } from "../console/transcript.js";

const html = async (node: unknown) =>
  String(await (node as { toString(): string | Promise<string> }).toString());

describe("console transcript paste", () => {
  it("reads Speaker: text lines, mapping User/Assistant and keeping names; continuation lines join", () => {
    expect(
      parseTranscript(
        "User: I moved to Lisbon.\nassistant: Nice!\nCaroline: See https://x.example/a\nand more",
      ),
    ).toEqual([
      { role: "user", content: "I moved to Lisbon." },
      { role: "assistant", content: "Nice!" },
      { role: "Caroline", content: "See https://x.example/a\nand more" },
    ]);
  });

  it("takes a line for a new speaker only when a role or a name opens it: a time or a sentence before a colon continues the message", () => {
    expect(
      parseTranscript(
        [
          "User: Remind me about the dentist.",
          "It is on Friday at 10:15.",
          "Now I wake at 7:30 every morning.",
          "Here is the plan: run, then swim.",
          "Dr. Ana Lima: Good plan.",
          "user:no space after a role",
          "SPEAKER_01: My sister lives in Oslo.",
          "Speaker 2: Nice.",
          "John Smith (CEO): Welcome.",
          "Dr. Ana Maria Lima: Thanks.",
          "agent-7: Logged.",
          "Bob:I live in Rome.",
          "See https://x.example/a for more.",
        ].join("\n"),
      ),
    ).toEqual([
      {
        role: "user",
        content:
          "Remind me about the dentist.\nIt is on Friday at 10:15.\nNow I wake at 7:30 every morning.\nHere is the plan: run, then swim.",
      },
      { role: "Dr. Ana Lima", content: "Good plan." },
      { role: "user", content: "no space after a role" },
      { role: "SPEAKER_01", content: "My sister lives in Oslo." },
      { role: "Speaker 2", content: "Nice." },
      { role: "John Smith (CEO)", content: "Welcome." },
      { role: "Dr. Ana Maria Lima", content: "Thanks." },
      { role: "agent-7", content: "Logged." },
      { role: "Bob", content: "I live in Rome.\nSee https://x.example/a for more." },
    ]);
    // A diarised transcript, every speaker a label of its own.
    expect(
      parseTranscript("Speaker 1: I moved to Paris last month.\nSpeaker 2: Nice! I'm still in Rome."),
    ).toEqual([
      { role: "Speaker 1", content: "I moved to Paris last month." },
      { role: "Speaker 2", content: "Nice! I'm still in Rome." },
    ]);
  });

  it("reads a JSON array or a {messages} object as it is", () => {
    const messages = [{ role: "user", content: "hi", date: "2023-05-08" }];
    expect(parseTranscript(JSON.stringify(messages))).toEqual(messages);
    expect(parseTranscript(JSON.stringify({ messages }))).toEqual(messages);
  });

  it("refuses what it cannot read with invalid_messages", () => {
    for (const bad of ["", "   ", "[not json", '{"role": "user"}', "no speaker here"]) {
      expect(() => parseTranscript(bad), bad).toThrowError(
        expect.objectContaining({ code: "invalid_messages" }),
      );
    }
  });
});

describe("console markdown", () => {
  it("renders headings, lists and inline marks as elements and escapes everything else", async () => {
    const out = await html(
      Markdown({
        text: '## Relevant\n\n### Facts\n- **A** <b>x</b> `c` _e_\n1. one\n2. two\n\nplain "text"',
      }),
    );
    expect(out).toContain("<h3>Relevant</h3>");
    expect(out).toContain("<h4>Facts</h4>");
    expect(out).toContain(
      "<ul><li><strong>A</strong> &lt;b&gt;x&lt;/b&gt; <code>c</code> <em>e</em></li></ul>",
    );
    expect(out).toContain("<ol><li>one</li><li>two</li></ol>");
    expect(out).toContain("<p>plain &quot;text&quot;</p>");
    expect(out).not.toContain("<b>");
  });

  it("reads underscores inside a name as the name's, not as emphasis", async () => {
    const out = await html(Markdown({ text: "- CI red: test_checkout_total fails; _(unverified)_" }));
    expect(out).toContain("test_checkout_total");
    expect(out).toContain("<em>(unverified)</em>");
    expect(out).not.toContain("test<em>");
  });
});

describe("console charts", () => {
  it("draws one bar per day and series, on an axis of whole-number steps", async () => {
    const out = await html(
      BarChart({
        label: "x",
        labels: ["2026-11-01", "2026-11-02", "2026-11-03"],
        series: [
          { name: "ok", cls: "ok", values: [0, 36, 2] },
          { name: "bad", cls: "bad", values: [1, 0, 0] },
        ],
      }),
    );
    expect(out.match(/<rect class="bar ok"/g)).toHaveLength(3);
    expect(out.match(/<rect class="bar bad"/g)).toHaveLength(3);
    const ticks = [...out.matchAll(/<text class="axis"[^>]*text-anchor="end">([^<]+)</g)].map((m) => m[1]);
    expect(ticks).toEqual(["0", "10", "20", "30", "40"]);
    expect(out).toContain("ok: 38");
    expect(out).not.toContain("style=");
  });
});
