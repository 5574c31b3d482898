import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemCtx } from "../src/context.js";
import { identifiersFromAction, identifiersFromText } from "../src/identifiers/identifiers.js";
import { otherHalf, restates, reverses } from "../src/ingest/reversal.js";
import { type MemoryInput, writeMemories } from "../src/memories/write.js";
import { directivesInSteps, extractDirectives } from "../src/providers/local/directives.js";
import { BECAUSE_MAX } from "../src/trigger/gate.js";
import { renderDirectives } from "../src/trigger/render.js";
import { startTestService, type TestService, withConfig } from "./helpers/harness.js";
import { type StubLlm, startStubLlm } from "./helpers/stub-llm.js";
import { turn } from "./helpers/turns.js";

let svc: TestService;
let stub: StubLlm;
beforeAll(async () => {
  svc = await startTestService({ workers: false, env: { MNEMO_LLM_MAX_RETRIES: "0" } });
  stub = await startStubLlm();
});
afterAll(async () => {
  await stub?.close();
  await svc?.stop();
});

const seed = (orgId: string, rows: MemoryInput[]) => writeMemories(systemCtx(svc.deps, orgId, "seed"), rows);
const trigger = (key: string, body: unknown) => svc.request("POST", "/v1/memories/trigger", { key, body });
const lesson = (text: string, trigger_entities: string[], extra: Partial<MemoryInput> = {}): MemoryInput => ({
  type: "lesson",
  text,
  user_id: "u",
  trigger_entities,
  outcome: "resolved",
  ...extra,
});

describe("identifier extraction", () => {
  it("pulls paths, base names, qualified names, identifiers, error classes, commands and flags", () => {
    const ids = identifiersFromAction({
      tool: "bash",
      args: {
        command: "git push --force origin main && pytest -x tests/test_api.py",
        nested: { deep: [{ note: "call parse_config then loadSettings on HttpClient2" }] },
      },
      output:
        "Traceback: ModuleNotFoundError: No module named 'requests'\n at sqlalchemy.orm.Session (src/db/pool.ts:12:4) " +
        "use std::collections::HashMap; ECONNREFUSED",
    });
    for (const want of [
      "bash",
      "git",
      "pytest",
      "--force",
      "-x",
      "tests/test_api.py",
      "test_api.py",
      "parse_config",
      "loadSettings",
      "HttpClient2",
      "ModuleNotFoundError",
      "sqlalchemy.orm.Session",
      "src/db/pool.ts",
      "pool.ts",
      "std::collections::HashMap",
      "HashMap",
      "ECONNREFUSED",
    ]) {
      expect(ids, want).toContain(want);
    }
    for (const common of [
      "the",
      "then",
      "call",
      "on",
      "No",
      "module",
      "named",
      "origin",
      "main",
      "at",
      "use",
    ]) {
      expect(ids, common).not.toContain(common);
    }
  });

  it("takes the command a package runner runs", () => {
    // `npx yarn@1 add x` runs yarn: a yarn rule must hear it (it heard only `npx`).
    const ids = identifiersFromAction({ tool: "Bash", args: { command: "npx --yes yarn@1 add left-pad" } });
    expect(ids).toEqual(expect.arrayContaining(["npx", "yarn"]));
    expect(identifiersFromAction({ tool: "Bash", args: { command: "bunx prettier --check ." } })).toContain(
      "prettier",
    );
  });

  it("takes a dotfile a rule names, and a call touches (.env, .npmrc), not a sentence's dot", () => {
    expect(identifiersFromText("Never commit the .env file.")).toEqual([".env"]);
    expect(identifiersFromText("Never commit `.env` to git.")).toEqual([".env", "git"]);
    expect(identifiersFromAction({ tool: "Write", args: { file_path: "/app/.env" } })).toContain(".env");
    expect(identifiersFromAction({ tool: "Bash", args: { command: "git add .env .npmrc" } })).toEqual(
      expect.arrayContaining([".env", ".npmrc"]),
    );
    expect(identifiersFromText("It ended there. Then we left.")).toEqual([]);
    const [lesson] = extractDirectives([turn(0, "user", "Never commit the .env file.")]);
    expect(lesson).toMatchObject({ type: "lesson", trigger_entities: [".env"] });
  });

  it("learns from npm's own error output, and triggers on rm and on a conventional file's name", () => {
    const [fix] = extractDirectives([
      turn(0, "tool", "npm ERR! code ERESOLVE\nnpm ERR! ERESOLVE unable to resolve dependency tree"),
      turn(1, "assistant", "The ERESOLVE error was fixed by adding --legacy-peer-deps to npm install."),
    ]);
    expect(fix).toMatchObject({ type: "lesson" });
    expect(fix!.trigger_entities).toEqual(expect.arrayContaining(["ERESOLVE", "npm", "--legacy-peer-deps"]));
    expect(fix!.trigger_entities).not.toContain("ERR");
    const [rm] = extractDirectives([turn(0, "user", "Never run rm -rf in the repo root.")]);
    expect(rm?.trigger_entities).toEqual(["rm"]);
    expect(identifiersFromAction({ tool: "Bash", args: { command: "rm -rf build" } })).toContain("rm");
    const [readme] = extractDirectives([
      turn(0, "user", "When you write a README, always include a Usage section."),
    ]);
    expect(readme?.trigger_entities).toEqual(["README"]);
    expect(identifiersFromAction({ tool: "Edit", args: { file_path: "/x/README.md" } })).toContain("README");
    expect(identifiersFromAction({ tool: "Edit", args: { file_path: "docs/guide.md" } })).not.toContain(
      "guide",
    );
  });

  it("takes the advice a confirmation answers as the fix, not the thanks", () => {
    const [lesson] = extractDirectives([
      turn(0, "user", "Running pytest fails with: ModuleNotFoundError: No module named 'app'"),
      turn(1, "assistant", "Add an empty conftest.py at the repo root so pytest puts the root on sys.path."),
      turn(2, "user", "That fixed it, thanks."),
    ]);
    expect(lesson!.text).toBe(
      `When "Running pytest fails with: ModuleNotFoundError: No module named 'app'" occurs: Add an empty conftest.py at the repo root so pytest puts the root on sys.path.`,
    );
    expect(lesson!.trigger_entities).toEqual(expect.arrayContaining(["ModuleNotFoundError", "conftest.py"]));
    expect(lesson!.source_event_ids).toEqual(["0", "1", "2"]);
    // "Yes that worked!" says the same, with no word of fixing.
    const [worked] = extractDirectives([
      turn(0, "user", "npm install fails: npm ERR! code ERESOLVE with react-dom"),
      turn(1, "assistant", "Run npm install --legacy-peer-deps to skip the peer check."),
      turn(2, "user", "Yes that worked!"),
    ]);
    expect(worked!.text).toMatch(/occurs: Run npm install --legacy-peer-deps to skip the peer check\.$/);
    // The agent carries the advice out before the user confirms it: the tool turns between are no
    // advice, the turn before them is.
    const carriedOut = extractDirectives([
      turn(0, "tool", "[error] Error: listen EADDRINUSE: address already in use :::5432"),
      turn(
        1,
        "assistant",
        "Port 5432 is taken by a local Postgres. Stop it with `brew services stop postgresql@16`.",
      ),
      turn(2, "tool", 'call: {"command":"brew services stop postgresql@16"}'),
      turn(3, "tool", "Successfully stopped `postgresql@16`"),
      turn(4, "user", "Yes that worked!"),
    ]);
    expect(carriedOut.map((d) => d.text)).toContain(
      'When "Error: listen EADDRINUSE: address already in use :::5432" occurs: Port 5432 is taken by a local Postgres. Stop it with `brew services stop postgresql@16`.',
    );
    // Advice that names the error answers it (no new error), and is the fix, not also a rule.
    const named = extractDirectives([
      turn(0, "user", "npm install fails with npm ERR! code ERESOLVE"),
      turn(1, "assistant", "Use npm install --legacy-peer-deps instead, to get past ERESOLVE."),
      turn(2, "user", "That fixed it, thanks"),
    ]);
    expect(named.map((d) => d.text)).toEqual([
      `When "npm install fails with npm ERR! code ERESOLVE" occurs: Use npm install --legacy-peer-deps instead, to get past ERESOLVE.`,
    ]);
    // No advice before the confirmation (the error's own turn): no lesson made of thanks.
    expect(
      extractDirectives([
        turn(0, "user", "Error: ECONNREFUSED when the app starts"),
        turn(1, "user", "That fixed it, thanks."),
      ]).filter((d) => /thanks/.test(d.text)),
    ).toEqual([]);
  });

  it("names a Python traceback's error by the exception it ends with", () => {
    const [lesson] = extractDirectives([
      turn(
        0,
        "tool",
        [
          "[error] Traceback (most recent call last):",
          '  File "/srv/app/billing/invoice.py", line 12, in total',
          "    raise InvalidCurrencyError(code)",
          "billing.errors.InvalidCurrencyError: eur",
        ].join("\n"),
      ),
      turn(1, "assistant", "Fixed it: currency codes are upper-cased in to_cents before the lookup."),
    ]);
    expect(lesson!.text).toMatch(/^When "billing\.errors\.InvalidCurrencyError: eur" occurs: /);
    expect(lesson!.trigger_entities).toEqual(expect.arrayContaining(["InvalidCurrencyError"]));
  });

  it("reads 'stop using X' and 'go back to X' as rules", () => {
    for (const said of ["Stop using yarn; we use pnpm now.", "Actually, go back to pnpm, stop using yarn."]) {
      const [rule] = extractDirectives([turn(0, "user", said)]);
      expect(rule?.trigger_entities, said).toEqual(expect.arrayContaining(["yarn", "pnpm"]));
    }
  });

  it("reads a capitalised command name as the command (Docker, Yarn, a label 'Git:'), not any capitalised word", () => {
    for (const [said, ids] of [
      ["Never run Docker on this laptop.", ["docker"]],
      ["Please always use Yarn for this project.", ["yarn"]],
      ["Git: always rebase, never merge when pulling.", ["git"]],
      [
        "I don't think we should use Docker for local dev anymore, it's too heavy on my MacBook.",
        ["MacBook", "docker"],
      ],
    ] as const) {
      const [rule] = extractDirectives([turn(0, "user", said)]);
      expect(rule?.trigger_entities.sort(), said).toEqual([...ids].sort());
    }
    // A capitalised word whose lower case is no command, or is an English word ("kind"), is none.
    expect(identifiersFromText("Kind regards, Maria. Sales asked what kind of Report it is.")).toEqual([]);
  });

  it("reads a capitalised command name as the command only where it is used as a tool, not as a name, a place or a topic", () => {
    for (const [said, ids] of [
      ["Never use Docker or Podman here, and avoid Yarn.", ["docker", "podman", "yarn"]],
      ["We switched to Yarn last year, stop using Npm.", ["yarn", "npm"]],
      ["- Git: never rebase a shared branch.", ["git"]],
      ["Always build the image with `Docker build .` first.", ["docker"]],
      // A person, an insult, a place, a topic of opinion: no tool.
      ["I met Gem at the conference, she always brings cookies.", []],
      ["My grandma always calls me a silly Git when I forget her birthday.", []],
      ["We always visit Java island in August, never in the rainy season.", []],
      ["I always take the dog to the Docker Street park on Saturdays.", []],
      ["Python is great, I always use it for data analysis at work.", []],
    ] as const) {
      expect([said, identifiersFromText(said).filter((id) => id === id.toLowerCase())]).toEqual([
        said,
        [...ids],
      ]);
      if (ids.length === 0) expect([said, extractDirectives([turn(0, "user", said)])]).toEqual([said, []]);
    }
  });

  it("takes no rule from another person's habit or words ('my wife always buys yarn', 'my dad always said never ...')", () => {
    const rules = (said: string) => extractDirectives([turn(0, "user", said)]).map((d) => d.trigger_entities);
    for (const said of [
      "My wife always buys yarn at the farmers market on Saturdays.",
      "My dad always said never trust a python script you didn't write.",
      "Alice always uses yarn for her knitting, she never runs out.",
      "My roommate should never use git, he breaks everything.",
    ])
      expect([said, rules(said)]).toEqual([said, []]);
    // The speakers' own rule, said in passing or as their own words, still is one.
    expect(rules("I always say never use yarn in this repo.")).toEqual([["yarn"]]);
    expect(rules("In this repo we should always use pnpm.")).toEqual([["pnpm"]]);
    expect(rules("The deploys are slow, so you must never run npm audit fix on CI.")).toEqual([["npm"]]);
  });

  it("reads the first word of a command line in a code span as its command, even an English word (`make lint`, `go test`)", () => {
    expect(identifiersFromText("You should always run `make lint` before committing.")).toEqual(["make"]);
    expect(identifiersFromText("Always run `go test ./...` before pushing.")).toContain("go");
    expect(identifiersFromAction({ tool: "Bash", args: { command: "make lint" } })).toContain("make");
    // In prose, or a code span that is no command line, "make" and "go" stay English words.
    expect(identifiersFromText("Make sure to always water the plants, then go for a walk.")).toEqual([]);
    expect(identifiersFromText("Type `make sure` in the box.")).toEqual([]);
    expect(
      identifiersFromAction({ tool: "Bash", args: { command: "ls", description: "make the list" } }),
    ).not.toContain("make");
    // The assistant's advice the user agrees to is the rule, triggered by `make`.
    const [rule] = extractDirectives([
      turn(0, "assistant", "You should always run `make lint` before committing."),
      turn(1, "user", "Yes, do that."),
    ]);
    expect(rule?.trigger_entities).toEqual(["make"]);
  });

  it("finds nothing in plain prose", () => {
    expect(identifiersFromAction({ args: { text: "Please fix the error in this file now." } })).toEqual([]);
  });

  it("takes no acronym that names a kind of thing, and keeps command names", () => {
    const ids = identifiersFromAction({
      tool: "bash",
      args: { command: "aws s3 ls" },
      output: "the AWS CLI v2 reads JSON",
    });
    expect(ids).toContain("aws");
    for (const kind of ["CLI", "JSON"]) expect(ids).not.toContain(kind);
  });
});

describe("directives learned without a model", () => {
  it("are triggered by their specific identifiers, not by a one-letter flag beside them", () => {
    const ds = extractDirectives([
      turn(0, "tool", "Error: ECONNREFUSED 127.0.0.1:5432"),
      turn(
        1,
        "assistant",
        "The fix was to start the database first with docker compose up -d postgres, then rerun migrate.ts.",
      ),
    ]);
    const lesson = ds.find((d) => d.type === "lesson")!;
    expect(lesson.trigger_entities).toContain("ECONNREFUSED");
    expect(lesson.trigger_entities).toContain("migrate.ts");
    expect(lesson.trigger_entities).not.toContain("-d");
  });

  it("learn the fix of an error from a reply that names the error again", () => {
    const [lesson] = extractDirectives([
      turn(
        0,
        "tool",
        "TypeError: Cannot read properties of undefined at createPool (src/db/pool.ts:12:5)\nError: connect ECONNREFUSED 127.0.0.1:5432",
      ),
      turn(
        1,
        "assistant",
        "The ECONNREFUSED error happens because postgres was not running; it was fixed by starting postgres with docker compose up -d db.",
      ),
    ]);
    expect(lesson?.type).toBe("lesson");
    expect(lesson?.text).toMatch(/^When "TypeError: .*fixed by starting postgres/);
    expect(lesson?.trigger_entities).toEqual(
      expect.arrayContaining(["TypeError", "createPool", "ECONNREFUSED"]),
    );
  });

  it("are triggered by the commands a rule names in prose, and never by a lone one-letter flag", async () => {
    const [rule] = extractDirectives([
      turn(0, "user", "always start the database with docker compose up -d before running npm test"),
    ]);
    expect(rule?.type).toBe("lesson");
    expect(rule?.trigger_entities.sort()).toEqual(["docker", "npm"]);
    // A rule whose only identifier is a flag would fire on any command carrying it: none is kept.
    expect(extractDirectives([turn(0, "user", "never use ls -l in scripts")])).toEqual([]);
    // "Remember:" leads a rule; it names no speaker.
    const [remembered] = extractDirectives([
      turn(0, "user", "Remember: always run npm run lint before git commit."),
    ]);
    expect(remembered?.trigger_entities.sort()).toEqual(["git", "npm"]);

    // Stored as extracted, the rule is recalled by `npm test`, not by `git branch -d`.
    const { key, orgId } = await svc.newOrg("prose-commands");
    await seed(orgId, [lesson(rule!.text, rule!.trigger_entities, { user_id: "a1" })]);
    const call = (cmd: string) =>
      trigger(key, { user_id: "a1", action: { tool: "bash", args: { cmd } }, mode: "retrieve" });
    const unrelated = await call("git branch -d old");
    expect(unrelated.status).toBe(200);
    expect(unrelated.body.data).toEqual([]);
    const related = await call("npm test");
    expect(related.body.data.map((d: { text: string }) => d.text)).toEqual([rule!.text]);
  });
});

describe("directives from a coding agent's transcript, as the Stop hook sends it", () => {
  it("learns no rule or fix from a tool's own turn, and keeps the error marker out of the lesson", () => {
    const ds = extractDirectives([
      turn(
        0,
        "tool",
        "[error] remote: error: GH006: Protected branch update failed for refs/heads/main. Changes must be made through a pull request.",
      ),
      turn(1, "tool", 'call: {"command":"git push origin HEAD:fix/cart-total && gh pr create --fill"}'),
      turn(
        2,
        "assistant",
        "Never push directly to main in this repo; open a pull request with `gh pr create` instead.",
      ),
    ]);
    // "must" in the tool's output and "fix/" in a branch name made two junk lessons.
    expect(ds.map((d) => d.text)).toEqual([
      "Never push directly to main in this repo; open a pull request with `gh pr create` instead.",
    ]);
    const fixed = extractDirectives([
      turn(0, "tool", "[error] Error: listen EADDRINUSE: address already in use :::3000"),
      turn(
        1,
        "assistant",
        "The fix was to stop the old server on port 3000 with `lsof -ti :3000 | xargs kill`.",
      ),
    ]);
    expect(fixed[0]?.text).toMatch(/^When "Error: listen EADDRINUSE/);
    // "-ti" (two short flags run together) is in half the commands of a shell: no trigger.
    expect(fixed[0]?.trigger_entities).toEqual(expect.arrayContaining(["EADDRINUSE", "lsof", "xargs"]));
    expect(fixed[0]?.trigger_entities).not.toContain("-ti");
  });

  it("takes the line that names the error, not a marked failure's first line; no status word or flag cluster triggers", () => {
    const [lesson] = extractDirectives([
      turn(0, "tool", 'call: {"command":"npm test"}'),
      turn(
        1,
        "tool",
        '[error] > shop-api@2.3.0 test\n> vitest run\n\n FAIL  test/cart.test.ts > totals\nerror: relation "carts" does not exist\nnpm ERR! Test failed.',
      ),
      turn(
        2,
        "assistant",
        "Fixed by running `npm run db:migrate` first, then `curl -fsS localhost:3000/health`.",
      ),
    ]);
    // It read `When "> shop-api@2.3.0 test" occurs`, and FAIL (vitest's status word) triggered it
    // on any failing test run; "-fsS" (three short flags run together) on any curl.
    expect(lesson?.text).toMatch(/^When "error: relation "carts" does not exist" occurs/);
    expect(lesson?.trigger_entities).toContain("npm");
    expect(lesson?.trigger_entities).not.toContain("FAIL");
    expect(lesson?.trigger_entities).not.toContain("-fsS");
    expect(identifiersFromText(" FAIL  tests/test_api.py::test_login")).not.toContain("FAIL");
  });

  it("keeps the user's rule, not the assistant's acknowledgement of it", () => {
    const ds = extractDirectives([
      turn(0, "user", "Actually yarn is fine now, we switched back. Use yarn from now on, not pnpm."),
      turn(1, "assistant", "Understood: I'll use yarn for this project instead of pnpm."),
    ]);
    // The acknowledgement was a lesson too, and the trigger ranked it above the user's rule.
    expect(ds.map((d) => d.text)).toEqual(["Use yarn from now on, not pnpm."]);
  });

  it("states the fix of an error once, not again as a rule of its own", () => {
    const ds = extractDirectives([
      turn(
        0,
        "tool",
        "FAILED tests/test_cart.py::test_checkout_total - AssertionError: assert 10.0 == Decimal('10.00')",
      ),
      turn(1, "assistant", "The fix is to always return a Decimal from Cart.total instead of a float."),
    ]);
    expect(ds).toHaveLength(1);
    expect(ds[0]!.text).toMatch(/^When "FAILED .*" occurs: The fix is to always return a Decimal/);
    // A test run's status word is no identifier: it would fire on every failing test.
    expect(ds[0]!.trigger_entities).not.toContain("FAILED");
    expect(ds[0]!.trigger_entities).toEqual(expect.arrayContaining(["Cart.total", "AssertionError"]));
  });

  it.each([
    [
      "Note for next time: on this machine psql needs PGHOST=127.0.0.1 and PGPORT=5433.",
      ["psql", "PGHOST", "PGPORT"],
    ],
    [
      "When adding a workspace package, add it to the paths map in tsconfig.base.json, not tsconfig.json.",
      ["tsconfig.base.json"],
    ],
    ["Use pnpm instead of yarn in this workspace.", ["pnpm", "yarn"]],
  ])("takes %s as a rule", (text, ids) => {
    const [rule] = extractDirectives([turn(0, "user", text)]);
    expect(rule?.type).toBe("lesson");
    expect(rule?.trigger_entities).toEqual(expect.arrayContaining(ids));
  });

  it("reads a long transcript in steps, pausing once a step has run its time, with the same directives", () => {
    const turns = Array.from({ length: 600 }, (_, i) =>
      turn(i, "user", i === 599 ? "Always run `npm run lint` before git commit." : `Turn ${i} says nothing.`),
    );
    const pausesOf = (stepMs: number) => {
      const steps = directivesInSteps(turns, stepMs);
      let pauses = 0;
      let step = steps.next();
      for (; !step.done; step = steps.next()) pauses++;
      return { pauses, value: step.value };
    };
    // No time at all: a pause before every turn. All the time in the world: none.
    const every = pausesOf(0);
    expect(every.pauses).toBe(600);
    expect(pausesOf(Number.POSITIVE_INFINITY).pauses).toBe(0);
    expect(every.value).toEqual(extractDirectives(turns));
    expect(every.value.map((d) => d.trigger_entities.sort())).toEqual([["git", "npm"]]);
  });

  it("composes a procedure whose text lists its steps with the steps once", () => {
    const [proc] = extractDirectives([
      turn(0, "user", "Release checklist:\n1. Bump the version in package.json\n2. Run `npm publish`"),
    ]);
    const block = renderDirectives([
      {
        row: { ...proc!, id: "p", outcome: "resolved", details: { steps: proc!.steps } } as never,
        matchedOn: ["npm"],
        verdict: { keep: true, because: "", confidence: 1 },
      },
    ]);
    // The steps followed the text that already listed them: twice the tokens in every hook.
    expect(block.match(/Bump the version/g)).toHaveLength(1);
    expect(block).toContain("1. Bump the version in package.json 2. Run `npm publish`");
  });

  it("does not take a narration or a plain statement with an identifier for a rule", () => {
    expect(
      extractDirectives([turn(0, "assistant", "When I ran tsconfig.json through tsc, it printed nothing.")]),
    ).toEqual([]);
    expect(extractDirectives([turn(0, "user", "I opened package.json yesterday.")])).toEqual([]);
    // The weaker cues ("needs", "need to") make a rule only with something technical in it.
    expect(
      extractDirectives([turn(0, "user", "The LGBTQ community needs more platforms like this!")]),
    ).toEqual([]);
    expect(
      extractDirectives([turn(0, "user", "We need to get the word out about the chili cook-off.")]),
    ).toEqual([]);
  });

  it("reads bullets under a line that introduces steps as a procedure, and other bullets as none", () => {
    const [proc] = extractDirectives([
      turn(
        0,
        "user",
        "To rotate the signing key:\n- Generate a new key with `openssl rand -base64 48`\n- Store it with `vault kv put secret/signing key=...`\n- Restart the api with `systemctl restart api`",
      ),
    ]);
    expect(proc?.type).toBe("procedure");
    expect(proc?.steps).toHaveLength(3);
    expect(proc?.text).toMatch(/^To rotate the signing key:\n1\. Generate a new key/);
    expect(proc?.trigger_entities).toEqual(expect.arrayContaining(["openssl", "vault", "systemctl"]));
    const list = extractDirectives([
      turn(0, "user", "My favourite tools:\n- `jq` for JSON\n- `rg` for search"),
    ]);
    expect(list.filter((d) => d.type === "procedure")).toEqual([]);
  });
});

describe("one instruction list is one procedure", () => {
  const read = (...contents: [string, string][]) =>
    extractDirectives(contents.map(([role, content], k) => turn(k, role, content))).map((d) => [
      d.type,
      d.text.split("\n")[0],
    ]);
  it.each([
    [
      "To release:\n1. Run `pnpm build`\n2. Run `pnpm test` and make sure it is green\n3. Run `pnpm publish`",
      "To release:",
    ],
    ["Deploy checklist:\n- Make sure `pnpm test` passes\n- Run `fly deploy`", "Deploy checklist:"],
    [
      "Steps to rotate the key:\n\n1. You must stop the api with `systemctl stop api`\n2. Run `vault rotate`",
      "Steps to rotate the key:",
    ],
  ])(
    "stores the list %j as its procedure only, though a step says 'make sure' or 'must'",
    (said, heading) => {
      expect(read(["user", said])).toEqual([["procedure", heading]]);
    },
  );

  it("keeps a rule said beside the list, and a list that fixes an earlier error as the fix", () => {
    // Also on the line that introduces the list.
    for (const said of [
      "Never deploy on Fridays with `fly deploy`.\nTo release:\n1. Run `pnpm build`\n2. Make sure `pnpm test` is green",
      "Never deploy on Fridays with `fly deploy`. To release:\n1. Run `pnpm build`\n2. Make sure `pnpm test` is green",
    ])
      expect(read(["user", said]).map(([type, text]) => (type === "lesson" ? text : type))).toEqual([
        "procedure",
        "Never deploy on Fridays with `fly deploy`.",
      ]);
    expect(
      read(
        ["tool", "npm ERR! code ERESOLVE"],
        ["user", "The fix was:\n1. Delete node_modules\n2. Run `npm install --legacy-peer-deps`"],
      ),
    ).toEqual([
      ["procedure", "The fix was:"],
      [
        "lesson",
        'When "npm ERR! code ERESOLVE" occurs: The fix was: Delete node_modules; Run `npm install --legacy-peer-deps`.',
      ],
    ]);
  });
});

describe("a rule is asked for by the user", () => {
  const proposal = "I will create parser.test.js using jest to cover the parser.";
  it.each([
    ["No, we use vitest, not jest.", "We use vitest, not jest.", ["vitest", "jest"]],
    ["Nope, the entry point is src/main.ts.", "The entry point is src/main.ts.", ["src/main.ts"]],
    [
      "Actually, the config lives in config/app.yaml, not in .env.",
      "The config lives in config/app.yaml, not in .env.",
      ["config/app.yaml", ".env"],
    ],
    [
      "Wrong, the tests live in spec/, run them with rspec.",
      "The tests live in spec/, run them with rspec.",
      ["rspec"],
    ],
  ])("takes the correction %s of the assistant's proposal as a lesson", (said, text, ids) => {
    const ds = extractDirectives([turn(0, "assistant", proposal), turn(1, "user", said)]);
    expect(ds.map((d) => d.text)).toEqual([text]);
    expect(ds[0]!.trigger_entities).toEqual(expect.arrayContaining(ids));
  });

  it("takes the program of the assistant's command a correction answers as a trigger too, and recalls the lesson before it runs again", async () => {
    const corrected = (before: string[][], said: string) =>
      extractDirectives(
        [...before, ["user", said]].map(([role, content], k) => turn(k, role!, content!)),
      ).map((d) => [d.text, d.trigger_entities]);
    const npm = [
      ["user", "Add zod to the api package."],
      ["assistant", "I'll run `npm install zod` in packages/api."],
    ];
    // Said as one short clause naming the program to use instead, the lesson names what it replaces.
    expect(corrected(npm, "No, we use pnpm.")).toEqual([["We use pnpm, not npm.", ["pnpm", "npm"]]]);
    expect(corrected(npm, "No, the lockfile is pnpm-lock.yaml, so use pnpm.")).toEqual([
      ["The lockfile is pnpm-lock.yaml, so use pnpm.", ["pnpm-lock.yaml", "pnpm", "npm"]],
    ]);
    // A package runner is not what the reply corrects, the command it runs is.
    expect(
      corrected([["assistant", "I'll run `npx vitest run` now."]], "Nope, run the tests with `node --test`."),
    ).toEqual([["Run the tests with `node --test`, not vitest.", ["node", "--test", "vitest"]]]);
    // Alternatives for the same job of other ecosystems, too.
    expect(corrected([["assistant", "I'll run `docker build -t api .`"]], "No, we use podman.")).toEqual([
      ["We use podman, not docker.", ["podman", "docker"]],
    ]);
    expect(corrected([["assistant", "I'll run `pip install requests`."]], "No, use poetry.")).toEqual([
      ["Use poetry, not pip.", ["poetry", "pip"]],
    ]);
    // Said with it already, the program is not listed twice.
    expect(corrected(npm, "No, we use pnpm, not npm.")).toEqual([["We use pnpm, not npm.", ["pnpm", "npm"]]]);
    // Not the turn just before (a tool's output came between), or several commands named: which
    // one the reply sets right is not said.
    expect(corrected([...npm, ["tool", "added 1 package"]], "No, we use pnpm.")).toEqual([
      ["We use pnpm.", ["pnpm"]],
    ]);
    expect(
      corrected(
        [["assistant", "I'll start `docker compose up -d`, then run `npm test`."]],
        "No, we use pnpm.",
      ),
    ).toEqual([["We use pnpm.", ["pnpm"]]]);

    const { orgId, key } = await svc.newOrg();
    const [lessonOf] = extractDirectives(
      [...npm, ["user", "No, we use pnpm."]].map(([r, c], k) => turn(k, r!, c!)),
    );
    await seed(orgId, [lesson(lessonOf!.text, lessonOf!.trigger_entities, { outcome: null })]);
    const res = await trigger(key, {
      user_id: "u",
      mode: "retrieve",
      action: { tool: "Bash", args: { command: "npm install lodash" } },
    });
    expect(res.body.data.map((r: any) => [r.text, r.details.matched_on])).toEqual([
      ["We use pnpm, not npm.", ["npm"]],
    ]);
    // Under a task that shares no word with it, it is kept as a rule about the command the call
    // runs, since its text names npm as a word; a text that holds "npm" only inside "pnpm" does not.
    const call = { tool: "Bash", args: { command: "npm install lodash" } };
    const composed = await trigger(key, { user_id: "u", task: "add lodash to the dashboard", action: call });
    expect(composed.body.data.map((r: any) => r.text)).toEqual(["We use pnpm, not npm."]);
    const other = await svc.newOrg();
    await seed(other.orgId, [lesson("We use pnpm.", ["pnpm", "npm"], { outcome: null })]);
    const inside = await trigger(other.key, {
      user_id: "u",
      mode: "retrieve",
      task: "add lodash to the dashboard",
      action: call,
    });
    expect(inside.body.data).toHaveLength(1);
    const gated = await trigger(other.key, {
      user_id: "u",
      task: "add lodash to the dashboard",
      action: call,
    });
    expect(gated.body.data).toEqual([]);
  });

  it.each([
    ["I'll check with `git status` first.", "No, we use pnpm.", "We use pnpm.", ["pnpm"]],
    ["I'll start it with `node server.js`.", "No, use docker compose.", "Use docker compose.", ["docker"]],
    ["I'll run `kubectl apply -f k8s/staging.yaml`.", "No, we use helm.", "We use helm.", ["helm"]],
  ])(
    "does not name the assistant's command (%s) as replaced by a program of another job (%s)",
    (cmd, said, text, ids) => {
      const ds = extractDirectives(
        [
          ["user", "Please do it."],
          ["assistant", cmd],
          ["user", said],
          ["assistant", "Okay, switching."],
        ].map(([role, content], k) => turn(k, role!, content!)),
      );
      expect(ds.map((d) => [d.text, d.trigger_entities])).toEqual([[text, ids]]);
    },
  );

  it("reads no correction in a 'No' that answers a question, nor in the assistant's own 'Actually'", () => {
    const asked = "Have you set up vitest for the parser yet?";
    expect(
      extractDirectives([turn(0, "assistant", asked), turn(1, "user", "No, I haven't touched vitest.")]),
    ).toEqual([]);
    expect(
      extractDirectives([
        turn(0, "user", "Where is the config?"),
        turn(1, "assistant", "Actually, the config lives in config/app.yaml."),
      ]),
    ).toEqual([]);
    // "No need to ..." is a rule as said (its "No" opens the sentence, it is no correction's).
    expect(
      extractDirectives([
        turn(0, "assistant", proposal),
        turn(1, "user", "No need to mock parser.ts there."),
      ]).map((d) => d.text),
    ).toEqual(["No need to mock parser.ts there."]);
  });

  it.each([
    "My old team never used pytest, they used unittest.",
    "We should have used pnpm from the start.",
    "I'm not sure if we should use poetry or pip-tools.",
    "I wonder whether we should never use docker compose here.",
    "If we ever adopt Kubernetes, we should use helm charts for deploys.",
    "If we ever move to a monorepo, use pnpm workspaces.",
  ])("takes no rule from a narration, a doubt or a hypothetical: %s", (said) => {
    expect(extractDirectives([turn(0, "user", said)])).toEqual([]);
  });

  it("takes the assistant's own advice for a rule only when the user agrees to it next", () => {
    const advice = "You should also run `pnpm lint --fix` before every commit to keep things clean.";
    const secrets = "You must never store secrets in .env files committed to git.";
    for (const said of [advice, secrets])
      expect(extractDirectives([turn(0, "user", "Set up the repo."), turn(1, "assistant", said)])).toEqual(
        [],
      );
    expect(
      extractDirectives([turn(0, "assistant", advice), turn(1, "user", "Ok, now add the login route.")]),
    ).toEqual([]);
    const agreed = extractDirectives([
      turn(0, "assistant", advice),
      turn(1, "user", "Yes, good idea, do that."),
    ]);
    expect(agreed.map((d) => [d.text, d.trigger_entities])).toEqual([[advice, ["pnpm", "--fix"]]]);
    // The user's own "must", "should", "never" inside a sentence stay rules.
    expect(
      extractDirectives([
        turn(0, "user", "Commits must pass `pnpm lint` first, and we should never skip husky."),
      ]),
    ).toHaveLength(1);
  });

  it("takes no rule from the assistant's example, offer or experience unless the user agrees next", () => {
    const user = turn(0, "user", "How should I split my budget?");
    expect(
      extractDirectives([
        user,
        turn(
          1,
          "assistant",
          "I've found that the 50/30/20 rule works for most people: 50% needs, 30% wants, 20% savings.",
        ),
      ]),
    ).toEqual([]);
    const conditional = "If the build fails again, run `npm ci` first.";
    for (const said of [
      conditional,
      "If you'd like, I'll run `npm ci --prefer-offline` for you next time.",
      "For example, you could run `npm ci` instead of npm install.",
    ])
      expect(extractDirectives([user, turn(1, "assistant", said)]), said).toEqual([]);
    expect(
      extractDirectives([turn(0, "assistant", conditional), turn(1, "user", "Yes, do that.")]).map(
        (d) => d.text,
      ),
    ).toEqual([conditional]);
  });

  it.each([
    ["From now on, run cargo clippy before cargo test.", ["cargo"]],
    ["If the deploy ever hangs, restart it with `systemctl restart api`.", ["systemctl"]],
    ["Going forward, use uv instead of pip.", ["uv", "pip"]],
  ])("takes %s as a rule", (said, ids) => {
    const [rule] = extractDirectives([turn(0, "user", said)]);
    expect(rule?.text).toBe(said);
    expect(rule?.trigger_entities).toEqual(ids);
  });
});

describe("a lesson reversing another", () => {
  const l = (text: string, trigger_entities: string[]) => ({ text, trigger_entities });
  it("is a choice taken the other way, not agreement, another tool, or a way of running one", () => {
    const pnpm = l("Never use yarn here, use pnpm.", ["yarn", "pnpm"]);
    expect(reverses(l("Use yarn from now on, not pnpm.", ["yarn", "pnpm"]), pnpm)).toBe(true);
    expect(reverses(l("Prefer yarn over pnpm.", ["yarn", "pnpm"]), pnpm)).toBe(true);
    expect(reverses(l("Don’t use pnpm anymore.", ["pnpm"]), pnpm)).toBe(true);
    expect(reverses(l("Use pnpm instead of yarn in this repo.", ["pnpm", "yarn"]), pnpm)).toBe(false);
    expect(
      reverses(l("Use pnpm, never npm.", ["pnpm", "npm"]), l("Use bun, never npm.", ["bun", "npm"])),
    ).toBe(false);
    expect(
      reverses(
        l("Always run tests with vitest --run.", ["vitest"]),
        l("Don't run vitest in watch mode.", ["vitest"]),
      ),
    ).toBe(false);
    expect(reverses(l("Use yarn.", ["yarn"]), l("Run the build after yarn install.", ["yarn"]))).toBe(false);
  });

  it.each([
    // Another program for the same command, another version, or a tool the newer rule ends.
    [
      "Always run `pnpm test` before committing.",
      ["pnpm"],
      "Always run `npm test` before committing.",
      ["npm"],
      true,
    ],
    [
      "Always run `nvm use 22`, not 18.",
      ["nvm"],
      "Always use Node 18: run `nvm use 18` first.",
      ["nvm", "node"],
      true,
    ],
    [
      "Don't run eslint anymore, run `pnpm biome check --write` before pushing.",
      ["pnpm", "--write", "eslint", "biome"],
      "Always run `npm run lint` before pushing, ESLint catches a lot.",
      ["npm"],
      true,
    ],
    // Two rules sharing a program, another subcommand, paths, rules each scoped their own way, a
    // way of running a tool, a scoped end of a tool, and a command said under a negation stay.
    [
      "Always run `npm run lint` before pushing.",
      ["npm"],
      "Always run `npm test` before committing.",
      ["npm"],
      false,
    ],
    [
      "Always run `nvm use 18` for the legacy app.",
      ["nvm"],
      "Always run `nvm use 22` for the webapp.",
      ["nvm"],
      false,
    ],
    ["Never edit `src/b.ts` by hand.", ["src/b.ts"], "Never edit `src/a.ts` by hand.", ["src/a.ts"], false],
    ["Always run `git pull` first.", ["git"], "Always run `git push` first.", ["git"], false],
    [
      "Don't run vitest in watch mode.",
      ["vitest"],
      "Run `vitest run` before committing, vitest is fast.",
      ["vitest"],
      false,
    ],
    [
      "For the e2e suite, don't use vitest anymore.",
      ["vitest"],
      "Always run `vitest run` for unit tests.",
      ["vitest"],
      false,
    ],
    ["Don't run `pnpm test` in CI.", ["pnpm"], "Always run `npm test` in CI.", ["npm"], false],
  ])("%s (%j) after %s (%j) reverses it: %s", (newer, mine, older, theirs, expected) => {
    expect(reverses(l(newer as string, mine as string[]), l(older as string, theirs as string[]))).toBe(
      expected,
    );
  });

  it("leaves the other side said (otherHalf), and a rule said again whole or in part restates it", () => {
    const pnpm = l("Don't use yarn in this repo, use pnpm instead.", ["yarn", "pnpm"]);
    expect(otherHalf(l("Actually, go back to yarn.", ["yarn"]), pnpm)).toEqual(["pnpm"]);
    // Said already, or no choice taken the other way: nothing to add.
    expect(otherHalf(l("Use yarn, not pnpm.", ["yarn", "pnpm"]), pnpm)).toEqual([]);
    expect(otherHalf(l("Don't use pnpm anymore.", ["pnpm"]), pnpm)).toEqual([]);
    const completed = l("Go back to yarn, not pnpm.", ["yarn", "pnpm"]);
    expect(restates(l("Go back to yarn.", ["yarn"]), completed)).toBe(true);
    expect(restates(l("Use pnpm.", ["pnpm"]), completed)).toBe(false);
    expect(restates(l("For the e2e suite, go back to yarn.", ["yarn"]), completed)).toBe(false);
    // An entity neither takes a side on is no obstacle when both name it.
    const web = l("Don't use npm in packages/web, use pnpm.", ["npm", "packages/web", "pnpm"]);
    expect(
      restates(l("Please don't use npm in packages/web, use pnpm.", ["npm", "packages/web", "pnpm"]), web),
    ).toBe(true);
  });
});

describe("paths and file names in any script", () => {
  it("are identifiers as ASCII ones are, and a lesson about one fires on a call editing it", async () => {
    for (const [path, base] of [
      ["src/données/schéma.sql", "schéma.sql"],
      ["src/数据/模型.sql", "模型.sql"],
      ["src/generated/schema.sql", "schema.sql"],
    ]) {
      const [rule] = extractDirectives([
        turn(0, "user", `Never edit ${path} by hand; run \`pnpm gen:schema\` instead.`),
      ]);
      expect(rule?.type, path).toBe("lesson");
      expect(rule?.trigger_entities, path).toEqual(expect.arrayContaining(["pnpm", path, base]));
    }
    expect(identifiersFromText("Open Café.md, not naïve_notes.txt")).toEqual(["Café.md", "naïve_notes.txt"]);
    const [rule] = extractDirectives([
      turn(0, "user", "Never edit src/données/schéma.sql by hand; run `pnpm gen:schéma` instead."),
    ]);
    const { key, orgId } = await svc.newOrg("unicode-paths");
    await seed(orgId, [lesson(rule!.text, rule!.trigger_entities, { user_id: "a1" })]);
    const edit = await trigger(key, {
      user_id: "a1",
      mode: "retrieve",
      action: { tool: "Edit", args: { file_path: "/home/x/proj/src/données/schéma.sql" } },
    });
    expect(edit.status).toBe(200);
    expect(edit.body.data.map((d: { text: string }) => d.text)).toEqual([rule!.text]);
    const named = await trigger(key, { user_id: "a1", mode: "retrieve", entities: ["schéma.sql"] });
    expect(named.body.data.map((d: { text: string }) => d.text)).toEqual([rule!.text]);
  });

  it("match with or without Latin accents, either way, and not across other scripts (sql/106)", async () => {
    const { key, orgId } = await svc.newOrg("accents");
    const [accented, plain, cyrillic] = await seed(orgId, [
      lesson("Never edit the generated schéma.sql by hand", ["src/données/schéma.sql"]),
      lesson("Ask Zoe before touching the billing code", ["Zoe"]),
      lesson("Run йогурт.sh with sudo", ["йогурт.sh"]),
    ]);
    const hits = async (body: Record<string, unknown>) => {
      const res = await trigger(key, { user_id: "u", mode: "retrieve", ...body });
      expect(res.status).toBe(200);
      return res.body.data.map((d: { text: string; details: { matched_on: string[] } }) => [
        d.text,
        d.details.matched_on,
      ]);
    };
    const schema = ["Never edit the generated schéma.sql by hand", ["src/données/schéma.sql"]];
    const zoe = ["Ask Zoe before touching the billing code", ["Zoe"]];
    for (const path of [
      "/repo/src/donnees/schema.sql",
      "/repo/src/données/schéma.sql",
      "/repo/src/donne\u0301es/sche\u0301ma.sql",
    ])
      expect(await hits({ action: { tool: "Edit", args: { file_path: path } } }), path).toEqual([schema]);
    expect(await hits({ entities: ["schema.sql"] })).toEqual([schema]);
    expect(await hits({ entities: ["Zoë"] })).toEqual([zoe]);
    expect(await hits({ entities: ["Zoe"] })).toEqual([zoe]);
    // Other scripts stay as written: и is not й.
    expect(await hits({ entities: ["иогурт.sh"] })).toEqual([]);
    expect(await hits({ entities: ["йогурт.sh"] })).toEqual([["Run йогурт.sh with sudo", ["йогурт.sh"]]]);
    // A directive stored before sql/106 (trigger_keys as sql/030 made them) is still triggered by
    // its entities as written, and by their folded form once the upgrade derives its keys again.
    const db = svc.deps.db;
    const keysOf = async (id: string) =>
      (await db.query<{ k: string[] }>("SELECT trigger_keys AS k FROM memories WHERE id = $1", [id])).rows[0]!
        .k;
    expect(await keysOf(accented!.id)).toEqual(
      expect.arrayContaining([
        "src/donnees/schema.sql",
        "schema.sql",
        "src/données/schéma.sql",
        "schéma.sql",
      ]),
    );
    expect((await keysOf(plain!.id)).sort()).toEqual(["Zoe"]);
    expect(await keysOf(cyrillic!.id)).toEqual(["йогурт.sh"]);
    const sql = readFileSync(new URL("../sql/106_accent_folding.sql", import.meta.url), "utf8");
    const keysFunction = sql.slice(sql.indexOf("CREATE OR REPLACE FUNCTION mnemo_trigger_keys"));
    const old = readFileSync(new URL("../sql/030_search.sql", import.meta.url), "utf8");
    await db.query(
      old
        .slice(old.indexOf("CREATE FUNCTION mnemo_trigger_keys"), old.indexOf("ALTER TABLE memories"))
        .replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION"),
    );
    try {
      await db.query("UPDATE memories SET trigger_entities = trigger_entities WHERE org_id = $1", [orgId]);
    } finally {
      await db.query(keysFunction.slice(0, keysFunction.indexOf("-- Memories whose index")));
    }
    expect((await keysOf(accented!.id)).sort()).toEqual(["schéma.sql", "src/données/schéma.sql"]);
    expect(await hits({ entities: ["schéma.sql"] })).toEqual([schema]);
    expect(await hits({ entities: ["schema.sql"] })).toEqual([]);
    // The upgrade's own pass (the test database is far below its 50,000-row bound).
    await db.query(sql.slice(sql.indexOf("DO $$")));
    expect(await hits({ entities: ["schema.sql"] })).toEqual([schema]);
  });
});

describe("trigger matching", () => {
  it("matches exactly, by base name for paths, across nested args, and fills matched_on", async () => {
    const { orgId, key } = await svc.newOrg();
    await seed(orgId, [
      lesson("Pool size must stay below 60", ["src/db/pool.ts"]),
      lesson("Install requests in the venv first", ["ModuleNotFoundError"]),
      lesson("HashMap iteration order is random", ["std::collections::HashMap"]),
      lesson("Never force-push to main", ["--force", "git"]),
      lesson("parse_config reads TOML only", ["parse_config"]),
      lesson("Unrelated advice", ["somethingElse"]),
      lesson("Case matters", ["Pool.TS"]),
    ]);
    const res = await trigger(key, {
      user_id: "u",
      mode: "retrieve",
      action: {
        tool: "edit_file",
        args: { path: "/repo/src/db/pool.ts", edits: [{ meta: { comment: "see parse_config" } }] },
        output: "ModuleNotFoundError: No module named 'requests'",
      },
    });
    expect(res.status).toBe(200);
    const byText = Object.fromEntries(res.body.data.map((r: any) => [r.text, r]));
    expect(Object.keys(byText).sort()).toEqual([
      "Install requests in the venv first",
      "Pool size must stay below 60",
      "parse_config reads TOML only",
    ]);
    expect(byText["Pool size must stay below 60"].details.matched_on).toEqual(["src/db/pool.ts"]);
    expect(byText["Install requests in the venv first"].details.matched_on).toEqual(["ModuleNotFoundError"]);
    for (const r of res.body.data) {
      expect(r).toMatchObject({ type: "lesson", score: null });
      expect(r.details).toMatchObject({ because: null, confidence: null, source_outcome: "resolved" });
    }
    expect(res.body).toMatchObject({ mode: "retrieve", context: null, context_selection_applied: false });
    expect(Object.keys(res.body.stage_timings).sort()).toEqual(["extract_entities", "match", "total"]);

    const shell = await trigger(key, {
      user_id: "u",
      mode: "retrieve",
      action: { tool: "bash", args: { command: "git push --force origin main" } },
    });
    expect(shell.body.data.map((r: any) => r.text)).toEqual(["Never force-push to main"]);
    expect(shell.body.data[0].details.matched_on.sort()).toEqual(["--force", "git"]);

    const given = await trigger(key, {
      user_id: "u",
      mode: "retrieve",
      entities: ["std::collections::HashMap"],
    });
    expect(given.body.data.map((r: any) => r.text)).toEqual(["HashMap iteration order is random"]);
  });

  it("matched_on is what the request hit; a generic directory name is no identifier of its own", async () => {
    const { orgId, key } = await svc.newOrg();
    await seed(orgId, [
      lesson("Run migrate.ts with the lock held", ["src/db/migrate.ts", "migrate.ts"]),
      lesson("Pool size must stay below 60", ["src/db/pool.ts"]),
      lesson("Always check the logs in /var/log/app before restarting", ["/var/log/app", "app"]),
    ]);
    const hit = async (body: object) =>
      Object.fromEntries(
        (await trigger(key, { user_id: "u", mode: "retrieve", ...body })).body.data.map((r: any) => [
          r.text,
          r.details.matched_on,
        ]),
      );
    // Another file of the same name hits the base name, not the directive's path.
    expect(await hit({ action: { tool: "Write", args: { file_path: "lib/other/migrate.ts" } } })).toEqual({
      "Run migrate.ts with the lock held": ["migrate.ts"],
    });
    expect(await hit({ entities: ["migrate.ts"] })).toEqual({
      "Run migrate.ts with the lock held": ["migrate.ts"],
    });
    // The path itself hits both; a path entity without its base name is hit by its base name.
    expect(await hit({ entities: ["src/db/migrate.ts"] })).toEqual({
      "Run migrate.ts with the lock held": ["src/db/migrate.ts", "migrate.ts"],
    });
    expect(await hit({ entities: ["pool.ts"] })).toEqual({
      "Pool size must stay below 60": ["src/db/pool.ts"],
    });
    // An agent names the file by its absolute path (or with ./): the project's path inside it is
    // hit, with the base name, and the lesson is kept under a task that says nothing of it.
    for (const file_path of ["/home/dev/shop/src/db/migrate.ts", "./src/db/migrate.ts"]) {
      const edit = { action: { tool: "Edit", args: { file_path, old_string: "a", new_string: "b" } } };
      expect(await hit(edit)).toEqual({
        "Run migrate.ts with the lock held": ["src/db/migrate.ts", "migrate.ts"],
      });
      const composed = await trigger(key, { user_id: "u", ...edit, task: "Add an index on invoices" });
      expect(composed.body.data.map((r: any) => r.text)).toEqual(["Run migrate.ts with the lock held"]);
    }
    // `app` at the end of another path is not the lesson's /var/log/app, in retrieve or compose.
    const elsewhere = { action: { tool: "Read", args: { file_path: "/home/me/web/app" } } };
    expect(await hit(elsewhere)).toEqual({});
    const composed = await trigger(key, { user_id: "u", ...elsewhere, task: "fix the login page css" });
    expect(composed.body.data).toEqual([]);
    expect(identifiersFromAction({ tool: "Read", args: { file_path: "/srv/web/app" } })).not.toContain("app");
    expect(identifiersFromAction({ tool: "Read", args: { file_path: "/srv/web/billing" } })).toContain(
      "billing",
    );
    expect(await hit({ action: { tool: "Read", args: { file_path: "/var/log/app" } } })).toEqual({
      "Always check the logs in /var/log/app before restarting": ["/var/log/app"],
    });
  });

  it("a rule about a directory is hit by a call on a file inside it, by its relative or absolute path", async () => {
    const { orgId, key } = await svc.newOrg();
    await seed(orgId, [
      lesson("Never edit an applied migration in db/migrations, add a new one.", [
        "db/migrations",
        "migrations",
      ]),
      lesson("Put nginx sites in /etc/nginx/sites-available/.", [
        "/etc/nginx/sites-available/",
        "sites-available",
      ]),
      lesson("Pool size must stay below 60", ["src/db/pool.ts"]),
    ]);
    const hit = async (file_path: string) =>
      Object.fromEntries(
        (
          await trigger(key, {
            user_id: "u",
            mode: "retrieve",
            action: { tool: "Write", args: { file_path } },
          })
        ).body.data.map((r: any) => [r.text.split(" ").slice(0, 3).join(" "), r.details.matched_on]),
      );
    for (const file_path of [
      "db/migrations/0042_add_orders.sql",
      "./db/migrations/0042_add_orders.sql",
      "/home/dev/shop/db/migrations/0042_add_orders.sql",
    ])
      expect([file_path, await hit(file_path)]).toEqual([file_path, { "Never edit an": ["db/migrations"] }]);
    expect(await hit("/etc/nginx/sites-available/shop.conf")).toEqual({
      "Put nginx sites": ["/etc/nginx/sites-available/"],
    });
    // Another directory of the same name, a file beside the directory, or the directory's parent:
    // not inside it. A directory is not hit by a file it holds either (the call's side grows, not the rule's).
    expect(await hit("lib/migrations/0042_add_orders.sql")).toEqual({});
    expect(await hit("db/seeds.sql")).toEqual({});
    expect(await hit("src/db")).toEqual({});
    // Under compose the rule bears on the call, whatever the task says.
    const composed = await trigger(key, {
      user_id: "u",
      action: { tool: "Edit", args: { file_path: "/home/dev/shop/db/migrations/0042_add_orders.sql" } },
      task: "add an orders table",
    });
    expect(composed.body.data.map((r: any) => r.text)).toEqual([
      "Never edit an applied migration in db/migrations, add a new one.",
    ]);
  });

  it("applies namespace narrowing without hiding global directives, include, outcome and scope", async () => {
    const { orgId, key } = await svc.newOrg();
    await seed(orgId, [
      lesson("Global lesson", ["deploy.sh"]),
      lesson("Project A lesson", ["deploy.sh"], { namespace: "proj-a" }),
      lesson("Project B lesson", ["deploy.sh"], { namespace: "proj-b" }),
      lesson("Failed attempt", ["deploy.sh"], { outcome: "failed" }),
      lesson("Unverified hunch", ["deploy.sh"], { outcome: null }),
      lesson("Other user's lesson", ["deploy.sh"], { user_id: "someone-else" }),
      {
        type: "procedure",
        text: "Deploy the service",
        user_id: "u",
        trigger_entities: ["deploy.sh"],
        outcome: "resolved",
        details: { steps: ["Build the image", "Run deploy.sh"] },
      },
    ]);
    const names = (res: any) => res.body.data.map((r: any) => r.text).sort();
    const base = { user_id: "u", mode: "retrieve", entities: ["deploy.sh"] };
    expect(names(await trigger(key, { ...base, namespace: "proj-a" }))).toEqual([
      "Deploy the service",
      "Global lesson",
      "Project A lesson",
      "Unverified hunch",
    ]);
    expect(names(await trigger(key, base))).toEqual([
      "Deploy the service",
      "Global lesson",
      "Project A lesson",
      "Project B lesson",
      "Unverified hunch",
    ]);
    expect(names(await trigger(key, { ...base, include: ["procedure"] }))).toEqual(["Deploy the service"]);

    const composed = await trigger(key, { ...base, mode: "compose", namespace: "proj-b" });
    expect(composed.status).toBe(200);
    expect(composed.body.context).toContain("- Global lesson");
    expect(composed.body.context).toContain("- (unverified) Unverified hunch");
    expect(composed.body.context).toContain("1. Build the image\n   2. Run deploy.sh");
    expect(composed.body.context).not.toContain("Failed attempt");
    expect(composed.body.context).not.toContain("Project A");
  });

  it("rejects a missing trigger and a missing scope", async () => {
    const { key } = await svc.newOrg();
    const noTrigger = await trigger(key, { user_id: "u" });
    expect(noTrigger.status).toBe(422);
    expect(noTrigger.body.detail.code).toBe("missing_trigger");
    for (const body of [{ entities: ["x_y"] }, { entities: ["x_y"], group_ids: [""] }]) {
      const noScope = await trigger(key, body);
      expect(noScope.status).toBe(422);
      expect(noScope.body.detail.code).toBe("missing_scope");
    }
    const nul = await trigger(key, {
      user_id: "u",
      action: { tool: "ba\u0000sh", args: { a: "x_y\u0000z_w" } },
    });
    expect(nul.status).toBe(200);
    const tooLong = await trigger(key, { user_id: "u", entities: ["x"], namespace: "n".repeat(257) });
    expect(tooLong.status).toBe(422);
    expect(tooLong.body.detail).toEqual({
      code: "namespace_too_long",
      message: expect.any(String),
      field: "namespace",
    });
    expect(tooLong.body.error.details.issues[0].loc).toEqual(["body", "namespace"]);
    const task = await trigger(key, { user_id: "u", entities: ["x"], task: "t".repeat(2001) });
    expect(task.body.detail).toMatchObject({ code: "task_too_long", field: "task" });
    const include = await trigger(key, { user_id: "u", entities: ["x"], include: ["lesson", "fact"] });
    expect(include.status).toBe(422);
    expect(include.body.detail).toMatchObject({ code: "unsupported_include_option", field: "include[1]" });
    expect(include.body.error).toMatchObject({
      type: "invalid_request_error",
      code: "unsupported_include_option",
    });
  });

  it("refuses tool arguments nested past 32 levels (a 500 at 5,000), keeps those at 32", async () => {
    const { key } = await svc.newOrg();
    const nest = (levels: number): unknown => (levels === 0 ? "deploy.sh" : [nest(levels - 1)]);
    // Written as text: JSON.stringify itself overflows at this depth.
    const deepBody = `{"user_id":"u","action":{"tool":"bash","args":{"x":${"[".repeat(5000)}"deploy.sh"${"]".repeat(5000)}}}}`;
    const deep = await trigger(key, deepBody);
    expect(deep.status).toBe(422);
    expect(deep.body.error).toMatchObject({ type: "invalid_request_error", code: "invalid_request" });
    expect(deep.body.detail).toEqual([
      { loc: ["body", "action", "args"], msg: "Tool arguments may nest at most 32 levels", type: "custom" },
    ]);
    // args itself is level 0: its value and 30 arrays below it are 32 levels of nesting.
    const ok = await trigger(key, { user_id: "u", action: { tool: "bash", args: { x: nest(31) } } });
    expect(ok.status).toBe(200);
    const over = await trigger(key, { user_id: "u", action: { tool: "bash", args: { x: nest(32) } } });
    expect(over.status).toBe(422);
  });
});

describe("usage", () => {
  it("counts each search and trigger call as a search", async () => {
    const { key } = await svc.newOrg();
    await trigger(key, { user_id: "u", entities: ["a_b"], mode: "retrieve" });
    await svc.request("POST", "/v1/memories/search", {
      key,
      body: { query: "x", user_id: "u", mode: "retrieve" },
    });
    await trigger(key, { user_id: "u" }); // rejected: not counted
    const usage = await svc.request("GET", "/v1/usage", { key });
    expect(usage.status).toBe(200);
    expect(usage.body.operations.searches).toBe(2);
  });
});

describe("trigger failures", () => {
  it("is 500 trigger_failed when the match cannot run", async () => {
    const { key } = await svc.newOrg();
    // Tests in a file run one after another, so the schema can be broken for this one briefly.
    await svc.deps.db.query("ALTER TABLE memories RENAME COLUMN trigger_keys TO trigger_keys_off");
    try {
      const res = await trigger(key, { user_id: "u", entities: ["a_b"] });
      expect(res.status).toBe(500);
      expect(res.body.detail.code).toBe("trigger_failed");
      expect(res.text).not.toContain("trigger_keys");
    } finally {
      await svc.deps.db.query("ALTER TABLE memories RENAME COLUMN trigger_keys_off TO trigger_keys");
    }
  });
});

describe("trigger relevance gate", () => {
  it("falls back to the lexical gate without a model: keeps relevant rows with because and confidence", async () => {
    const { orgId, key } = await svc.newOrg();
    await seed(orgId, [
      lesson("Run database migrations before starting the API server", ["migrate.ts"]),
      lesson("Use British spelling in the marketing copy", ["migrate.ts"]),
      lesson("Migrations need the DATABASE_URL variable", ["migrate.ts"], { outcome: null }),
    ]);
    const res = await trigger(key, {
      user_id: "u",
      entities: ["migrate.ts"],
      task: "Start the API server after running the database migrations",
    });
    expect(res.status).toBe(200);
    expect(res.body.context_selection_applied).toBe(false);
    const texts = res.body.data.map((r: any) => r.text);
    expect(texts).toContain("Run database migrations before starting the API server");
    expect(texts).not.toContain("Use British spelling in the marketing copy");
    for (const r of res.body.data) {
      expect(r.details.because).toMatch(/migrate\.ts/);
      expect(r.details.confidence).toBeGreaterThan(0);
      expect(r.details.confidence).toBeLessThanOrEqual(1);
    }
    expect(Object.keys(res.body.stage_timings)).toContain("gate");
    // `because` names the task's words as written, never their stems ("databas", "migr").
    const because = res.body.data.find((r: any) => r.text.startsWith("Run database")).details.because;
    expect(because).toMatch(/the task concerns .*\bdatabase\b/);
    expect(because).not.toMatch(/\bdatabas\b|\bserv\b|\bmigr\b/);
    const confidences = res.body.data.map((r: any) => r.details.confidence);
    expect([...confidences].sort((a, b) => b - a)).toEqual(confidences);
  });

  it("keeps a directive about the identifier the call uses, whatever the task; a long one that only mentions it must concern the task", async () => {
    const { orgId, key } = await svc.newOrg();
    await seed(orgId, [
      lesson("Don't use yarn here, use pnpm.", ["yarn", "pnpm"]),
      lesson("Release: bump the version, run npm publish, tag with git, draft notes with gh", [
        "npm",
        "git",
        "gh",
        "CHANGELOG.md",
        "package.json",
      ]),
    ]);
    const yarn = await trigger(key, {
      user_id: "u",
      action: { tool: "Bash", args: { command: "yarn add lodash" } },
      task: "add lodash to the dashboard",
    });
    // The task shares no word with the lesson; it was dropped, and the hook said nothing.
    expect(yarn.body.data.map((r: any) => r.text)).toEqual(["Don't use yarn here, use pnpm."]);
    expect(yarn.body.data[0].details.because).toBe("It matched on yarn, which the tool call uses.");
    const npm = await trigger(key, {
      user_id: "u",
      action: { tool: "Bash", args: { command: "npm run dev" } },
      task: "start the dev server",
    });
    expect(npm.body.data).toEqual([]);
    // One that names the very command the call runs bears on it, among three identifiers.
    await seed(orgId, [
      lesson("When ECONNREFUSED: start the database with docker compose up -d before running npm test.", [
        "ECONNREFUSED",
        "npm",
        "docker",
      ]),
    ]);
    const tests = await trigger(key, {
      user_id: "u",
      action: { tool: "Bash", args: { command: "npm test" } },
      task: "make the suite green",
    });
    expect(tests.body.data.map((r: any) => r.text)).toEqual([
      "When ECONNREFUSED: start the database with docker compose up -d before running npm test.",
    ]);
  });

  it("counts a path a call hit together with its base name: an edit inside `src/generated/` is what the rule is about", async () => {
    const { orgId, key } = await svc.newOrg();
    const [rule] = extractDirectives([
      turn(0, "user", "Never edit files under src/generated/ by hand; run `pnpm codegen` instead."),
    ]);
    expect(rule!.trigger_entities).toEqual(["pnpm", "src/generated/", "generated"]);
    await seed(orgId, [lesson(rule!.text, rule!.trigger_entities)]);
    const served = async (file_path: string) => {
      const res = await trigger(key, {
        user_id: "u",
        action: { tool: "Edit", args: { file_path, old_string: "a", new_string: "b" } },
        task: "fix the api client type",
      });
      expect(res.status).toBe(200);
      return res.body.data.map((r: any) => [r.details.matched_on, r.details.because]);
    };
    // The task shares no word with the rule; the call edits the very directory it forbids.
    for (const file_path of ["/home/dev/shop/src/generated/api.ts", "src/generated/api.ts"])
      expect(await served(file_path)).toEqual([
        [["src/generated/"], "It matched on src/generated/, which the tool call uses."],
      ]);
    // A base name met alone (another `generated`) is one of three: it must concern the task.
    expect(await served("tools/generated")).toEqual([]);
  });

  it("drops a rule about other uses of the command a call runs (rm -rf build/ before rm -rf node_modules)", async () => {
    const { orgId, key } = await svc.newOrg();
    await seed(orgId, [
      lesson("Never run rm -rf build/ while the dev server is running; stop it first.", ["rm"]),
      lesson("Always run git pull --rebase before you push.", ["git", "--rebase"]),
      lesson("Use npm ci instead of npm install in this repo.", ["npm"]),
      lesson("Don't use yarn here, use pnpm.", ["yarn", "pnpm"]),
    ]);
    const served = async (command: string, task?: string) => {
      const res = await trigger(key, { user_id: "u", action: { tool: "Bash", args: { command } }, task });
      expect(res.status).toBe(200);
      return res.body.data.map((r: any) => r.text.split(" ").slice(0, 3).join(" "));
    };
    // Other uses of the command: nothing to say about this call.
    expect(await served("rm -rf node_modules")).toEqual([]);
    expect(await served("git status")).toEqual([]);
    expect(await served("npm test")).toEqual([]);
    // Even when the task shares the rule's words, the call is not the use it names.
    expect(await served("rm -rf node_modules", "clean the build output")).toEqual([]);
    // The use it names, in any spelling of the call, or a word of the rule as the call's argument.
    expect(await served("rm -rf build/")).toEqual(["Never run rm"]);
    expect(await served("cd web && rm -rf ./build/cache")).toEqual(["Never run rm"]);
    expect(await served("git pull")).toEqual(["Always run git"]);
    expect(await served("git push origin main")).toEqual(["Always run git"]);
    expect(await served("npm install lodash")).toEqual(["Use npm ci"]);
    expect(await served("npx npm@10 ci")).toEqual(["Use npm ci"]);
    // A rule that names the command alone bears on every use of it.
    expect(await served("yarn add lodash")).toEqual(["Don't use yarn"]);
    // Under retrieve there is no gate: every exact match is listed.
    const all = await trigger(key, {
      user_id: "u",
      mode: "retrieve",
      action: { tool: "Bash", args: { command: "rm -rf node_modules" } },
    });
    expect(all.body.data.map((r: any) => r.text)).toEqual([
      "Never run rm -rf build/ while the dev server is running; stop it first.",
    ]);
  });

  it("serves a rule prescribing flags to a call that lacks them (`npx vitest run --coverage` before `npx vitest run`)", async () => {
    const { orgId, key } = await svc.newOrg();
    await seed(orgId, [
      lesson(
        "Always run `npx vitest run --coverage` in CI, never plain vitest.",
        ["npx", "vitest", "--coverage"],
        {
          user_id: "a",
        },
      ),
      lesson("Always run npx vitest run --coverage, never plain vitest.", ["npx", "vitest", "--coverage"], {
        user_id: "b",
      }),
    ]);
    const served = async (user_id: string, command: string) => {
      const res = await trigger(key, {
        user_id,
        action: { tool: "Bash", args: { command } },
        task: "run tests",
      });
      expect(res.status).toBe(200);
      return res.body.data.map((r: any) => r.text.replace(/`/g, "").split(" ").slice(0, 3).join(" "));
    };
    for (const user of ["a", "b"]) {
      // The call breaks the rule for lacking the flag: the flag is no use of vitest of its own.
      for (const command of ["npx vitest run", "npx vitest run src/cart.test.ts"])
        expect([user, command, await served(user, command)]).toEqual([user, command, ["Always run npx"]]);
    }
    // `run` is the use the rule names: another use of vitest is not what it is about.
    expect(await served("a", "npx vitest bench")).toEqual([]);
  });

  it("does not serve a rule about a flagged use for a call of that use without the flag (`git push --tags` before `git push origin feature-x`)", async () => {
    const { orgId, key } = await svc.newOrg();
    await seed(orgId, [
      // The goal names the flag: the rule is about pushing tags, not about every push.
      lesson("To publish tags, always run `git push --tags` after tagging.", ["git", "--tags"], {
        user_id: "a",
      }),
      lesson("Run git push --tags to publish a new tag.", ["git", "--tags"], { user_id: "b" }),
      lesson("When releasing a tag, use `git push --tags`.", ["git", "--tags"], { user_id: "c" }),
      // A rule about plain `git push` bears on every push.
      lesson("Always run `git push` after tagging.", ["git"], { user_id: "d" }),
      // A flag the rule prescribes, unconditionally or for a reason that is no goal of the call.
      lesson(
        "Always push with `git push --force-with-lease`, never with --force.",
        ["git", "--force-with-lease", "--force"],
        {
          user_id: "e",
        },
      ),
      lesson(
        "Always run `npx vitest run --coverage` in CI, because the build checks coverage.",
        ["npx", "vitest", "--coverage"],
        {
          user_id: "f",
        },
      ),
    ]);
    const served = async (user_id: string, command: string) => {
      const res = await trigger(key, {
        user_id,
        action: { tool: "Bash", args: { command } },
        task: "push the branch",
      });
      expect(res.status).toBe(200);
      return [user_id, command, res.body.data.length];
    };
    for (const user of ["a", "b", "c"]) {
      expect(await served(user, "git push origin feature-x")).toEqual([user, "git push origin feature-x", 0]);
      expect(await served(user, "git push")).toEqual([user, "git push", 0]);
      // The flagged use itself is served, with or without other arguments.
      expect(await served(user, "git push --tags")).toEqual([user, "git push --tags", 1]);
      expect(await served(user, "git push origin --tags")).toEqual([user, "git push origin --tags", 1]);
    }
    expect(await served("d", "git push origin feature-x")).toEqual(["d", "git push origin feature-x", 1]);
    expect(await served("e", "git push origin feature-x")).toEqual(["e", "git push origin feature-x", 1]);
    expect(await served("e", "git push --force-with-lease")).toEqual(["e", "git push --force-with-lease", 1]);
    expect(await served("f", "npx vitest run")).toEqual(["f", "npx vitest run", 1]);
    // Under retrieve there is no gate: the exact match on `git` is listed.
    const all = await trigger(key, {
      user_id: "a",
      mode: "retrieve",
      action: { tool: "Bash", args: { command: "git push origin feature-x" } },
    });
    expect(all.body.data.length).toBe(1);
  });

  it.each([
    [
      "When force pushing, always use `git push --force-with-lease` instead of `--force`.",
      "git push --force origin feature-x",
      "force push my rebased branch",
    ],
    [
      "When force pushing, always use `git push --force-with-lease` instead of `--force`.",
      "git push -f",
      "force push after the rebase",
    ],
    [
      "When force pushing, always use `git push --force-with-lease` instead of `--force`.",
      "git push --force",
      null,
    ],
    [
      "If you need to force push, use `git push --force-with-lease`, never plain --force.",
      "git push --force origin feature-x",
      "force push my rebased branch",
    ],
    [
      "If you need to force push, use `git push --force-with-lease`, never plain --force.",
      "git push -f",
      null,
    ],
  ])(
    "serves a rule that prescribes a flag instead of another form (%s) to a call of that form (%s)",
    async (text, command, task) => {
      const { orgId, key } = await svc.newOrg();
      await seed(orgId, [lesson(text, ["git", "--force-with-lease", "--force"])]);
      const res = await trigger(key, { user_id: "u", action: { tool: "Bash", args: { command } }, task });
      expect(res.status).toBe(200);
      expect(res.body.data.map((r: any) => r.text)).toEqual([text]);
    },
  );

  it("reads no use of the command in prose after it ('yarn, not pnpm'): such a rule bears on every call of it", async () => {
    const { orgId, key } = await svc.newOrg();
    await seed(orgId, [lesson("Go back to yarn, not pnpm.", ["yarn", "pnpm"])]);
    for (const command of ["yarn add lodash", "pnpm add lodash"]) {
      const res = await trigger(key, { user_id: "u", action: { tool: "Bash", args: { command } } });
      expect([command, res.body.data.map((r: any) => r.text)]).toEqual([
        command,
        ["Go back to yarn, not pnpm."],
      ]);
    }
  });

  it("reads a verb after a command in prose ('yarn breaks the lockfile') as no use of it, and a code span's word as one", async () => {
    const { orgId, key } = await svc.newOrg();
    await seed(orgId, [
      lesson("Don't use yarn in this repo, yarn breaks the workspace lockfile.", ["yarn"]),
      lesson("Never use pip here, pip installs into the system Python.", ["pip"]),
      lesson("Switch back to jest, vitest breaks our snapshot tests.", ["jest", "vitest"]),
      lesson("Git: always rebase, never merge when pulling.", ["git"]),
      lesson("When the api hangs, check `docker logs api` first.", ["docker"]),
    ]);
    const served = async (command: string, task = "get this done") => {
      const res = await trigger(key, { user_id: "u", action: { tool: "Bash", args: { command } }, task });
      expect(res.status).toBe(200);
      return res.body.data.map((r: any) => r.text.split(" ").slice(0, 3).join(" "));
    };
    expect(await served("yarn add lodash", "add lodash to the dashboard")).toEqual(["Don't use yarn"]);
    expect(await served("pip install requests", "fetch the rates")).toEqual(["Never use pip"]);
    expect(await served("npx vitest run")).toEqual(["Switch back to"]);
    expect(await served("git pull")).toEqual(["Git: always rebase,"]);
    // In a code span the word after the command is the use it names, whatever its form.
    expect(await served("docker compose up -d")).toEqual([]);
    expect(await served("docker logs api --tail 50")).toEqual(["When the api"]);
  });

  it("keeps exact matches when the task says nothing to gate against ('ok', 'go ahead')", async () => {
    const { orgId, key } = await svc.newOrg();
    await seed(orgId, [lesson("Run database migrations before starting the API server", ["migrate.ts"])]);
    for (const task of ["ok", "yes, do it", "go ahead"]) {
      const res = await trigger(key, { user_id: "u", entities: ["migrate.ts"], task });
      expect(res.status).toBe(200);
      expect([task, res.body.data.map((r: any) => r.text)]).toEqual([
        task,
        ["Run database migrations before starting the API server"],
      ]);
    }
  });

  it("asks the model when configured and keeps what it judges relevant", async () => {
    const { orgId, key } = await svc.newOrg();
    const [keep, drop] = await seed(orgId, [
      lesson("Restart the worker after changing queues.ts", ["queues.ts"]),
      lesson("queues.ts is formatted by biome", ["queues.ts"]),
    ]);
    const saved = svc.deps.providers.llm;
    svc.deps.providers.llm = stub.model;
    try {
      stub.requests.length = 0;
      stub.reply = () => ({
        verdicts: [
          { id: keep!.id, relevant: true, because: "The task changes the queues.", confidence: 0.9 },
          { id: drop!.id, relevant: false, because: "Formatting is not the task.", confidence: 0.1 },
        ],
      });
      const res = await trigger(key, {
        user_id: "u",
        action: { tool: "edit", args: { file: "jobs/queues.ts" } },
        task: "add a queue",
      });
      expect(res.status).toBe(200);
      expect(res.body.context_selection_applied).toBe(true);
      expect(res.body.data).toHaveLength(1);
      expect(res.body.data[0]).toMatchObject({ id: keep!.id });
      expect(res.body.data[0].details).toMatchObject({
        because: "The task changes the queues.",
        confidence: 0.9,
      });
      expect(res.body.context).toContain("Restart the worker");
      expect(stub.requests).toHaveLength(1);
      expect(JSON.stringify(stub.requests[0].messages)).toContain("add a queue");

      stub.reply = () => 500;
      const fallback = await trigger(key, {
        user_id: "u",
        entities: ["queues.ts"],
        task: "restart the worker",
      });
      expect(fallback.status).toBe(200);
      expect(fallback.body.context_selection_applied).toBe(false);
      expect(fallback.body.data.map((r: any) => r.id)).toContain(keep!.id);

      // A stuck model: the hook gets the lexical gate after MNEMO_LLM_REQUEST_TIMEOUT_MS, not
      // after MNEMO_LLM_TIMEOUT_MS (a minute), and not the model's late answer.
      stub.reply = () => new Promise((r) => setTimeout(() => r(500), 20_000));
      await withConfig(svc.deps, { MNEMO_LLM_REQUEST_TIMEOUT_MS: 300 }, async () => {
        const t = performance.now();
        const slow = await trigger(key, {
          user_id: "u",
          entities: ["queues.ts"],
          task: "restart the worker",
        });
        expect(performance.now() - t).toBeLessThan(10_000);
        expect(slow.status).toBe(200);
        expect(slow.body.context_selection_applied).toBe(false);
        expect(slow.body.data.map((r: any) => r.id)).toContain(keep!.id);
      });
    } finally {
      svc.deps.providers.llm = saved;
    }
  });

  it("masks a secret in the model's `because` as the turns' secrets are", async () => {
    const { orgId, key } = await svc.newOrg();
    const [keep] = await seed(orgId, [lesson("Export PGPASSWORD before running migrate.ts", ["migrate.ts"])]);
    const saved = svc.deps.providers.llm;
    svc.deps.providers.llm = stub.model;
    try {
      stub.reply = () => ({
        verdicts: [
          {
            id: keep!.id,
            relevant: true,
            because: "Use PGPASSWORD=hunter2secret and the key sk-proj-Abc123Def456Ghi789Jkl0 first.",
            confidence: 0.9,
          },
        ],
      });
      const res = await trigger(key, {
        user_id: "u",
        entities: ["migrate.ts"],
        task: "migrate the database",
      });
      expect(res.status).toBe(200);
      expect(res.body.data[0].details.because).toBe(
        "Use PGPASSWORD=[redacted secret] and the key [redacted API key] first.",
      );
    } finally {
      svc.deps.providers.llm = saved;
    }
  });

  it("serves the model's `because` cut to a sentence's length, and no verdict on a directive not asked about", async () => {
    const { orgId, key } = await svc.newOrg();
    const [rule] = await seed(orgId, [lesson("Always run npm ci before npm test", ["npm"])]);
    const saved = svc.deps.providers.llm;
    svc.deps.providers.llm = stub.model;
    try {
      stub.reply = () => ({
        verdicts: [
          {
            id: rule!.id,
            relevant: true,
            because: `${"B".repeat(2_000_000 - 2)}\ud83d\ude00`,
            confidence: 0.9,
          },
          { id: "mem_invented", relevant: true, because: "Made up.", confidence: 1 },
        ],
      });
      const res = await trigger(key, {
        user_id: "u",
        action: { tool: "Bash", args: { command: "npm test" } },
        task: "run the tests",
      });
      expect(res.status).toBe(200);
      expect(res.body.context_selection_applied).toBe(true);
      expect(res.body.data.map((r: any) => [r.id, r.details.because.length])).toEqual([
        [rule!.id, BECAUSE_MAX],
      ]);
      expect(res.text.length).toBeLessThan(10_000);
      // Cut where a character would be split: the emoji's first half is not served alone.
      stub.reply = () => ({
        verdicts: [
          {
            id: rule!.id,
            relevant: true,
            because: `${"B".repeat(BECAUSE_MAX - 1)}\ud83d\ude00`,
            confidence: 0.9,
          },
        ],
      });
      const cut = await trigger(key, { user_id: "u", entities: ["npm"], task: "run the tests" });
      expect(cut.body.data[0].details.because).toBe("B".repeat(BECAUSE_MAX - 1));
    } finally {
      svc.deps.providers.llm = saved;
    }
  });
});

describe("lessons from an error and its fix", () => {
  it.each([
    'psql: error: connection to server failed: FATAL: role "app" does not exist',
    "panic: runtime error: index out of range [3] with length 3",
    "[error] Command exited with code 1",
  ])("reads %s as the error a later fix answers", (error) => {
    const ds = extractDirectives([
      turn(0, "tool", error),
      turn(1, "assistant", "The fix was to create the role first with scripts/create_role.sql, then retry."),
    ]);
    const lesson = ds.find((d) => d.type === "lesson");
    expect(lesson?.text).toMatch(/^When ".*" occurs: The fix was/);
    expect(lesson?.trigger_entities).toContain("scripts/create_role.sql");
  });
});
