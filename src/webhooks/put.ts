import { requireOrgWide } from "../auth/user-scope.js";
import { type Ctx, inTx } from "../context.js";
import { lockWebhookConfig } from "../db/locks.js";
import { findWebhook, upsertWebhook } from "../db/webhooks.js";
import { CoreError } from "../errors.js";
import { WEBHOOK_EVENTS, type WebhookWire, webhookToWire } from "./model.js";
import { decryptSecret, encryptSecret, mintSecret } from "./secrets.js";
import { checkWebhookUrl, type Resolver, type UrlSafetyOptions } from "./url-safety.js";

export interface PutWebhookInput {
  url: string;
  /** null or omitted: every event; an empty list is refused. */
  events?: string[] | null | undefined;
  enabled?: boolean | undefined;
  rotateSecret?: boolean | undefined;
  /** Accepted only when it names the caller's own organisation. */
  orgId?: string | null | undefined;
}

/**
 * Creates or replaces the organisation's webhook. The secret is kept unless this is the first
 * config or `rotateSecret`; only then does the response carry it in full.
 */
export async function putWebhook({
  ctx,
  input,
  resolve,
}: {
  ctx: Ctx;
  input: PutWebhookInput;
  /** Injected by tests; the system resolver otherwise. */
  resolve?: Resolver;
}): Promise<WebhookWire> {
  requireOrgWide(ctx.principal, "Configuring the webhook");
  const orgId = ctx.principal.orgId;
  requireSameOrg(ctx, input.orgId);
  const { url, events } = await webhookConfig(input, {
    allowPrivate: ctx.deps.config.MNEMO_WEBHOOK_ALLOW_PRIVATE,
    ...(resolve ? { resolve } : {}),
  });

  // The stored secret read and the config written under the organisation's webhook lock: a
  // concurrent PUT or DELETE waits, so the secret a response shows in full is the one that signs.
  const { row, fresh, existing } = await inTx(ctx, async ({ db: tx }) => {
    await lockWebhookConfig(tx, orgId);
    const existing = await findWebhook(tx, orgId);
    let fresh: string | undefined;
    let secretEnc: string;
    let lastFour: string;
    if (existing && !input.rotateSecret && readable(ctx, existing.secret_enc)) {
      secretEnc = existing.secret_enc;
      lastFour = existing.secret_last_four;
    } else {
      fresh = mintSecret();
      secretEnc = encryptSecret(ctx.deps.secret, orgId, fresh);
      lastFour = fresh.slice(-4);
    }
    const row = await upsertWebhook(tx, {
      org_id: orgId,
      url,
      events,
      enabled: input.enabled ?? true,
      secret_enc: secretEnc,
      secret_last_four: lastFour,
    });
    return { row, fresh, existing };
  });
  ctx.log.info({ rotated: Boolean(fresh && existing), created: !existing }, "webhook configured");
  return webhookToWire(row, fresh);
}

/**
 * A webhook config as it is stored, or a CoreError saying what is wrong with it: the events not
 * empty (null: every event), the URL safe (url-safety.ts). The rules of PUT, and of a webhook
 * line of `admin import`.
 */
export async function webhookConfig(
  input: { url: string; events?: readonly string[] | null | undefined },
  options: UrlSafetyOptions,
): Promise<{ url: string; events: string[] }> {
  if (input.events && input.events.length === 0) {
    throw new CoreError("invalid_request", "events must not be empty; omit it or send null for all events.", {
      field: "events",
    });
  }
  await checkWebhookUrl(input.url, options);
  return { url: input.url.trim(), events: input.events ? [...new Set(input.events)] : [...WEBHOOK_EVENTS] };
}

/** A stored secret the current server key cannot decrypt (the key was changed) is replaced. */
function readable(ctx: Ctx, secretEnc: string): boolean {
  try {
    decryptSecret(ctx.deps.secret, ctx.principal.orgId, secretEnc);
    return true;
  } catch {
    ctx.log.warn("stored webhook secret does not decrypt under the server key: minting a new one");
    return false;
  }
}

/**
 * An `org_id` the request names is the credential's organisation, or 403 `org_mismatch`: on PUT
 * (spec 4.13) and likewise on GET and DELETE, where it used to be ignored and a DELETE naming
 * another organisation removed the caller's own webhook.
 */
export function requireSameOrg(ctx: Ctx, orgId: string | null | undefined): void {
  if (orgId != null && orgId !== ctx.principal.orgId) {
    throw new CoreError("org_mismatch", "org_id does not match the credential's organisation.");
  }
}
