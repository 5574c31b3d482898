import { STDIO_DEFAULT_MAX_BUFFER_SIZE } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  ErrorCode,
  type JSONRPCMessage,
  JSONRPCMessageSchema,
  JSONRPCNotificationSchema,
  JSONRPCRequestSchema,
  RequestIdSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "../src/logger.js";

type Id = string | number;

/** The longest line read as a message: the SDK's own stdio bound (10 MiB). */
export const MAX_LINE_BYTES = STDIO_DEFAULT_MAX_BUFFER_SIZE;

/** Bytes kept of each end of a line too long to read, to find its id. */
const EDGE = 256;

/**
 * MCP over stdio, one JSON-RPC message per line (the SDK's StdioServerTransport, with these
 * differences). Every line gets an answer when it is owed one: a line that is not JSON is
 * -32700 Parse error, a message that is not JSON-RPC (a bad envelope, a batch) -32600 Invalid
 * Request, with the request's id when it can be read (else null, as JSON-RPC 2.0 §5 says), and
 * each is logged. A line longer than the bound is skipped to its end and refused the same way,
 * and the transport keeps reading (the SDK's transport closed there, and the process exited 0).
 * At the end of input it answers the requests already received before it closes: the MCP stdio
 * shutdown is "close stdin, then wait for the server to exit" (`drain` does the same on a stop
 * signal, which clients send when that wait runs out).
 */
export class StdioLineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private chunks: Buffer[] = [];
  private size = 0;
  /** Inside a line over the bound: its first bytes, and its last bytes so far. */
  private cut: { head: string; tail: Buffer; size: number } | undefined;
  /** Requests received and not yet answered. */
  private readonly pending = new Set<Id>();
  private ended = false;
  private closed = false;
  private markClosed!: () => void;
  private readonly done = new Promise<void>((resolve) => {
    this.markClosed = resolve;
  });

  constructor(
    private readonly log: Logger,
    private readonly input: NodeJS.ReadableStream = process.stdin,
    private readonly output: NodeJS.WritableStream = process.stdout,
    private readonly maxLine = MAX_LINE_BYTES,
  ) {}

  async start(): Promise<void> {
    this.input.on("data", this.onData);
    this.input.once("end", this.onEnd);
    this.input.on("error", this.onInputError);
  }

  send(message: JSONRPCMessage): Promise<void> {
    if ("id" in message && message.id !== undefined && ("result" in message || "error" in message)) {
      this.pending.delete(message.id);
    }
    return new Promise<void>((resolve) => {
      if (this.output.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.output.once("drain", resolve);
    }).then(() => this.closeWhenDone());
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.input.off("data", this.onData);
    this.input.off("end", this.onEnd);
    this.input.off("error", this.onInputError);
    // A paused stdin no longer holds the process open (closed on SIGTERM, stdin is still open).
    if (this.input.listenerCount("data") === 0) this.input.pause();
    this.chunks = [];
    this.markClosed();
    this.onclose?.();
  }

  /**
   * Reads no more input (the process is stopping), as at its end: resolves once the requests
   * already read are answered and the transport has closed, or at `deadline` (epoch ms) with some
   * still unanswered. A line cut short by the stop is dropped, not refused.
   */
  async drain(deadline: number): Promise<void> {
    this.input.off("data", this.onData);
    this.chunks = [];
    this.size = 0;
    this.cut = undefined;
    this.ended = true;
    this.closeWhenDone();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
    });
    await Promise.race([this.done, late]);
    clearTimeout(timer);
  }

  private readonly onData = (chunk: Buffer | string) => {
    const data = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    let from = 0;
    for (let nl = data.indexOf(10); nl !== -1; nl = data.indexOf(10, from)) {
      this.take(data.subarray(from, nl));
      this.lineEnd();
      from = nl + 1;
    }
    this.take(data.subarray(from));
  };

  private readonly onEnd = () => {
    // A last line without its newline is still a line.
    if (this.size > 0 || this.cut) this.lineEnd();
    this.ended = true;
    this.closeWhenDone();
  };

  private readonly onInputError = (err: Error) => this.onerror?.(err);

  private closeWhenDone(): void {
    if (this.ended && this.pending.size === 0) void this.close();
  }

  /** Part of the current line: kept, or, past the bound, only its edges. */
  private take(part: Buffer): void {
    if (part.length === 0) return;
    if (!this.cut && this.size + part.length <= this.maxLine) {
      this.chunks.push(part);
      this.size += part.length;
      return;
    }
    if (!this.cut) {
      let head = Buffer.alloc(0);
      for (const c of [...this.chunks, part]) {
        if (head.length >= EDGE) break;
        head = Buffer.concat([head, c.subarray(0, EDGE - head.length)]);
      }
      this.cut = { head: head.toString("utf8"), tail: Buffer.alloc(0), size: this.size };
      this.chunks = [];
      this.size = 0;
    }
    this.cut.tail = Buffer.concat([this.cut.tail, part]).subarray(-EDGE);
    this.cut.size += part.length;
  }

  private lineEnd(): void {
    if (this.cut) {
      const { head, tail, size } = this.cut;
      this.cut = undefined;
      const id = edgeId(head, tail.toString("utf8").replace(/\r$/, ""));
      this.log.warn({ bytes: size, id }, "mcp stdio: a line over the size bound was skipped");
      this.refuse(
        id,
        ErrorCode.InvalidRequest,
        `Invalid Request: the message is ${size} bytes; a line may hold at most ${this.maxLine}.`,
      );
      return;
    }
    const line = Buffer.concat(this.chunks).toString("utf8").replace(/\r$/, "");
    this.chunks = [];
    this.size = 0;
    if (line.trim() === "") return;
    this.handle(line);
  }

  private handle(line: string): void {
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch {
      this.log.warn({ bytes: Buffer.byteLength(line) }, "mcp stdio: a line that is not JSON");
      this.refuse(null, ErrorCode.ParseError, "Parse error: the line is not JSON.");
      return;
    }
    const parsed = JSONRPCMessageSchema.safeParse(raw);
    if (!parsed.success) {
      const { id, problem } = envelopeProblem(raw);
      this.log.warn({ id, problem }, "mcp stdio: a message that is not JSON-RPC");
      this.refuse(id, ErrorCode.InvalidRequest, `Invalid Request: ${problem}.`);
      return;
    }
    const message = parsed.data;
    if ("method" in message) {
      if ("id" in message) this.pending.add(message.id);
      else if (message.method === "notifications/cancelled") {
        // A cancelled request is never answered: nothing to wait for at the end.
        const id = RequestIdSchema.safeParse(message.params?.requestId);
        if (id.success) this.pending.delete(id.data);
      }
    }
    this.onmessage?.(message);
  }

  private refuse(id: Id | null, code: number, message: string): void {
    const answer = { jsonrpc: "2.0", id, error: { code, message } } as unknown as JSONRPCMessage;
    this.send(answer).catch((err: unknown) => this.onerror?.(err as Error));
  }
}

/** Why a parsed line is not a JSON-RPC message, and the id to answer with (null when unreadable). */
export function envelopeProblem(raw: unknown): { id: Id | null; problem: string } {
  if (Array.isArray(raw)) return { id: null, problem: "one message per line (batches are not supported)" };
  if (!raw || typeof raw !== "object") return { id: null, problem: "a message is a JSON object" };
  const o = raw as Record<string, unknown>;
  const id = RequestIdSchema.safeParse(o.id);
  const schema = "method" in o ? ("id" in o ? JSONRPCRequestSchema : JSONRPCNotificationSchema) : undefined;
  const issue = schema?.safeParse(raw).error?.issues[0];
  const problem = issue
    ? `${issue.path.length ? `\`${issue.path.join(".")}\`: ` : ""}${issue.message}`
    : "not a JSON-RPC 2.0 request, notification or response";
  // A readable id is answered with, method or not ({"jsonrpc":"2.0","id":5} is a request missing
  // its method); not a response's, whose id is one of this server's own requests.
  const response = "result" in o || "error" in o;
  return { id: id.success && !response ? id.data : null, problem };
}

const ID_VALUE = String.raw`(-?\d+|"(?:[^"\\]|\\.)*")`;
/** The id as the first member of the object (after `jsonrpc`), or as its last (as the SDK writes it). */
const HEAD_ID = new RegExp(String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*${ID_VALUE}`);
const TAIL_ID = new RegExp(String.raw`"id"\s*:\s*${ID_VALUE}\s*\}\s*$`);

/** The id of a line too long to parse, read from its edges; null when neither edge holds it. */
function edgeId(head: string, tail: string): Id | null {
  const m = HEAD_ID.exec(head) ?? TAIL_ID.exec(tail);
  if (!m) return null;
  try {
    const id = RequestIdSchema.safeParse(JSON.parse(m[1]!));
    return id.success ? id.data : null;
  } catch {
    return null;
  }
}
