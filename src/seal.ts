import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from "node:crypto";

/**
 * Sealed tokens: a JSON payload encrypted and authenticated with AES-256-GCM under a key derived
 * from the server secret for one purpose (list cursors, console sessions...), so a client can
 * neither read nor forge one, and a token sealed for one purpose never opens as another.
 */
const keyFor = (secret: Buffer, purpose: string) => createHmac("sha256", secret).update(purpose).digest();
const aadFor = (purpose: string) => Buffer.from(`${purpose}:v1`);

export function seal(secret: Buffer, purpose: string, payload: object): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", keyFor(secret, purpose), iv);
  cipher.setAAD(aadFor(purpose));
  const body = Buffer.concat([cipher.update(JSON.stringify(payload), "utf8"), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64url");
}

/** The payload, or undefined for anything forged, damaged, sealed for another purpose or not JSON. */
export function unseal(secret: Buffer, purpose: string, token: string): unknown {
  try {
    const raw = Buffer.from(token, "base64url");
    if (raw.length < 12 + 16 + 2 || raw.toString("base64url") !== token) return undefined;
    const decipher = createDecipheriv("aes-256-gcm", keyFor(secret, purpose), raw.subarray(0, 12));
    decipher.setAAD(aadFor(purpose));
    decipher.setAuthTag(raw.subarray(12, 28));
    return JSON.parse(Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8"));
  } catch {
    return undefined;
  }
}

/** A digest of what a sealed cursor is bound to (a query and its filters), as JSON. */
export const fingerprint = (value: unknown): string =>
  createHash("sha256").update(JSON.stringify(value)).digest("base64url");
