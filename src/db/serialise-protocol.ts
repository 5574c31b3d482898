import type { PGlite } from "@electric-sql/pglite";

// Frontend message types (first byte) of the extended query protocol, and those that end it.
const EXTENDED = new Set([0x50, 0x42, 0x44, 0x45, 0x43, 0x48]); // Parse Bind Describe Execute Close Flush
const ENDS = new Set([0x53, 0x51, 0x58]); // Sync, simple Query, Terminate

/**
 * pglite-socket queues client messages one at a time and, outside a transaction, takes the next
 * message from whichever connection sent one. A parameterised query is a sequence (Parse, Bind,
 * Describe, Execute, Sync) on the session's single unnamed statement, so two connections'
 * sequences interleave and fail ("unnamed prepared statement does not exist", "bind message
 * supplies 2 parameters, but prepared statement requires 1"), or worse, run with another query's
 * parameters. Its queue already keeps to one connection while a transaction is open; this makes
 * it keep to one connection from its first extended-protocol message until its Sync as well.
 */
export function keepExtendedQueriesWhole(db: PGlite): void {
  const inTransaction = db.isInTransaction.bind(db);
  const exec = db.execProtocolRawStream.bind(db);
  let midSequence = false;
  db.isInTransaction = () => midSequence || inTransaction();
  db.execProtocolRawStream = async (message, options) => {
    const type = message[0] ?? 0;
    try {
      return await exec(message, options);
    } finally {
      if (EXTENDED.has(type)) midSequence = true;
      else if (ENDS.has(type)) midSequence = false;
    }
  };
}
