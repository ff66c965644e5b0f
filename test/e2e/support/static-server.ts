/**
 * A small static HTTP server for the demo end-to-end tests: serves folders at URL prefixes on 127.0.0.1 with the
 * headers a real deployment of the demo needs (COOP/COEP so the page is cross-origin isolated, CORP, CORS, Range and
 * ETag for model files) — or, as an option, without COOP/COEP like a plain static host — and logs every request so
 * tests can count requests for the model. A `?throttle` query on any URL makes its body trickle (a slow network).
 */

import { createReadStream, statSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { extname, join, normalize, resolve, sep } from 'node:path';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.webmanifest': 'application/manifest+json',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.map': 'application/json',
  '.gguf': 'application/octet-stream',
};

/** One logged request. */
interface LoggedRequest {
  readonly method: string;
  readonly path: string;
  readonly range: string | null;
  readonly status: number;
}

/** A running server. */
export interface StaticServer {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  url(path: string): string;
  /** Every request so far. */
  readonly log: LoggedRequest[];
  /** Requests whose path is `path`. */
  requestsFor(path: string): LoggedRequest[];
  close(): Promise<void>;
}

/** Options of `startStaticServer`. */
export interface StaticServerOptions {
  /** Send COOP/COEP/CORP (default true); false imitates a static host that cannot set headers. */
  readonly isolation?: boolean;
  /** Answer unknown paths with `/index.html` and status 200, like a single-page-app host (default false). */
  readonly spaFallback?: boolean;
}

/** Starts a server mapping URL prefixes (e.g. `/`, `/shared/`) to folders; the longest matching prefix wins. */
export async function startStaticServer(
  mounts: Record<string, string>,
  options: StaticServerOptions = {},
): Promise<StaticServer> {
  const prefixes = Object.keys(mounts).sort((a, b) => b.length - a.length);
  const log: LoggedRequest[] = [];
  const sockets = new Set<Socket>();

  const locate = (pathname: string): string | null => {
    const prefix = prefixes.find((p) => pathname.startsWith(p));
    if (prefix === undefined) return null;
    const base = resolve(mounts[prefix]);
    const file = normalize(join(base, decodeURIComponent(pathname.slice(prefix.length))));
    if (file !== base && !file.startsWith(base + sep)) return null;
    try {
      const st = statSync(file);
      if (st.isDirectory()) return statSync(join(file, 'index.html')).isFile() ? join(file, 'index.html') : null;
      return st.isFile() ? file : null;
    } catch {
      return null;
    }
  };

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const range = typeof req.headers.range === 'string' ? req.headers.range : null;
    const record = (status: number): void =>
      void log.push({ method: req.method ?? 'GET', path: url.pathname, range, status });
    if (options.isolation !== false) {
      res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
      res.setHeader('Cross-Origin-Embedder-Policy', 'require-corp');
      res.setHeader('Cross-Origin-Resource-Policy', 'cross-origin');
    }
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('Access-Control-Expose-Headers', 'Content-Range, Content-Length, ETag, Last-Modified, Accept-Ranges');
    res.setHeader('Cache-Control', 'no-cache');
    const file = locate(url.pathname) ?? (options.spaFallback ? locate('/index.html') : null);
    if (file === null) {
      record(404);
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
      return;
    }
    const st = statSync(file);
    const size = st.size;
    res.setHeader('Content-Type', CONTENT_TYPES[extname(file)] ?? 'application/octet-stream');
    res.setHeader('Accept-Ranges', 'bytes');
    res.setHeader('ETag', `"${size.toString(16)}-${Math.floor(st.mtimeMs).toString(16)}"`);
    res.setHeader('Last-Modified', st.mtime.toUTCString());
    let start = 0;
    let end = size - 1;
    let status = 200;
    const m = range ? /^bytes=(\d*)-(\d*)$/.exec(range) : null;
    if (m && (m[1] !== '' || m[2] !== '')) {
      if (m[1] === '') {
        start = Math.max(0, size - Number(m[2]));
      } else {
        start = Number(m[1]);
        end = m[2] === '' ? size - 1 : Math.min(size - 1, Number(m[2]));
      }
      if (start > end || start >= size) {
        record(416);
        res.writeHead(416, { 'Content-Range': `bytes */${size}` }).end();
        return;
      }
      status = 206;
      res.setHeader('Content-Range', `bytes ${start}-${end}/${size}`);
    }
    res.setHeader('Content-Length', String(end - start + 1));
    record(status);
    res.writeHead(status);
    if (req.method === 'HEAD' || size === 0) {
      res.end();
      return;
    }
    if (url.searchParams.has('throttle')) {
      // A slow link: 32 KiB every 100 ms (~320 KiB/s), so a test can watch progress and pause mid-download.
      const stream = createReadStream(file, { start, end, highWaterMark: 32 * 1024 });
      stream.on('data', (piece) => {
        stream.pause();
        res.write(piece, () => setTimeout(() => stream.resume(), 100));
      });
      stream.on('end', () => res.end());
      res.on('close', () => stream.destroy());
      return;
    }
    createReadStream(file, { start, end }).pipe(res);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    url: (path) => new URL(path, origin).href,
    log,
    requestsFor: (path) => log.filter((r) => r.path === path),
    close: () =>
      new Promise<void>((ok) => {
        for (const s of sockets) s.destroy();
        server.close(() => ok());
      }),
  };
}
