import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { redactSecrets } from "../src/ingest/redact.js";
import { seedGroup } from "./helpers/groups.js";
import { startTestService, type TestService, withConfig } from "./helpers/harness.js";
import { type StubOpenAI, startStubOpenAI } from "./helpers/stub-openai.js";

// Made-up credentials in the issuers' formats (none is real).
const AWS_KEY_ID = "AKIA2E0A8F3B244C9986";
const AWS_SECRET = "Xj4Ls9Kq2Wm8Np1Rt6Yv3Zb7Cd0Fg5Hh9Jk2Lm4N";
const GITHUB = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
const OPENAI = `sk-proj-${"Ab1".repeat(30)}`;
const PRIVATE_KEY = `-----BEGIN OPENSSH PRIVATE KEY-----\n${"b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n".repeat(4)}-----END OPENSSH PRIVATE KEY-----`;

describe("redactSecrets", () => {
  it("masks credentials in the issuers' formats, in URLs, headers, assignments, options and speech", () => {
    const cases: [string, string][] = [
      [`my key id is ${AWS_KEY_ID}`, "my key id is [redacted AWS access key]"],
      [`aws_secret_access_key = ${AWS_SECRET}`, "aws_secret_access_key = [redacted secret]"],
      [`push with ${GITHUB} please`, "push with [redacted GitHub token] please"],
      [`github_pat_${"A1b2_".repeat(12)} is the PAT`, "[redacted GitHub token] is the PAT"],
      [`OPENAI_API_KEY=${OPENAI}`, "OPENAI_API_KEY=[redacted API key]"],
      [`use sk-ant-api03-${"x1Y".repeat(30)} for Claude`, "use [redacted API key] for Claude"],
      ["stripe: sk_live_abcdefghijklmnopqrstuvwx", "stripe: [redacted Stripe key]"],
      ["slack xoxb-123456789012-1234567890123-abcdefghij", "slack [redacted Slack token]"],
      [`the deploy key:\n${PRIVATE_KEY}\nkeep it`, "the deploy key:\n[redacted private key]\nkeep it"],
      [
        "postgres://admin:SuperSecret123@db.example.com:5432/app",
        "postgres://admin:[redacted password]@db.example.com:5432/app",
      ],
      [
        "curl -H 'Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123456789' https://api.example.com",
        "curl -H 'Authorization: Bearer [redacted token]' https://api.example.com",
      ],
      ["export PGPASSWORD=s3cr3t! && psql", "export PGPASSWORD=[redacted secret] && psql"],
      [
        '{"password": "abc-1", "client_secret": "k-123456"}',
        '{"password": "[redacted secret]", "client_secret": "[redacted secret]"}',
      ],
      // Inside the value of another key, as the Stop hook sends a tool call, and JSON inside a string.
      [
        '{"command":"docker run -e POSTGRES_PASSWORD=S3cretPass1 postgres"}',
        '{"command":"docker run -e POSTGRES_PASSWORD=[redacted secret] postgres"}',
      ],
      [
        '{"content":"DB_PASSWORD=S3cretPass1\\nSTRIPE_SECRET=whatever123\\n"}',
        '{"content":"DB_PASSWORD=[redacted secret]\\nSTRIPE_SECRET=[redacted secret]\\n"}',
      ],
      [
        `curl -d '{\\"user\\":\\"ada\\",\\"password\\":\\"S3cret!Pass\\"}'`,
        `curl -d '{\\"user\\":\\"ada\\",\\"password\\":\\"[redacted secret]\\"}'`,
      ],
      [
        "kubectl create secret generic db --from-literal=password=S3cr3tPa55",
        "kubectl create secret generic db --from-literal=password=[redacted secret]",
      ],
      ["REDIS_URL=redis://:p4ssw0rdXYZ@cache:6379/0", "REDIS_URL=redis://:[redacted password]@cache:6379/0"],
      [
        "SMTP_PASS=p@ss MYSQL_PWD=x1y2 MNEMO_SECRET_KEY=Zm9vYmFyYmF6",
        "SMTP_PASS=[redacted secret] MYSQL_PWD=[redacted secret] MNEMO_SECRET_KEY=[redacted secret]",
      ],
      [
        '{"auths":{"ghcr.io":{"auth":"dXNlcjpwYXNzd29yZA=="}}}',
        '{"auths":{"ghcr.io":{"auth":"[redacted secret]"}}}',
      ],
      ["DB_PASSWORD=Xy7;kL9)mN2q", "DB_PASSWORD=[redacted secret]"],
      ["curl -u admin:Sup3rS3cret! https://x", "curl -u admin:[redacted password] https://x"],
      ["docker login -u ada -p S3cret1 ghcr.io", "docker login -u ada -p [redacted password] ghcr.io"],
      [
        "machine api.example.com login ada password Hunter22",
        "machine api.example.com login ada password [redacted password]",
      ],
      [
        "the staging wifi password for the office is Tr0ub4dor3.",
        "the staging wifi password for the office is [redacted password].",
      ],
      ["gcloud said ya29.a0AfH6SMBxyzabcdefghijklmnop", "gcloud said [redacted Google OAuth token]"],
      ["mysql -u root -pHunter2secret -P3306 shop", "mysql -u root -p[redacted password] -P3306 shop"],
      ["vault login --token=s.CAESIJ1x2y3z", "vault login --token=[redacted secret]"],
      ["VAULT_TOKEN=hvs.CAESIJ1x2y3zAbCdEfGhIjKlMnOp", "VAULT_TOKEN=[redacted Vault token]"],
      ["My password is hunter2.", "My password is [redacted password]."],
      ["the wifi passcode was 'tulip-88'", "the wifi passcode was '[redacted password]'"],
      ["MNEMO_API_KEY=mnemo_rtFcefpGOQpfuogNJ7W5dFAdL7oK5zUYKgrviNX7", "MNEMO_API_KEY=[redacted Mnemo key]"],
      // Said in other languages.
      ["Mon mot de passe est Soleil2024!", "Mon mot de passe est [redacted password]!"],
      ["Mon code de carte bancaire est 4821.", "Mon code de carte bancaire est [redacted password]."],
      ["Mein Passwort ist Hund2024!", "Mein Passwort ist [redacted password]!"],
      ["Die PIN meiner Bankkarte lautet 4821.", "Die PIN meiner Bankkarte lautet [redacted password]."],
      ["Mi contraseña es Gato2024!", "Mi contraseña es [redacted password]!"],
      [
        "La contraseña del wifi de la oficina es Gato2024!",
        "La contraseña del wifi de la oficina es [redacted password]!",
      ],
      ["Mi PIN del banco es 4821", "Mi PIN del banco es [redacted password]"],
      ["A minha senha é Gato2024!", "A minha senha é [redacted password]!"],
      ["La mia password è Gatto2024!", "La mia password è [redacted password]!"],
      ["Mijn wachtwoord is Kat2024!", "Mijn wachtwoord is [redacted password]!"],
      ["Мой пароль — Kot2024!", "Мой пароль — [redacted password]!"],
      ["我的密码是 Panda2024!", "我的密码是 [redacted password]!"],
      ["我的密码是Panda2024，请记住。", "我的密码是[redacted password]，请记住。"],
      ["私のパスワードはPanda2024です。", "私のパスワードは[redacted password]です。"],
      ["제 비밀번호는 Panda2024!입니다.", "제 비밀번호는 [redacted password]!입니다."],
    ];
    for (const [said, kept] of cases) {
      const out = redactSecrets(said);
      expect(out.text, said).toBe(kept);
      expect(out.kinds.length, said).toBeGreaterThan(0);
    }
  });

  it("leaves words, variables, placeholders and code that names a credential without one", () => {
    const plain = [
      "the password is too short, pick another",
      "Password: none yet",
      "password: string;",
      "const t = { apiKey: config.apiKey, token: process.env.TOKEN };",
      "npm publish --token $NPM_TOKEN",
      "psql --password -h db.internal",
      "export GITHUB_TOKEN=${GITHUB_TOKEN}",
      "set max_tokens: 1000 and top_p: 0.9",
      "PWD=/home/ada/projects",
      "she has a basic understanding of the Basic responsibilities",
      "the task-list-manager-application-v2 shipped",
      "I told you the secret: it's the sauce",
      "git clone git@github.com:acme/shop.git",
      "https://example.com:8080/path@v2",
      "mysql -u root -p shop",
      "On my Arduino the LED pin is 13.",
      "The password is 12+ characters by policy",
      "Your PIN is 4-6 digits long.",
      'fetch(url, { credentials: "include" })',
      "const token = jwt.sign(payload, secret, opts);",
      "const token = tokens[0];",
      "std::string token = lexer.next();",
      "maxToken: 1024",
      'password: "string"',
      "git push -u origin main",
      '{"command":"ls -la","description":"list files"}',
      "Mon mot de passe est trop court.",
      "Mi contraseña es muy segura",
      "我的密码是什么？",
      "the pin layout is GPIO17 on this board",
      "La clave es la paciencia, 100%.",
    ];
    for (const text of plain) expect(redactSecrets(text), text).toEqual({ text, kinds: [] });
  });

  it("reads a megabyte of adversarial text in one pass (no pattern backtracks over what it read)", () => {
    // Each of these made a pattern restart inside what it had read: minutes for a megabyte.
    for (const unit of [
      "a-",
      "a.",
      "sk-",
      "a: ",
      "mysql ",
      "Bearer ",
      'token: "',
      "password is ",
      "mot de passe ",
      "密码",
      "x",
    ]) {
      const text = unit.repeat(Math.ceil(1_000_000 / unit.length));
      expect(redactSecrets(text).text.length).toBeGreaterThan(900_000);
    }
  });
});

describe("secrets in an ingest", () => {
  let local: TestService;
  let llm: TestService;
  let stub: StubOpenAI;
  beforeAll(async () => {
    stub = await startStubOpenAI({ dim: 384 });
    [local, llm] = await Promise.all([
      startTestService(),
      startTestService({
        env: { MNEMO_LLM_BASE_URL: stub.url, OPENAI_API_KEY: "sk-test", MNEMO_EMBEDDING_DIM: "384" },
      }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([local?.stop(), llm?.stop()]);
    await stub?.close();
  });

  const messages = [
    { role: "user", content: `My GitHub token is ${GITHUB}, use it to push the release branch.` },
    { role: "assistant", content: "Understood, I'll push the release branch with that token." },
    { role: "user", content: `Also our AWS key id is ${AWS_KEY_ID} and my password is hunter2.` },
  ];
  const secrets = [GITHUB, AWS_KEY_ID, "hunter2"];

  /** Every text the organisation's database holds for it: the job rows and the memories, whole. */
  async function stored(svc: TestService, orgId: string): Promise<string> {
    const jobs = await svc.deps.db.query("SELECT request::text AS t FROM ingest_jobs WHERE org_id = $1", [
      orgId,
    ]);
    const memories = await svc.deps.db.query(
      "SELECT text || ' ' || coalesce(details::text, '') || ' ' || coalesce(full_content, '') AS t FROM memories WHERE org_id = $1",
      [orgId],
    );
    return [...jobs.rows, ...memories.rows].map((r) => r.t as string).join("\n");
  }

  it("are masked before the job is kept: the facts say what was there, and search finds them", async () => {
    const { orgId, key } = await local.newOrg();
    const res = await local.request("POST", "/v1/memories?wait=true", {
      key,
      body: { user_id: "ada", conv_id: "c1", messages },
    });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("succeeded");
    const all = await stored(local, orgId);
    expect(all).toContain("[redacted GitHub token]");
    expect(all).toContain("[redacted AWS access key]");
    for (const secret of secrets) expect(all).not.toContain(secret);

    const search = await local.request("POST", "/v1/memories/search", {
      key,
      body: { user_id: "ada", query: "What is the user's GitHub token?", mode: "retrieve" },
    });
    expect(search.status).toBe(200);
    expect(search.body.data.some((m: { text: string }) => m.text.includes("[redacted GitHub token]"))).toBe(
      true,
    );

    const metrics = await local.deps.metrics.registry.getSingleMetricAsString("mnemo_secrets_redacted_total");
    expect(metrics).toMatch(/kind="GitHub token"} [1-9]/);
    expect(metrics).toMatch(/kind="password"} [1-9]/);
  });

  it.each([
    ["Mon mot de passe est Soleil2024!", "Soleil2024"],
    ["Mein Passwort ist Hund2024!", "Hund2024"],
    ["La contraseña del wifi de la oficina es Gato2024!", "Gato2024"],
    ["Mon code de carte bancaire est 4821.", "4821"],
    ["我的密码是 Panda2024!", "Panda2024"],
  ])(
    "said in another language, are masked and kept personal, not shared with a catch-all group: %s",
    async (said, secret) => {
      const { orgId, key } = await local.newOrg();
      const everyone = await seedGroup(local.deps, orgId, { prompt: null, name: "everyone" });
      const res = await local.request("POST", "/v1/memories?wait=true", {
        key,
        body: {
          user_id: "ada",
          conv_id: "c1",
          group_ids: [everyone],
          messages: [{ role: "user", content: said }],
        },
      });
      expect(res.body.status).toBe("succeeded");
      const all = await stored(local, orgId);
      expect(all).toContain("[redacted password]");
      expect(all).not.toContain(secret);
      const { rows } = await local.deps.db.query("SELECT type, group_ids FROM memories WHERE org_id = $1", [
        orgId,
      ]);
      expect(rows.length).toBeGreaterThan(0);
      for (const row of rows) expect(row.group_ids, row.type).toEqual([]);
    },
  );

  it("are kept as said with MNEMO_REDACT_SECRETS=false", async () => {
    const { orgId, key } = await local.newOrg();
    await withConfig(local.deps, { MNEMO_REDACT_SECRETS: false }, async () => {
      const res = await local.request("POST", "/v1/memories?wait=true", {
        key,
        body: { user_id: "ada", conv_id: "c1", messages },
      });
      expect(res.body.status).toBe("succeeded");
    });
    expect(await stored(local, orgId)).toContain(GITHUB);
  });

  it("never reach the extraction model", async () => {
    const { orgId, key } = await llm.newOrg();
    const seen = stub.requests.length;
    const res = await llm.request("POST", "/v1/memories?wait=true", {
      key,
      body: { user_id: "ada", conv_id: "c1", messages },
    });
    expect(res.body.status).toBe("succeeded");
    const sent = JSON.stringify(stub.requests.slice(seen).map((r) => r.body));
    expect(sent).toContain("[redacted GitHub token]");
    for (const secret of secrets) expect(sent).not.toContain(secret);
    for (const secret of secrets) expect(await stored(llm, orgId)).not.toContain(secret);
  });
});
