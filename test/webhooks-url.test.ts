import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isCoreError } from "../src/errors.js";
import {
  checkWebhookUrl,
  createSafeDispatcher,
  isPublicAddress,
  type Resolver,
  UnsafeAddressError,
} from "../src/webhooks/url-safety.js";

/** A resolver from a fixed table: no real DNS in tests. Unknown names do not exist. */
const table =
  (entries: Record<string, string[]>): Resolver =>
  async (host) => {
    const list = entries[host];
    if (!list) throw Object.assign(new Error(`ENOTFOUND ${host}`), { code: "ENOTFOUND" });
    return list.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };

const names = table({
  "internal.example.com": ["10.0.0.1"],
  "metadata.example.com": ["169.254.169.254"],
  "loop.example.com": ["127.0.0.1"],
  "mixed.example.com": ["8.8.8.8", "192.168.0.10"],
  "ula.example.com": ["fd00::1"],
  "mapped.example.com": ["::ffff:127.0.0.1"],
  "cgnat.example.com": ["100.64.1.1"],
  "public.example.com": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
});

async function refusal(url: string): Promise<string | null> {
  try {
    await checkWebhookUrl(url, { allowPrivate: false, resolve: names });
    return null;
  } catch (err) {
    if (isCoreError(err)) return err.code;
    throw err;
  }
}

const UNSAFE = [
  // loopback, private, link-local (cloud metadata), CGNAT, unspecified
  "https://127.0.0.1/",
  "https://127.255.255.254/hook",
  "https://10.0.0.1/",
  "https://10.255.255.255/",
  "https://172.16.0.1/",
  "https://172.31.255.255/",
  "https://192.168.1.1/",
  "https://169.254.169.254/latest/meta-data/",
  "https://169.254.0.1/",
  "https://100.64.0.1/",
  "https://100.127.255.254/",
  "https://0.0.0.0/",
  "https://0.1.2.3/",
  // multicast, broadcast, reserved, documentation, benchmarking
  "https://224.0.0.1/",
  "https://239.255.255.250/",
  "https://255.255.255.255/",
  "https://240.0.0.1/",
  "https://192.0.2.1/",
  "https://198.18.0.1/",
  "https://198.51.100.7/",
  "https://203.0.113.9/",
  "https://192.0.0.8/",
  // other spellings of the same addresses, normalised by WHATWG URL parsing
  "https://2130706433/",
  "https://0177.0.0.1/",
  "https://0x7f.0.0.1/",
  "https://0x7f000001/",
  "https://017700000001/",
  "https://127.1/",
  "https://3232235777/",
  "https://2852039166/",
  "https://0xA9FEA9FE/",
  "https://0251.0376.0251.0376/",
  "https://%31%32%37.0.0.1/",
  // IPv6: loopback, unspecified, ULA, link-local, multicast, site-local, documentation
  "https://[::1]/",
  "https://[::]/",
  "https://[fc00::1]/",
  "https://[fd12:3456::1]/",
  "https://[fe80::1]/",
  "https://[ff02::1]/",
  "https://[fec0::1]/",
  "https://[2001:db8::1]/",
  // IPv4 inside IPv6: mapped, compatible, NAT64, 6to4, Teredo
  "https://[::ffff:127.0.0.1]/",
  "https://[::ffff:7f00:1]/",
  "https://[::ffff:169.254.169.254]/",
  "https://[::ffff:10.0.0.1]/",
  "https://[::ffff:8.8.8.8]/",
  "https://[::127.0.0.1]/",
  "https://[64:ff9b::a9fe:a9fe]/",
  "https://[2002:7f00:1::]/",
  "https://[2001::1]/",
  // names that are local, or resolve (in part) to non-public addresses
  "https://localhost/",
  "https://LOCALHOST./",
  "https://api.localhost/",
  "https://printer.local/",
  "https://internal.example.com/",
  "https://metadata.example.com/",
  "https://loop.example.com/",
  "https://mixed.example.com/",
  "https://ula.example.com/",
  "https://mapped.example.com/",
  "https://cgnat.example.com/",
  "https://does-not-exist.example.com/",
  // not https, credentials, not a URL
  "http://8.8.8.8/hook",
  "http://public.example.com/",
  "ftp://8.8.8.8/",
  "file:///etc/passwd",
  "javascript:alert(1)",
  "https://user:pass@public.example.com/",
  "not a url",
  "//public.example.com/",
];

describe("webhook URL safety", () => {
  it(`refuses ${UNSAFE.length} unsafe URLs with invalid_webhook_url`, async () => {
    expect(UNSAFE.length).toBeGreaterThanOrEqual(40);
    const accepted: string[] = [];
    for (const url of UNSAFE) {
      const code = await refusal(url);
      if (code !== "invalid_webhook_url") accepted.push(`${url} -> ${code}`);
    }
    expect(accepted).toEqual([]);
  });

  it("WHATWG URL parsing normalises decimal, octal and hex IPv4 spellings before the check", () => {
    expect(new URL("https://2130706433/").hostname).toBe("127.0.0.1");
    expect(new URL("https://0177.0.0.1/").hostname).toBe("127.0.0.1");
    expect(new URL("https://0xA9FEA9FE/").hostname).toBe("169.254.169.254");
    expect(new URL("https://[::ffff:127.0.0.1]/").hostname).toBe("[::ffff:7f00:1]");
  });

  it("accepts public addresses and names that resolve only to them", async () => {
    for (const url of [
      "https://8.8.8.8/hook",
      "https://134744072/",
      "https://[2606:4700:4700::1111]/x",
      "https://public.example.com/hooks?x=1",
    ]) {
      expect(await refusal(url), url).toBeNull();
    }
  });

  it("classifies addresses with ipaddr.js ranges", () => {
    expect(isPublicAddress("1.1.1.1")).toBe(true);
    expect(isPublicAddress("2a00:1450:4001:80b::200e")).toBe(true);
    for (const a of [
      "127.0.0.1",
      "169.254.169.254",
      "100.64.0.1",
      "::1",
      "fe80::1%eth0",
      "fd00::1",
      "nope",
    ]) {
      expect(isPublicAddress(a), a).toBe(false);
    }
  });

  it("the unsafe setting allows http and private addresses", async () => {
    const url = await checkWebhookUrl("http://127.0.0.1:9/x", { allowPrivate: true, resolve: names });
    expect(url.hostname).toBe("127.0.0.1");
    await expect(checkWebhookUrl("ftp://127.0.0.1/", { allowPrivate: true })).rejects.toMatchObject({
      code: "invalid_webhook_url",
      message: "url must use https or http.",
    });
  });
});

describe("connect-time check (undici dispatcher)", () => {
  let server: http.Server;
  let port: number;
  let hits = 0;
  beforeAll(async () => {
    server = http.createServer((_req, res) => {
      hits++;
      res.end("ok");
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  async function dial(url: string, options: { allowPrivate: boolean; resolve?: Resolver }) {
    const dispatcher = createSafeDispatcher({ ...options, timeoutMs: 5000 });
    try {
      const res = await request(url, { dispatcher, method: "POST", body: "{}" });
      await res.body.dump();
      return res.statusCode;
    } finally {
      await dispatcher.destroy();
    }
  }

  it("refuses an IP literal in a private range without connecting", async () => {
    const before = hits;
    await expect(dial(`http://127.0.0.1:${port}/`, { allowPrivate: false })).rejects.toBeInstanceOf(
      UnsafeAddressError,
    );
    await expect(dial(`http://[::ffff:127.0.0.1]:${port}/`, { allowPrivate: false })).rejects.toBeInstanceOf(
      UnsafeAddressError,
    );
    expect(hits).toBe(before);
  });

  it("refuses a name that resolves to a private address at connect time (DNS rebinding)", async () => {
    // First answer public (what a check at PUT would see), then the rebinding answer.
    let calls = 0;
    const rebinding: Resolver = async () => [
      { address: calls++ === 0 ? "93.184.215.14" : "127.0.0.1", family: 4 },
    ];
    await checkWebhookUrl(`https://rebind.example.com:${port}/`, { allowPrivate: false, resolve: rebinding });
    const before = hits;
    await expect(
      dial(`http://rebind.example.com:${port}/`, { allowPrivate: false, resolve: rebinding }),
    ).rejects.toMatchObject({ code: "ERR_WEBHOOK_UNSAFE_ADDRESS" });
    const to10: Resolver = async () => [{ address: "10.0.0.1", family: 4 }];
    await expect(
      dial(`http://internal.example.com:${port}/`, { allowPrivate: false, resolve: to10 }),
    ).rejects.toMatchObject({ code: "ERR_WEBHOOK_UNSAFE_ADDRESS" });
    expect(hits).toBe(before);
  });

  it("with the unsafe setting the same dial reaches the local server", async () => {
    const before = hits;
    const toLoopback: Resolver = async () => [{ address: "127.0.0.1", family: 4 }];
    expect(
      await dial(`http://rebind.example.com:${port}/`, { allowPrivate: true, resolve: toLoopback }),
    ).toBe(200);
    expect(await dial(`http://127.0.0.1:${port}/`, { allowPrivate: true })).toBe(200);
    expect(hits).toBe(before + 2);
  });
});
