import path from "node:path";
import { DatabaseSync } from "node:sqlite";

/**
 * An exclusive, OS-level lock on a data directory that dies with the process holding it.
 *
 * It is SQLite's own file lock (POSIX `fcntl` locks on Linux and macOS, `LockFileEx` on Windows)
 * on `owner.lock`, taken through Node's built-in `node:sqlite`: `BEGIN EXCLUSIVE` on a connection
 * in exclusive locking mode, never committed. The operating system drops the lock when the
 * process ends, however it ends (kill -9 and power loss included), so there is no stale lock to
 * clean up, unlike a PID file. A second taker, in another process or in this one, fails at once.
 */
export interface DirLock {
  readonly file: string;
  release(): void;
}

export const LOCK_FILE = "owner.lock";

/** Takes the lock on `dir` (which must exist), or returns undefined when someone holds it. */
export function tryLockDir(dir: string): DirLock | undefined {
  const file = path.join(dir, LOCK_FILE);
  const db = new DatabaseSync(file, { timeout: 0 });
  try {
    db.exec("PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE;");
  } catch (err) {
    db.close();
    if (/locked|busy/i.test((err as Error).message)) return undefined;
    throw err;
  }
  let held = true;
  return {
    file,
    release() {
      if (!held) return;
      held = false;
      db.close();
    },
  };
}
