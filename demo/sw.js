/*
 * webgguf demo service worker: caches the app so the demo opens offline after one visit (models live in IndexedDB,
 * never here), and adds COOP/COEP headers to same-origin responses so WASM threads work even on static hosts that
 * cannot send those headers themselves.
 *
 * Updates never strand an open tab: demo/build-service-worker.mjs inlines the list of files below and names the cache
 * after a hash of every file's content, so any change (a chunk, the icon, the manifest) installs a new worker with a
 * fresh cache, fetched past the HTTP cache. The new worker WAITS (no automatic skipWaiting): the page shows a
 * "reload to update" banner and asks it to take over only when the person agrees. A previous version's cache is
 * kept while any open tab still runs that version (tabs are asked which main script they run), so its lazily loaded
 * chunks (worker, WASM, WebGPU) keep working even where the host has already deleted the old files.
 */
const VERSION = '__BUILD_ID__';
const PREFIX = 'webgguf-shell-';
const CACHE = `${PREFIX}${VERSION}`;
const PRECACHE = [
  /*__PRECACHE__*/
];
const SHELL = ['./', './index.html'];

/** True for a response that is an HTML page standing in for a file that is not one (SPA fallback, error page). */
function isHtmlStandIn(url, res) {
  const path = new URL(url, self.location.href).pathname;
  const expectsHtml = path.endsWith('/') || path.endsWith('.html');
  return !expectsHtml && /^\s*text\/html/i.test(res.headers.get('Content-Type') ?? '');
}

self.addEventListener('install', (event) => {
  event.waitUntil(
    (async () => {
      const cache = await caches.open(CACHE);
      for (const url of [...SHELL, ...PRECACHE]) {
        // Past the HTTP cache: a file whose content changed must not come back stale.
        const res = await fetch(new Request(url, { cache: 'reload' }));
        if (!res.ok || isHtmlStandIn(url, res))
          throw new Error(`webgguf sw: ${url} is missing from this deploy (${res.status})`);
        await cache.put(url, res);
      }
    })(),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    (async () => {
      await self.clients.claim();
      await pruneCaches();
    })(),
  );
});

/** Asks an open tab which main script it runs (null when it does not answer within a second). */
function scriptOf(client) {
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    const timer = setTimeout(() => resolve(null), 1000);
    channel.port1.onmessage = (ev) => {
      clearTimeout(timer);
      resolve(typeof ev.data === 'string' ? ev.data : null);
    };
    client.postMessage({ type: 'webgguf-which-script' }, [channel.port2]);
  });
}

/**
 * Deletes the caches of older versions that no open tab uses any more. A tab that does not answer (still loading,
 * or an old version that cannot) keeps every cache for now; the next prune (the next page start) will look again.
 */
async function pruneCaches() {
  const old = (await caches.keys()).filter((k) => k.startsWith(PREFIX) && k !== CACHE);
  if (old.length === 0) return;
  const tabs = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
  const scripts = await Promise.all(tabs.map(scriptOf));
  if (scripts.includes(null)) return;
  for (const key of old) {
    const cache = await caches.open(key);
    const inUse = await Promise.all(scripts.map((s) => cache.match(s)));
    if (!inUse.some(Boolean)) await caches.delete(key);
  }
}

self.addEventListener('message', (event) => {
  if (event.data?.type === 'skip-waiting') void self.skipWaiting();
  else if (event.data?.type === 'prune') event.waitUntil(pruneCaches());
});

/** Same response with cross-origin isolation headers added (when missing). */
function isolate(res) {
  if (!res || res.status === 0 || res.type === 'opaque' || res.headers.get('Cross-Origin-Embedder-Policy')) return res;
  const headers = new Headers(res.headers);
  headers.set('Cross-Origin-Opener-Policy', 'same-origin');
  headers.set('Cross-Origin-Embedder-Policy', 'require-corp');
  headers.set('Cross-Origin-Resource-Policy', 'same-origin');
  return new Response(res.body, { status: res.status, statusText: res.statusText, headers });
}

const isModelRequest = (req, url) => req.headers.has('Range') || url.pathname.endsWith('.gguf');

/** This version's copy of `req` (exact URL, query included), else an older version's still kept. */
async function cached(req) {
  return (await (await caches.open(CACHE)).match(req)) ?? (await caches.match(req)) ?? null;
}

self.addEventListener('fetch', (event) => {
  const req = event.request;
  const url = new URL(req.url);
  if (req.method !== 'GET' || url.origin !== self.location.origin || isModelRequest(req, url)) return;
  event.respondWith(
    (async () => {
      if (req.mode === 'navigate') {
        // The page from the network when online (never stored: an error page must not replace the app), else the
        // app shell of this version.
        try {
          return isolate(await fetch(req));
        } catch {
          const cache = await caches.open(CACHE);
          return isolate((await cache.match('./index.html')) ?? (await cache.match('./')) ?? Response.error());
        }
      }
      const hit = await cached(req);
      if (hit) return isolate(hit);
      const res = await fetch(req);
      // Runtime caching only for real files: never an error, a redirect or an HTML page standing in for a file.
      if (res.ok && res.type === 'basic' && !isHtmlStandIn(req.url, res))
        await (await caches.open(CACHE)).put(req, res.clone());
      return isolate(res);
    })(),
  );
});
