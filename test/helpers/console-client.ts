import type { App } from "../../rest/types.js";

/** A cookie jar and form poster for the console over `app.request` (no browser). */
export class ConsoleClient {
  readonly cookies = new Map<string, string>();
  csrf = "";

  constructor(
    private readonly app: App,
    private readonly base = "http://localhost",
  ) {}

  get cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }

  private keep(res: Response) {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const eq = pair!.indexOf("=");
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      if (value === "" || /max-age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  async get(path: string, headers: Record<string, string> = {}) {
    const res = await this.app.request(this.base + path, {
      headers: { cookie: this.cookieHeader, ...headers },
      redirect: "manual",
    });
    this.keep(res);
    return { status: res.status, headers: res.headers, text: await res.text() };
  }

  /** A form post; the session's form token is added unless `csrf` is given (null: none). */
  async post(
    path: string,
    fields: Record<string, string | string[]> = {},
    options: { csrf?: string | null; headers?: Record<string, string> } = {},
  ) {
    const body = new URLSearchParams();
    for (const [k, v] of Object.entries(fields)) for (const one of [v].flat()) body.append(k, one);
    const token = options.csrf === undefined ? this.csrf : options.csrf;
    if (token !== null) body.set("_csrf", token);
    const res = await this.app.request(this.base + path, {
      method: "POST",
      headers: {
        cookie: this.cookieHeader,
        "content-type": "application/x-www-form-urlencoded",
        ...options.headers,
      },
      body: body.toString(),
      redirect: "manual",
    });
    this.keep(res);
    return { status: res.status, headers: res.headers, text: await res.text() };
  }

  /** Signs in with `key`; returns the sign-in response (303 on success). */
  async signIn(key: string) {
    const form = await this.get("/console/signin");
    const token = /name="_csrf" value="([^"]+)"/.exec(form.text)?.[1] ?? "";
    const res = await this.post("/console/signin", { key }, { csrf: token });
    if (res.status === 303) {
      const page = await this.get("/console/memories");
      this.csrf = /name="_csrf" value="([^"]+)"/.exec(page.text)?.[1] ?? "";
    }
    return res;
  }
}
