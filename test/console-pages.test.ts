import { pino } from "pino";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ConsoleClient } from "./helpers/console-client.js";
import { startTestService, type TestService } from "./helpers/harness.js";

/*
 * What a probe of the console found: bodies that are no form, controls a user's key cannot use,
 * whole texts in result tables, API wording in form errors, ids shown as they were sent.
 */

let svc: TestService;
/** Lines logged at warn level and above. */
const logged: string[] = [];
beforeAll(async () => {
  svc = await startTestService({
    workers: false,
    log: pino({ level: "warn" }, { write: (l: string) => logged.push(l) }),
  });
});
afterAll(async () => {
  await svc?.stop();
});
beforeEach(() => {
  logged.length = 0;
});

async function signedIn(key?: string) {
  const org = await svc.newOrg();
  const client = new ConsoleClient(svc.app);
  const res = await client.signIn(key ?? org.key);
  expect(res.status).toBe(303);
  return { ...org, client };
}

/** A raw post with the session's cookie and form token header, and a body as given. */
const rawPost = (client: ConsoleClient | null, path: string, contentType: string, body: string) =>
  svc.app.request(`http://localhost${path}`, {
    method: "POST",
    headers: {
      "content-type": contentType,
      ...(client ? { cookie: client.cookieHeader, "x-csrf-token": client.csrf } : {}),
    },
    body,
    redirect: "manual",
  });

describe("console pages", () => {
  it("answers a body that says it is a form and is none with a 400 page, logging no error", async () => {
    const { client } = await signedIn();
    for (const who of [null, client]) {
      for (const path of ["/console/signin", "/console/groups"]) {
        for (const type of ["multipart/form-data", "multipart/form-data; boundary=xyz"]) {
          const res = await rawPost(who, path, type, "garbage");
          const text = await res.text();
          expect([who ? "session" : "none", path, type, res.status]).toEqual([
            who ? "session" : "none",
            path,
            type,
            400,
          ]);
          expect(res.headers.get("content-type")).toContain("text/html");
          expect(text).toContain("The form could not be read");
        }
      }
    }
    expect(logged.filter((l) => JSON.parse(l).level >= 50)).toEqual([]);
    // The same form, well formed, still works.
    const ok = await rawPost(client, "/console/groups", "application/x-www-form-urlencoded", "name=fine");
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain("Group “fine” created.");
  });
});
