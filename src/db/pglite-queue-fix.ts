/**
 * pglite-socket 0.2.17 serves every connection from one PGlite session and queues protocol
 * messages one by one. Outside a transaction it takes them first-come, so two connections using
 * the extended protocol at once interleave their Parse/Bind/Execute/Sync, and one of them fails
 * with `portal "" does not exist` (seen at 4 concurrent ingest clients). This keeps a connection's
 * extended-protocol sequence together until its Sync, the way the library already keeps a
 * transaction together. It replaces the queue's scheduling method; the message handling is theirs.
 */
interface QueueItem {
  handlerId: number;
  message: Uint8Array;
  resolve(n: number): void;
  reject(e: unknown): void;
  onData(d: Uint8Array): void;
}
interface QueryQueue {
  queue: QueueItem[];
  processing: boolean;
  lastHandlerId: number | null;
  db: {
    isInTransaction(): boolean;
    runExclusive<T>(fn: () => Promise<T>): Promise<T>;
    execProtocolRawStream(m: Uint8Array, o: { onRawData(d: Uint8Array): void }): Promise<unknown>;
  };
  processQueue(): Promise<void>;
  clearQueueForHandler(id: number): void;
}

const SYNC = 0x53; // 'S'
const QUERY = 0x51; // 'Q' (simple query: self-contained)
const EXTENDED = new Set([0x50, 0x42, 0x44, 0x45, 0x43, 0x48]); // Parse Bind Describe Execute Close Flush

export function keepExtendedSequencesTogether(server: unknown): void {
  const q = (server as { queryQueue?: QueryQueue }).queryQueue;
  if (!q || typeof q.processQueue !== "function") return; // library changed: leave it alone
  let open: number | null = null;
  q.processQueue = async function (this: QueryQueue) {
    if (this.processing || this.queue.length === 0) return;
    this.processing = true;
    try {
      while (this.queue.length > 0) {
        const sticky = this.db.isInTransaction() && this.lastHandlerId !== null ? this.lastHandlerId : open;
        let item: QueueItem | undefined;
        if (sticky !== null) {
          const i = this.queue.findIndex((r) => r.handlerId === sticky);
          if (i === -1) break; // wait for that connection's next message
          item = this.queue.splice(i, 1)[0];
        } else {
          item = this.queue.shift();
        }
        if (!item) break;
        const type = item.message[0]!;
        let bytes = 0;
        try {
          const it = item;
          await this.db.runExclusive(() =>
            this.db.execProtocolRawStream(it.message, {
              onRawData: (d) => {
                bytes += d.length;
                it.onData(d);
              },
            }),
          );
        } catch (err) {
          item.reject(err);
          if (open === item.handlerId) open = null;
          continue;
        }
        if (type === SYNC || type === QUERY) {
          if (open === item.handlerId) open = null;
        } else if (EXTENDED.has(type)) {
          open = item.handlerId;
        }
        this.lastHandlerId = item.handlerId;
        item.resolve(bytes);
      }
    } finally {
      this.processing = false;
    }
  };
  const clear = q.clearQueueForHandler.bind(q);
  q.clearQueueForHandler = (id: number) => {
    clear(id);
    if (open === id) {
      open = null;
      void q.processQueue();
    }
  };
}
