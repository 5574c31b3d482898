import { EventEmitter } from "node:events";
import type { CtxDeps } from "../context.js";
import { JOB_FINISHED_CHANNEL } from "../db/jobs.js";

/**
 * In-process signals between the API and the worker of one process: "enqueued" wakes the local
 * ingest worker at once (instead of its next poll), "finished:<job id>" ends a `wait=true` hold,
 * "finished" wakes the local webhook worker for the delivery enqueued with the terminal state,
 * "recheck" makes every `wait=true` hold read its job again (after a missed-notification gap).
 * Across processes, "finished:<job id>" also arrives through LISTEN/NOTIFY (relayFinishedJobs);
 * polling stays the fallback. Keyed by the Deps object, so there is no module-level state
 * shared between runtimes.
 */
const hubs = new WeakMap<CtxDeps, EventEmitter>();

export function jobSignals(deps: CtxDeps): EventEmitter {
  let hub = hubs.get(deps);
  if (!hub) {
    hub = new EventEmitter();
    hub.setMaxListeners(0);
    hubs.set(deps, hub);
  }
  return hub;
}

/** Subscribes to a NOTIFY channel; `onReconnect` runs after a gap in which notifications were lost. */
export type Listen = (
  channel: string,
  onPayload: (payload: string) => void,
  onReconnect: () => void,
) => Promise<{ close(): Promise<void> }>;

/**
 * Relays terminal-state notifications from every process (sent by `finishJob` in the committing
 * transaction) to this process's `wait=true` holds.
 */
export function relayFinishedJobs(deps: CtxDeps, listen: Listen): Promise<{ close(): Promise<void> }> {
  const hub = jobSignals(deps);
  return listen(
    JOB_FINISHED_CHANNEL,
    (jobId) => hub.emit(`finished:${jobId}`),
    () => hub.emit("recheck"),
  );
}

const stopDeadlines = new WeakMap<CtxDeps, number>();

/**
 * The process is shutting down: `wait=true` holds end by `deadline` (epoch ms) with the job as it
 * stands, so that they answer inside the shutdown time-out instead of being cut off.
 */
export function signalStopping(deps: CtxDeps, deadline: number) {
  stopDeadlines.set(deps, deadline);
  jobSignals(deps).emit("stopping");
}

export function stopDeadline(deps: CtxDeps): number {
  return stopDeadlines.get(deps) ?? Number.POSITIVE_INFINITY;
}
