/**
 * A one-line progress report on stderr for admin commands: redrawn in place on a terminal (at most
 * ten times a second), a single summary line otherwise (logs and pipes stay readable).
 */
export function progress(label: string, total?: number) {
  const tty = process.stderr.isTTY === true;
  let n = 0;
  let last = 0;
  const render = () => `${label}: ${n}${total !== undefined ? `/${total}` : ""}`;
  return {
    add(k = 1) {
      n += k;
      const now = Date.now();
      if (tty && now - last > 100) {
        last = now;
        process.stderr.write(`\r${render()}`);
      }
    },
    done(suffix = "") {
      process.stderr.write(`${tty ? "\r" : ""}${render()}${suffix ? ` ${suffix}` : ""}\n`);
    },
  };
}
