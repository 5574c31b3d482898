import type { Child, FC, PropsWithChildren } from "hono/jsx";
import type { Assets } from "./types.js";

export const NAV = [
  ["memories", "Memories"],
  ["search", "Search"],
  ["trigger", "Trigger"],
  ["ingest", "Ingest"],
  ["groups", "Groups"],
  ["webhook", "Webhook"],
  ["usage", "Usage"],
] as const;
export type Section = (typeof NAV)[number][0];

export interface Chrome {
  assets: Assets;
  csrf: string;
  orgId: string;
}

/** The page frame: skip link, header with the organisation and sign-out, navigation, main. */
export const Layout: FC<
  PropsWithChildren<{
    title: string;
    chrome: Chrome | null;
    section?: Section;
    notice?: Child;
    /** The stylesheet's versioned path when there is no session (sign-in). */
    css?: string;
  }>
> = ({ title, chrome, section, notice, css, children }) => (
  <html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <meta
        name="htmx-config"
        content='{"includeIndicatorStyles":false,"allowEval":false,"allowScriptTags":false}'
      />
      <link rel="icon" href="data:," />
      <title>{`${title} · Mnemo console`}</title>
      <link rel="stylesheet" href={chrome?.assets.css ?? css ?? "/console/assets/console.css"} />
      {chrome ? <script src={chrome.assets.htmx} defer /> : null}
    </head>
    <body>
      <a class="skip" href="#main">
        Skip to content
      </a>
      {chrome ? (
        <header class="top">
          <a class="brand" href="/console/memories">
            <span class="logo" aria-hidden="true">
              m
            </span>
            Mnemo
          </a>
          <nav class="nav" aria-label="Console">
            {NAV.map(([key, label]) => (
              <a href={`/console/${key}`} aria-current={key === section ? "page" : undefined}>
                {label}
              </a>
            ))}
          </nav>
          <form class="signout" method="post" action="/console/signout">
            <input type="hidden" name="_csrf" value={chrome.csrf} />
            <span class="org" title="Organisation">
              {chrome.orgId}
            </span>
            <button type="submit" class="btn ghost small">
              Sign out
            </button>
          </form>
        </header>
      ) : null}
      <main id="main" class={chrome ? "main" : "main narrow"}>
        <div id="htmx-notice" aria-live="polite" />
        {notice}
        {children}
      </main>
    </body>
  </html>
);

/** An `<input type=hidden>` carrying the session's form token. */
export const Csrf: FC<{ token: string }> = ({ token }) => <input type="hidden" name="_csrf" value={token} />;
