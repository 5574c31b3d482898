import { lookup as dnsLookup } from "node:dns/promises";
import net, { type LookupFunction } from "node:net";
import ipaddr from "ipaddr.js";
import { Agent, buildConnector } from "undici";
import { CoreError } from "../errors.js";

/** Resolves a host name to every address it has (injectable so tests need no real DNS). */
export type Resolver = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

export const systemResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

export interface UrlSafetyOptions {
  /** MNEMO_WEBHOOK_ALLOW_PRIVATE: http and non-public addresses allowed (local development only). */
  allowPrivate: boolean;
  resolve?: Resolver;
}

/** Raised when a webhook would reach a non-public address; never retried. */
export class UnsafeAddressError extends Error {
  override name = "UnsafeAddressError";
  readonly code = "ERR_WEBHOOK_UNSAFE_ADDRESS";
}

/**
 * Whether an address is publicly routable. ipaddr.js classifies it; only its plain `unicast`
 * range passes, so private, loopback, link-local (169.254.169.254 included), CGNAT, multicast,
 * broadcast, reserved and documentation ranges, unspecified, IPv6 ULA, site-local and every
 * IPv4-embedding IPv6 form (mapped, NAT64, 6to4, Teredo) are refused without a hand-kept list.
 */
export function isPublicAddress(address: string): boolean {
  const bare = address.startsWith("[") && address.endsWith("]") ? address.slice(1, -1) : address;
  // Zone ids (fe80::1%eth0) only occur on link-local addresses.
  if (bare.includes("%")) return false;
  if (!ipaddr.isValid(bare)) return false;
  const ip = ipaddr.parse(bare);
  if (ip.kind() === "ipv6") {
    const v6 = ip as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) return false;
    // Only 2000::/3 is allocated for global unicast; ipaddr.js calls the rest (the deprecated
    // IPv4-compatible ::a.b.c.d among it) plain unicast too.
    if (!v6.match(GLOBAL_UNICAST_V6)) return false;
  }
  return ip.range() === "unicast";
}

const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR("2000::/3");

const bad = (message: string) => new CoreError("invalid_webhook_url", message, { field: "url" });

/**
 * Checks a webhook URL at configuration time: https only, no credentials, and the host (an IP
 * literal, in whatever spelling WHATWG URL parsing normalised it from, or every address a name
 * resolves to) public. The delivery dispatcher checks again on the addresses actually dialled.
 */
export async function checkWebhookUrl(raw: string, options: UrlSafetyOptions): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw bad("url is not a valid absolute URL.");
  }
  const allowed = options.allowPrivate ? ["https:", "http:"] : ["https:"];
  if (!allowed.includes(url.protocol))
    throw bad(options.allowPrivate ? "url must use https or http." : "url must use https.");
  if (url.username || url.password) throw bad("url must not carry credentials.");
  if (!url.hostname) throw bad("url has no host.");
  if (options.allowPrivate) return url;

  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  if (net.isIP(host)) {
    if (!isPublicAddress(host)) throw bad("url must point to a public address.");
    return url;
  }
  // Names that are local by definition, whatever a resolver says.
  const name = host.toLowerCase().replace(/\.$/, "");
  if (name === "localhost" || name.endsWith(".localhost") || name.endsWith(".local")) {
    throw bad("url must point to a public address.");
  }
  let addresses: Array<{ address: string }>;
  try {
    addresses = await (options.resolve ?? systemResolver)(host);
  } catch (err) {
    const code = (err as { code?: string }).code;
    // A name that definitely does not exist is a mistake worth reporting; a transient resolver
    // failure is not held against the caller (the connect-time check still guards delivery).
    if (code === "ENOTFOUND" || code === "ENODATA") throw bad(`url host ${host} does not resolve.`);
    return url;
  }
  if (addresses.length === 0) throw bad(`url host ${host} does not resolve.`);
  if (addresses.some((a) => !isPublicAddress(a.address))) {
    throw bad("url must resolve only to public addresses.");
  }
  return url;
}

/**
 * A `net` lookup that resolves through `resolve` and fails unless every address is public. Used
 * by the connector, so the check applies to the addresses actually dialled (DNS rebinding).
 */
export function checkingLookup(resolve: Resolver, allowPrivate = false): LookupFunction {
  return ((hostname: string, opts: { all?: boolean; family?: number | string }, cb: any) => {
    resolve(hostname).then(
      (all) => {
        const family =
          opts.family === 4 || opts.family === "IPv4"
            ? 4
            : opts.family === 6 || opts.family === "IPv6"
              ? 6
              : 0;
        const list = family ? all.filter((a) => a.family === family) : all;
        if (list.length === 0) {
          const err = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
          return cb(err);
        }
        const unsafe = allowPrivate ? undefined : list.find((a) => !isPublicAddress(a.address));
        if (unsafe) {
          return cb(new UnsafeAddressError(`${hostname} resolves to non-public address ${unsafe.address}`));
        }
        if (opts.all) return cb(null, list);
        return cb(null, list[0]!.address, list[0]!.family);
      },
      (err) => cb(err),
    );
  }) as LookupFunction;
}

/**
 * An undici dispatcher for deliveries: every connection goes through the address check (IP
 * literals directly, names through `checkingLookup`), unless private addresses are allowed.
 * Redirects are never followed: plain undici dispatchers do not follow them.
 */
export function createSafeDispatcher(options: UrlSafetyOptions & { timeoutMs: number }): Agent {
  const resolve = options.resolve ?? systemResolver;
  const base = buildConnector({
    timeout: options.timeoutMs,
    ...(options.allowPrivate && !options.resolve
      ? {}
      : { lookup: checkingLookup(resolve, options.allowPrivate) }),
  });
  const connect: buildConnector.connector = (opts, cb) => {
    const host = opts.hostname.startsWith("[") ? opts.hostname.slice(1, -1) : opts.hostname;
    if (!options.allowPrivate && net.isIP(host) && !isPublicAddress(host)) {
      cb(new UnsafeAddressError(`refusing to connect to non-public address ${host}`), null);
      return;
    }
    base(opts, cb);
  };
  return new Agent({
    connect,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    keepAliveTimeout: 1,
    pipelining: 0,
  });
}
