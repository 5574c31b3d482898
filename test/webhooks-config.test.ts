import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemCtx } from "../src/context.js";
import { findWebhook, insertDelivery } from "../src/db/webhooks.js";
import { putWebhook } from "../src/webhooks/put.js";
import { decryptSecret } from "../src/webhooks/secrets.js";
import { sweepWebhookDeliveries } from "../src/webhooks/sweep.js";
import { startTestService, type TestService } from "./helpers/harness.js";

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ workers: false });
});
afterAll(async () => {
  await svc?.stop();
});

const URL_A = "https://8.8.8.8/hooks/mnemo";
const URL_B = "https://[2606:4700:4700::1111]/other";

describe("webhook config", () => {
  it("creates, masks, keeps and rotates the secret", async () => {
    const { key } = await svc.newOrg();
    expect((await svc.request("GET", "/v1/webhooks", { key })).body.detail.code).toBe("webhook_not_found");

    const created = await svc.request("PUT", "/v1/webhooks", { key, body: { url: URL_A } });
    expect(created.status).toBe(200);
    const full: string = created.body.secret;
    expect(full).toMatch(/^whsec_[A-Za-z0-9_-]{40,}$/);
    expect(created.body).toMatchObject({
      object: "webhook",
      url: URL_A,
      enabled: true,
      events: ["memory.learning.completed", "memory.learning.failed"],
    });

    const got = await svc.request("GET", "/v1/webhooks", { key });
    expect(got.status).toBe(200);
    expect(got.body.secret).not.toBe(full);
    expect(got.body.secret.startsWith("whsec_")).toBe(true);
    expect(got.body.secret).toContain("****");
    expect(got.body.secret.endsWith(full.slice(-4))).toBe(true);
    expect(got.body.secret).not.toContain(full.slice(6, 14));

    // Replacing keeps the secret (masked in the reply) and the creation time.
    const replaced = await svc.request("PUT", "/v1/webhooks", {
      key,
      body: { url: URL_B, events: ["memory.learning.failed"], enabled: false },
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ url: URL_B, events: ["memory.learning.failed"], enabled: false });
    expect(replaced.body.secret).toBe(got.body.secret);
    expect(replaced.body.created_at).toBe(created.body.created_at);
    expect(Date.parse(replaced.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.body.updated_at));

    const rotated = await svc.request("PUT", "/v1/webhooks?rotate_secret=true", {
      key,
      body: { url: URL_B },
    });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(full);
    expect(rotated.body.secret).not.toContain("*");
    // events omitted again means all; enabled defaults to true
    expect(rotated.body.events).toHaveLength(2);
    expect(rotated.body.enabled).toBe(true);
    const after = await svc.request("GET", "/v1/webhooks", { key });
    expect(after.body.secret.endsWith(rotated.body.secret.slice(-4))).toBe(true);
  });

  it("stores the secret encrypted, bound to the organisation", async () => {
    const a = await svc.newOrg();
    const b = await svc.newOrg();
    const put = await svc.request("PUT", "/v1/webhooks", { key: a.key, body: { url: URL_A } });
    const row = (await findWebhook(svc.deps.db, a.orgId))!;
    expect(row.secret_enc).not.toContain(put.body.secret);
    expect(row.secret_enc).not.toContain(put.body.secret.slice(6));
    expect(decryptSecret(svc.deps.secret, a.orgId, row.secret_enc)).toBe(put.body.secret);
    expect(() => decryptSecret(svc.deps.secret, b.orgId, row.secret_enc)).toThrow();
    // Another organisation sees nothing of it.
    expect((await svc.request("GET", "/v1/webhooks", { key: b.key })).status).toBe(404);
  });

  it("validates the body and the org_id query", async () => {
    const { key, orgId } = await svc.newOrg();
    const put = (body: unknown, q = "") => svc.request("PUT", `/v1/webhooks${q}`, { key, body });
    const empty = await put({ url: URL_A, events: [] });
    expect(empty.status).toBe(422);
    expect(empty.body.detail.code).toBe("invalid_request");
    expect(empty.body.detail.field).toBe("events");
    const unknown = await put({ url: URL_A, events: ["memory.deleted"] });
    expect(unknown.status).toBe(422);
    expect(unknown.body.detail[0].loc).toEqual(["body", "events", "0"]);
    const missing = await put({ events: null });
    expect(missing.status).toBe(422);
    expect(missing.body.detail[0]).toMatchObject({ loc: ["body", "url"], type: "missing" });
    expect(missing.body.error).toMatchObject({ type: "invalid_request_error", code: "invalid_request" });
    for (const url of [
      "http://8.8.8.8/",
      "https://169.254.169.254/",
      "https://2130706433/",
      "https://localhost/",
      "x",
    ]) {
      const r = await put({ url });
      expect(r.status, url).toBe(422);
      expect(r.body.detail.code, url).toBe("invalid_webhook_url");
      expect(r.body.detail.field, url).toBe("url");
      expect(r.body.error.code, url).toBe("invalid_webhook_url");
    }
    expect((await svc.request("GET", "/v1/webhooks", { key })).status).toBe(404);
    const nulls = await put({ url: URL_A, events: null }, `?org_id=${orgId}`);
    expect(nulls.status).toBe(200);
    expect(nulls.body.events).toHaveLength(2);
    const other = await put({ url: URL_A }, "?org_id=org_someoneelse");
    expect(other.status).toBe(403);
    expect(other.body.detail.code).toBe("org_mismatch");
    // GET and DELETE naming another organisation are refused too; the webhook stays.
    for (const method of ["GET", "DELETE"] as const) {
      const r = await svc.request(method, "/v1/webhooks?org_id=org_someoneelse", { key });
      expect(r.status, method).toBe(403);
      expect(r.body.detail.code, method).toBe("org_mismatch");
    }
    expect((await svc.request("GET", `/v1/webhooks?org_id=${orgId}`, { key })).status).toBe(200);
  });

  it("refuses a host name that resolves to a private address", async () => {
    const { orgId } = await svc.newOrg();
    const ctx = systemCtx(svc.deps, orgId, "t");
    const resolve = async () => [{ address: "10.0.0.1", family: 4 }];
    await expect(
      putWebhook({ ctx, input: { url: "https://hooks.example.com/x" }, resolve }),
    ).rejects.toMatchObject({ code: "invalid_webhook_url" });
    const ok = await putWebhook({
      ctx,
      input: { url: "https://hooks.example.com/x" },
      resolve: async () => [{ address: "93.184.215.14", family: 4 }],
    });
    expect(ok.url).toBe("https://hooks.example.com/x");
  });

  it("concurrent PUTs and DELETEs: one secret shown in full at first, a rotation never undone, no secret brought back", async () => {
    const full = (r: { body: { secret: string } }) => !r.body.secret.includes("*");
    const stored = async (orgId: string) => {
      const row = await findWebhook(svc.deps.db, orgId);
      return row && decryptSecret(svc.deps.secret, orgId, row.secret_enc);
    };
    for (let round = 0; round < 3; round++) {
      // First PUTs at once: exactly one mints the secret (shown in full), and that one signs.
      const a = await svc.newOrg();
      const puts = await Promise.all(
        Array.from({ length: 8 }, () =>
          svc.request("PUT", "/v1/webhooks", { key: a.key, body: { url: URL_A } }),
        ),
      );
      expect(puts.map((r) => r.status)).toEqual(Array(8).fill(200));
      const shown = puts.filter(full).map((r) => r.body.secret);
      expect(shown).toHaveLength(1);
      expect(await stored(a.orgId)).toBe(shown[0]);

      // A rotation beside plain PUTs: the rotated secret is the one stored, whatever the order.
      const [rotated] = await Promise.all([
        svc.request("PUT", "/v1/webhooks?rotate_secret=true", { key: a.key, body: { url: URL_A } }),
        ...Array.from({ length: 4 }, () =>
          svc.request("PUT", "/v1/webhooks", { key: a.key, body: { url: URL_B } }),
        ),
      ]);
      expect(full(rotated!)).toBe(true);
      expect(await stored(a.orgId)).toBe(rotated!.body.secret);

      // A PUT beside a DELETE: either nothing is left, or a config whose secret that PUT showed.
      const [put] = await Promise.all([
        svc.request("PUT", "/v1/webhooks", { key: a.key, body: { url: URL_A } }),
        svc.request("DELETE", "/v1/webhooks", { key: a.key }),
      ]);
      const left = await stored(a.orgId);
      if (left !== undefined) {
        expect(full(put!)).toBe(true);
        expect(left).toBe(put!.body.secret);
      }
    }
  });

  it("DELETE is idempotent and always 204", async () => {
    const { key } = await svc.newOrg();
    expect((await svc.request("DELETE", "/v1/webhooks", { key })).status).toBe(204);
    await svc.request("PUT", "/v1/webhooks", { key, body: { url: URL_A } });
    expect((await svc.request("DELETE", "/v1/webhooks", { key })).status).toBe(204);
    expect((await svc.request("GET", "/v1/webhooks", { key })).status).toBe(404);
    expect((await svc.request("DELETE", "/v1/webhooks", { key })).status).toBe(204);
    expect((await svc.request("DELETE", "/v1/webhooks")).status).toBe(401);
  });
});

describe("GET /v1/webhooks/deliveries", () => {
  it("lists newest first with a signed, organisation-bound cursor", async () => {
    const a = await svc.newOrg();
    const b = await svc.newOrg();
    for (let i = 1; i <= 5; i++) {
      await insertDelivery(svc.deps.db, {
        id: randomUUID(),
        org_id: a.orgId,
        event_id: `evt_${i}`,
        event: "memory.learning.completed",
        job_id: `job_${i}`,
        url: URL_A,
        attempt: i,
        status_code: 500,
        error: "HTTP 500",
        duration_ms: 3,
        outcome: "retrying",
        retry_in_seconds: 5,
      });
    }
    const seen: Array<{ attempt: number; created_at: string; id: string }> = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const q: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : "";
      const page = await svc.request("GET", `/v1/webhooks/deliveries?limit=2${q}`, { key: a.key });
      expect(page.status).toBe(200);
      expect(page.body.object).toBe("list");
      seen.push(...page.body.data);
      cursor = page.body.next_cursor;
      expect(page.body.has_more).toBe(cursor !== null);
      pages++;
    } while (cursor && pages < 10);
    // Every row exactly once, newest first (rows within one millisecond may come in either order).
    expect(seen.map((d) => d.attempt).sort()).toEqual([1, 2, 3, 4, 5]);
    for (let i = 1; i < seen.length; i++) {
      expect(Date.parse(seen[i - 1]!.created_at)).toBeGreaterThanOrEqual(Date.parse(seen[i]!.created_at));
    }
    expect(pages).toBe(3);

    const first = await svc.request("GET", "/v1/webhooks/deliveries?limit=1", { key: a.key });
    const c = first.body.next_cursor as string;
    const foreign = await svc.request("GET", `/v1/webhooks/deliveries?cursor=${encodeURIComponent(c)}`, {
      key: b.key,
    });
    expect(foreign.status).toBe(422);
    expect(foreign.body.detail.code).toBe("cursor_mismatch");
    const tampered = `${c.slice(0, -3)}AAA`;
    const bad = await svc.request("GET", `/v1/webhooks/deliveries?cursor=${encodeURIComponent(tampered)}`, {
      key: a.key,
    });
    expect(bad.status).toBe(422);
    expect(bad.body.detail.code).toBe("cursor_mismatch");
    const sweptNothing = await sweepWebhookDeliveries({ deps: svc.deps });
    expect(sweptNothing.deleted).toBe(0);
    const later = new Date(
      Date.now() + (svc.deps.config.MNEMO_WEBHOOK_DELIVERY_RETENTION_DAYS + 1) * 86_400_000,
    );
    expect(
      (await sweepWebhookDeliveries({ deps: svc.deps, input: { now: later } })).deleted,
    ).toBeGreaterThanOrEqual(5);
    const afterSweep = await svc.request("GET", "/v1/webhooks/deliveries", { key: a.key });
    expect(afterSweep.body.data).toEqual([]);
    const none = await svc.request("GET", "/v1/webhooks/deliveries", { key: b.key });
    expect(none.body).toEqual({ object: "list", data: [], has_more: false, next_cursor: null });
    expect((await svc.request("GET", "/v1/webhooks/deliveries?limit=0", { key: a.key })).status).toBe(422);
  });
});
