/** How often a progress line is written when stderr is not a terminal (a log, a pipe). */
const LOG_EVERY_MS = 10_000;

/**
 * A one-line progress report on stderr for admin commands: redrawn in place on a terminal (at most
 * ten times a second); otherwise one line every ten seconds while it runs and a summary at the end,
 * so an operator reading a job log can tell a slow run from a stuck one.
 */
export function progress(label: string, total?: number, options: { everyMs?: number } = {}) {
  const tty = process.stderr.isTTY === true;
  const every = tty ? 100 : (options.everyMs ?? LOG_EVERY_MS);
  let n = 0;
  let last = Date.now();
  const render = () => `${label}: ${n}${total !== undefined ? `/${total}` : ""}`;
  return {
    add(k = 1) {
      n += k;
      const now = Date.now();
      if (now - last >= every) {
        last = now;
        process.stderr.write(tty ? `\r${render()}` : `${render()}\n`);
      }
    },
    done(suffix = "") {
      process.stderr.write(`${tty ? "\r" : ""}${render()}${suffix ? ` ${suffix}` : ""}\n`);
    },
  };
}
