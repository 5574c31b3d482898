/** Seconds since `start` (a performance.now() reading), to the microsecond. */
export const elapsed = (start: number) => Math.round((performance.now() - start) * 1000) / 1e6;
