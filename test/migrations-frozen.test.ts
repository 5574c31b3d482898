import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "./helpers/process.js";

/**
 * A released migration is never changed: a database that ran it keeps what it made, and a change
 * reaches only new databases (the first sql/100 left every upgraded database without a function
 * search calls; sql/102 repairs it). sql/released.sha256 records each migration's content
 * (`sha256sum` output); a new migration is added to it, and a change to one listed fails here:
 * write a new migration instead.
 */
describe("migrations", () => {
  const dir = path.join(ROOT, "sql");
  const recorded = new Map(
    readFileSync(path.join(dir, "released.sha256"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((line) => {
        const [hash, file] = line.split(/\s+/);
        return [file!, hash!] as const;
      }),
  );
  const files = readdirSync(dir).filter((f) => /^\d+_.+\.sql$/.test(f));

  it("are each recorded in sql/released.sha256, and none has changed since", () => {
    const changed = files.filter(
      (f) =>
        createHash("sha256")
          .update(readFileSync(path.join(dir, f)))
          .digest("hex") !== recorded.get(f),
    );
    expect(changed, "changed or unrecorded: write a new migration, and record it").toEqual([]);
    expect(
      [...recorded.keys()].filter((f) => !files.includes(f)),
      "recorded but gone",
    ).toEqual([]);
  });

  it("have versions of their own", () => {
    const versions = files.map((f) => Number.parseInt(f, 10));
    expect(new Set(versions).size).toBe(versions.length);
  });
});
