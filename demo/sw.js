/*
 * webgguf demo service worker: caches the app shell and code so the demo opens offline after one visit (models live
 * in IndexedDB, never here), and adds COOP/COEP headers to same-origin responses so WASM threads work even on static
 * hosts that cannot send those headers themselves.
 */
// The build (vite.config.ts) replaces __BUILD_ID__ with a hash of the file list, so each deploy gets a new worker
// (browsers reinstall a service worker whose bytes changed) and a fresh cache; the old one is deleted on activate.
const CACHE = 'webgguf-shell-__BUILD_ID__';
const SHELL = ['./', './index.html', './manifest.webmanifest', './icon.svg', './icon-192.png', './icon-512.png'];

self.addEventListener('install', (event) => {
  event.waitUntil(
    (async () => {
      const cache = await caches.open(CACHE);
      let assets = [];
      try {
        const res = await fetch('./precache.json', { cache: 'no-store' });
        if (res.ok) assets = (await res.json()).map((f) => `./${f}`);
      } catch {
        // Development server: no precache list; runtime caching below fills the cache.
      }
      await cache.addAll([...SHELL, ...assets]);
      await self.skipWaiting();
    })(),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    (async () => {
      for (const key of await caches.keys()) if (key !== CACHE) await caches.delete(key);
      await self.clients.claim();
    })(),
  );
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

self.addEventListener('fetch', (event) => {
  const req = event.request;
  const url = new URL(req.url);
  if (req.method !== 'GET' || url.origin !== self.location.origin || isModelRequest(req, url)) return;
  event.respondWith(
    (async () => {
      const cache = await caches.open(CACHE);
      if (req.mode === 'navigate') {
        try {
          const res = await fetch(req);
          if (res.ok) await cache.put('./index.html', res.clone());
          return isolate(res);
        } catch {
          return isolate((await cache.match('./index.html')) ?? Response.error());
        }
      }
      const hit = await cache.match(req, { ignoreSearch: true });
      if (hit) return isolate(hit);
      const res = await fetch(req);
      if (res.ok && res.type === 'basic') await cache.put(req, res.clone());
      return isolate(res);
    })(),
  );
});
