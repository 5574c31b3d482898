import { EventEmitter } from "node:events";
import type { Deps } from "../context.js";

/**
 * In-process signals between the API and the worker of one process: "enqueued" wakes the local
 * ingest worker at once (instead of its next poll), "finished:<job id>" ends a `wait=true` hold,
 * "finished" wakes the local webhook worker for the delivery enqueued with the terminal state.
 * Split API/worker deployments still work through polling; these only make one process faster.
 * Keyed by the Deps object, so there is no module-level state shared between runtimes.
 */
const hubs = new WeakMap<Deps, EventEmitter>();

export function jobSignals(deps: Deps): EventEmitter {
  let hub = hubs.get(deps);
  if (!hub) {
    hub = new EventEmitter();
    hub.setMaxListeners(0);
    hubs.set(deps, hub);
  }
  return hub;
}
