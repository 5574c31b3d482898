/**
 * How long the local extractor computes before it gives the event loop a turn, in milliseconds:
 * it reads a conversation in steps (createLocalExtractor), and a step ends once this much time has
 * passed, however many turns that was. Counted in turns (250 a step), a step of a 5,000-message job
 * took about 75 ms, and twice that beside other work on a busy machine, so `/healthz` waited as
 * long.
 */
export const STEP_MS = 10;

/**
 * A step's clock: `due()` says whether the step has run `ms` milliseconds; `restart()` starts the
 * next one (after the pause, so the time spent paused does not count).
 */
export function stepClock(ms: number = STEP_MS) {
  let start = performance.now();
  return {
    due: () => performance.now() - start >= ms,
    restart: () => {
      start = performance.now();
    },
  };
}

/** Runs a stepped computation to its end in one go (no pauses). */
export function allSteps<T>(steps: Generator<undefined, T, undefined>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** Runs a stepped computation, giving the event loop a turn between its steps. */
export async function stepsWithPauses<T>(steps: Generator<undefined, T, undefined>): Promise<T> {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    await new Promise((resolve) => setImmediate(resolve));
  }
}
