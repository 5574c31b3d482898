import { createHash, randomBytes, randomUUID } from "node:crypto";

const hex = (bytes: number) => randomBytes(bytes).toString("hex");

export const newJobId = () => `job_${hex(16)}`;
export const newGroupId = () => `grp_${hex(16)}`;
export const newOrgId = () => `org_${hex(16)}`;
export const newKeyId = () => `key_${hex(12)}`;
export const newMemoryId = () => randomUUID();

export const JOB_ID_RE = /^job_[0-9a-f]{32}$/;
export const GROUP_ID_RE = /^grp_[0-9a-f]{32}$/;
export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const sha256Hex = (s: string) => createHash("sha256").update(s).digest("hex");

/** Deterministic UUID (v4 layout) from a seed: idempotent writes keyed by job and position. */
export function uuidFromSeed(seed: string): string {
  const h = createHash("sha256").update(seed).digest();
  h[6] = (h[6]! & 0x0f) | 0x40;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const s = h.subarray(0, 16).toString("hex");
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20, 32)}`;
}
