import { createCipheriv, createDecipheriv, createHmac, randomBytes } from "node:crypto";

export const SECRET_PREFIX = "whsec_";

/** A fresh signing secret: `whsec_` + 32 CSPRNG bytes in base64url. */
export const mintSecret = () => `${SECRET_PREFIX}${randomBytes(32).toString("base64url")}`;

/** Prefix, a fixed mask and the last four characters: enough to recognise, useless to sign. */
export const maskSecret = (lastFour: string) => `${SECRET_PREFIX}${"*".repeat(24)}${lastFour}`;

/**
 * AES-256-GCM under the server key (`deps.secret`, 32 bytes). Stored as
 * `v1.<iv>.<tag>.<ciphertext>` in base64url; the organisation id is bound as associated data so a
 * ciphertext copied to another organisation's row does not decrypt.
 */
export function encryptSecret(key: Buffer, orgId: string, plain: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(orgId));
  const ct = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
  return ["v1", iv, cipher.getAuthTag(), ct]
    .map((p) => (typeof p === "string" ? p : p.toString("base64url")))
    .join(".");
}

export function decryptSecret(key: Buffer, orgId: string, stored: string): string {
  const [version, iv, tag, ct] = stored.split(".");
  if (version !== "v1" || !iv || !tag || ct === undefined) throw new Error("unknown webhook secret format");
  const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
  decipher.setAAD(Buffer.from(orgId));
  decipher.setAuthTag(Buffer.from(tag, "base64url"));
  return Buffer.concat([decipher.update(Buffer.from(ct, "base64url")), decipher.final()]).toString("utf8");
}

/** `sha256=<lowercase hex HMAC-SHA256 of the raw body>`, the X-Webhook-Signature value. */
export const signBody = (secret: string, body: string | Buffer) =>
  `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
