/**
 * A fault-injecting static HTTP server for the io/ tests: serves files (by default the shared fixtures folder) on
 * 127.0.0.1 at a random port with real `Range`/`If-Range`/ETag semantics, and on request misbehaves the ways real
 * servers and networks do — dropped connections, stalls, slow trickles, ignored `Range`, error statuses, a file that
 * changes mid-download. Every request is logged so tests can assert exactly which byte ranges were fetched.
 */

import { readFileSync, statSync } from 'node:fs';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { createHash } from 'node:crypto';
import { SHARED_DIR } from './shared-path.js';

/** How to misbehave for one path. Faults apply to requests number `skip+1 … skip+times` of that path. */
export interface Fault {
  /** Leave this many requests of the path untouched before the fault applies (e.g. 1 = let the probe through). */
  skip?: number;
  /** Number of requests the fault applies to (default: all after `skip`). */
  times?: number;
  /** Answer with this status and no body (404, 403, 416, 500, 503…). */
  status?: number;
  /** Send this many body bytes, then destroy the connection. */
  dropAfterBytes?: number;
  /** Send this many body bytes, then send nothing more (the socket stays open until the client gives up). */
  stallAfterBytes?: number;
  /** Send the body in pieces of `bytesPerWrite` every `delayMs`. */
  trickle?: { bytesPerWrite: number; delayMs: number };
  /** Ignore `Range` and answer 200 with the whole file. */
  ignoreRange?: boolean;
  /** Send neither ETag nor Last-Modified. */
  noValidators?: boolean;
  /** Ignore `If-Range` (answer 206 even when the validator no longer matches), like some broken servers. */
  ignoreIfRange?: boolean;
  /** Omit Content-Length and end the body cleanly after this many bytes (a truncating proxy). */
  shortBodyBytes?: number;
  /** Once this many requests of the path were answered, serve `bytes` as a new version (new ETag, Last-Modified). */
  replaceAfterRequests?: { requests: number; bytes: Uint8Array };
  /** With `status`: send this `Retry-After` value (seconds or an HTTP-date). */
  retryAfter?: string;
  /** On a 206: null = omit `Content-Range`; a function = send its value instead of the true one. */
  contentRange?: null | ((start: number, end: number, size: number) => string);
  /** Send `X-Linked-Etag: "<sha256 of the bytes served>"` (as Hugging Face does for LFS files). */
  linkedEtag?: boolean;
}

/** One logged request. `range` and `ifRange` are the request headers (null when absent). */
interface RequestRecord {
  readonly method: string;
  readonly path: string;
  readonly range: string | null;
  readonly ifRange: string | null;
  status: number;
  /** `Date.now()` when the request arrived. */
  readonly at: number;
  /** Body bytes the server wrote (before any drop or stall). */
  bytesSent: number;
}

/** A running server. `close()` destroys every open connection too. */
export interface FaultServer {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  /** Absolute URL of `path` (e.g. `/models/stories260K.gguf`). */
  url(path: string): string;
  /** Every request so far, in arrival order. */
  readonly requests: RequestRecord[];
  /** Requests for `path` only. */
  requestsFor(path: string): RequestRecord[];
  /** Installs (or with undefined, clears) the fault of `path`; its request counter restarts at 0. */
  setFault(path: string, fault: Fault | undefined): void;
  /** Answers requests for `path` with `302 Location: target` (a path on this server); undefined removes it. */
  setRedirect(path: string, target: string | undefined): void;
  /** Serves `bytes` at `path` from now on, as a new version (new ETag and Last-Modified). */
  replaceFile(path: string, bytes: Uint8Array): void;
  /** The bytes currently served at `path`. */
  currentBytes(path: string): Uint8Array;
  /** Forgets the request log (and resets `maxConcurrent`). */
  clearLog(): void;
  /** Most responses in progress at the same time since the last `clearLog`. */
  readonly maxConcurrent: number;
  /**
   * Resolves once no response is in progress and no request has arrived for `quietMs` (or after 5 s at most) — call
   * it before `clearLog` after an aborted transfer, so requests sent just before the abort stay out of the next log.
   */
  idle(quietMs?: number): Promise<void>;
  close(): Promise<void>;
}

interface Version {
  readonly bytes: Uint8Array;
  readonly etag: string;
  readonly lastModified: string;
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json',
  '.map': 'application/json',
  '.wasm': 'application/wasm',
};

/**
 * Starts a server. `mounts` maps URL prefixes to folders (longest prefix wins); default `{ '/': SHARED_DIR }`, so
 * `/models/stories260K.gguf` is the shared fixture.
 */
export async function startFaultServer(mounts: Record<string, string> = { '/': SHARED_DIR }): Promise<FaultServer> {
  const requests: RequestRecord[] = [];
  const faults = new Map<string, { fault: Fault; seen: number }>();
  const versions = new Map<string, Version>();
  const redirects = new Map<string, string>();
  const sockets = new Set<Socket>();
  let versionCounter = 0;
  let inFlight = 0;
  let maxConcurrent = 0;
  let lastArrivalMs = 0;

  const makeVersion = (bytes: Uint8Array): Version => {
    versionCounter++;
    const hash = createHash('sha256').update(bytes).digest('hex').slice(0, 16);
    return {
      bytes,
      etag: `"${hash}-${versionCounter}"`,
      lastModified: new Date(Date.UTC(2024, 0, 1) + versionCounter * 86_400_000).toUTCString(),
    };
  };
  const fileFor = (path: string): string | null => {
    const prefix = Object.keys(mounts)
      .filter((p) => path.startsWith(p))
      .sort((a, b) => b.length - a.length)[0];
    if (prefix === undefined) return null;
    const root = resolve(mounts[prefix]);
    const file = normalize(join(root, decodeURIComponent(path.slice(prefix.length))));
    if (file !== root && !file.startsWith(root + sep)) return null;
    try {
      return statSync(file).isFile() ? file : null;
    } catch {
      return null;
    }
  };
  const versionOf = (path: string): Version | null => {
    const known = versions.get(path);
    if (known !== undefined) return known;
    const file = fileFor(path);
    if (file === null) return null;
    const v = makeVersion(new Uint8Array(readFileSync(file)));
    versions.set(path, v);
    return v;
  };

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    const rangeHeader = req.headers.range ?? null;
    const ifRange = typeof req.headers['if-range'] === 'string' ? req.headers['if-range'] : null;
    const record: RequestRecord = {
      method: req.method ?? 'GET',
      path,
      range: rangeHeader,
      ifRange,
      status: 0,
      at: Date.now(),
      bytesSent: 0,
    };
    requests.push(record);
    lastArrivalMs = Date.now();
    inFlight++;
    maxConcurrent = Math.max(maxConcurrent, inFlight);
    res.on('close', () => inFlight--);
    const slot = faults.get(path);
    let fault: Fault = {};
    if (slot !== undefined) {
      const n = slot.seen++;
      const swap = slot.fault.replaceAfterRequests;
      if (swap !== undefined && n === swap.requests) versions.set(path, makeVersion(swap.bytes));
      const skip = slot.fault.skip ?? 0;
      if (n >= skip && (slot.fault.times === undefined || n < skip + slot.fault.times)) fault = slot.fault;
    }
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader(
      'Access-Control-Expose-Headers',
      'Content-Range, Content-Length, ETag, Last-Modified, Accept-Ranges, Retry-After, X-Linked-Etag',
    );
    res.setHeader('Cache-Control', 'no-store');
    const redirect = redirects.get(path);
    if (redirect !== undefined) {
      res.setHeader('Location', redirect);
      record.status = 302;
      res.statusCode = 302;
      return void res.end();
    }
    const v = versionOf(path);
    const finish = (status: number): void => {
      record.status = status;
      res.statusCode = status;
      res.end();
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return finish(405);
    if (v === null) return finish(404);
    if (fault.status !== undefined) {
      if (fault.retryAfter !== undefined) res.setHeader('Retry-After', fault.retryAfter);
      return finish(fault.status);
    }
    const size = v.bytes.byteLength;
    res.setHeader('Content-Type', CONTENT_TYPES[extname(path)] ?? 'application/octet-stream');
    if (!fault.noValidators) {
      res.setHeader('ETag', v.etag);
      res.setHeader('Last-Modified', v.lastModified);
    }
    if (fault.linkedEtag) res.setHeader('X-Linked-Etag', `"${createHash('sha256').update(v.bytes).digest('hex')}"`);
    let start = 0;
    let end = size - 1;
    let status = 200;
    const isIfRangeOk =
      ifRange === null || fault.ignoreIfRange === true || ifRange === v.etag || ifRange === v.lastModified;
    if (rangeHeader !== null && !fault.ignoreRange && isIfRangeOk) {
      const m = /^bytes=(\d*)-(\d*)$/.exec(rangeHeader.trim());
      let a = m && m[1] !== '' ? Number(m[1]) : NaN;
      let b = m && m[2] !== '' ? Number(m[2]) : size - 1;
      if (m && m[1] === '' && m[2] !== '') {
        a = Math.max(0, size - Number(m[2]));
        b = size - 1;
      }
      if (!m || Number.isNaN(a) || a >= size || b < a) {
        res.setHeader('Content-Range', `bytes */${size}`);
        return finish(416);
      }
      start = a;
      end = Math.min(b, size - 1);
      status = 206;
      if (fault.contentRange === undefined) res.setHeader('Content-Range', `bytes ${start}-${end}/${size}`);
      else if (fault.contentRange !== null) res.setHeader('Content-Range', fault.contentRange(start, end, size));
    }
    if (!fault.ignoreRange) res.setHeader('Accept-Ranges', 'bytes');
    if (fault.shortBodyBytes === undefined) res.setHeader('Content-Length', String(end - start + 1));
    record.status = status;
    res.statusCode = status;
    if (req.method === 'HEAD') return void res.end();
    const body = v.bytes.subarray(start, end + 1);
    sendBody(res, fault.shortBodyBytes === undefined ? body : body.subarray(0, fault.shortBodyBytes), fault, record);
  };

  const server: Server = createServer(handle);
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    origin,
    url: (path) => `${origin}${path}`,
    requests,
    requestsFor: (path) => requests.filter((r) => r.path === path),
    setFault: (path, fault) => {
      if (fault === undefined) faults.delete(path);
      else faults.set(path, { fault, seen: 0 });
    },
    setRedirect: (path, target) => {
      if (target === undefined) redirects.delete(path);
      else redirects.set(path, target);
    },
    replaceFile: (path, bytes) => void versions.set(path, makeVersion(bytes)),
    currentBytes: (path) => {
      const v = versionOf(path);
      if (v === null) throw new Error(`fault server: nothing is served at ${path}`);
      return v.bytes;
    },
    clearLog: () => {
      requests.length = 0;
      maxConcurrent = inFlight;
    },
    get maxConcurrent() {
      return maxConcurrent;
    },
    idle: async (quietMs = 50) => {
      const giveUpAt = Date.now() + 5000; // a response stalled on purpose may never close by itself
      while ((inFlight > 0 || Date.now() - lastArrivalMs < quietMs) && Date.now() < giveUpAt) {
        await new Promise((ok) => setTimeout(ok, 10));
      }
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      server.closeAllConnections();
      await new Promise<void>((ok) => server.close(() => ok()));
    },
  };
}

/** Writes `body` honouring the drop / stall / trickle parts of `fault`. */
function sendBody(res: ServerResponse, body: Uint8Array, fault: Fault, record: RequestRecord): void {
  const limit = fault.dropAfterBytes ?? fault.stallAfterBytes;
  const piece = fault.trickle?.bytesPerWrite ?? 64 * 1024;
  const delayMs = fault.trickle?.delayMs ?? 0;
  let pos = 0;
  const step = (): void => {
    if (res.destroyed) return;
    if (limit !== undefined && pos >= limit) {
      if (fault.dropAfterBytes !== undefined) res.socket?.destroy();
      return; // a stall: keep the socket open and silent
    }
    if (pos >= body.byteLength) return void res.end();
    const to = Math.min(body.byteLength, pos + piece, limit ?? Infinity);
    const chunk = body.subarray(pos, to);
    pos = to;
    record.bytesSent = pos;
    res.write(chunk, () => {
      if (delayMs > 0) setTimeout(step, delayMs);
      else step();
    });
  };
  step();
}
