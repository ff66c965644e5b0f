/**
 * The page's side of the service worker: registration, the one reload that makes the page cross-origin isolated on
 * hosts that cannot send COOP/COEP, and the "new version available" banner (the new worker waits until the person
 * reloads; it never takes over a page running the old version).
 */

/**
 * Registers the service worker. On a host that cannot send COOP/COEP the page is not cross-origin isolated (no WASM
 * threads); the service worker adds those headers, so once it controls the page, reload once. Resolves true when a
 * reload is under way.
 */
export async function startServiceWorker(): Promise<boolean> {
  if (!('serviceWorker' in navigator) || location.protocol === 'file:' || import.meta.env.DEV) return false;
  let registration: ServiceWorkerRegistration | undefined;
  try {
    registration = await navigator.serviceWorker.register('./sw.js');
  } catch (e) {
    console.warn('webgguf demo: service worker not registered', e);
    return false;
  }
  if (!registration) return false; // blocked (automation, some privacy modes)
  answerVersionQueries();
  watchForUpdates(registration);
  void navigator.serviceWorker.ready.then((r) => r.active?.postMessage({ type: 'prune' }));
  const key = 'webgguf-demo-isolation-reload';
  if (crossOriginIsolated || navigator.serviceWorker.controller || sessionStorage.getItem(key)) return false;
  await navigator.serviceWorker.ready;
  if (!navigator.serviceWorker.controller) {
    await new Promise<void>((resolve) => {
      navigator.serviceWorker.addEventListener('controllerchange', () => resolve(), { once: true });
      setTimeout(resolve, 3000);
    });
  }
  if (!navigator.serviceWorker.controller) return false;
  sessionStorage.setItem(key, '1');
  location.reload();
  return true;
}

/**
 * The service worker asks open tabs which main script they run before it deletes an older version's cache: this
 * page's script (content-hashed) names the version it needs.
 */
function answerVersionQueries(): void {
  navigator.serviceWorker.addEventListener('message', (ev: MessageEvent<{ type?: string } | null>) => {
    if (ev.data?.type === 'webgguf-which-script') ev.ports[0]?.postMessage(import.meta.url);
  });
  navigator.serviceWorker.startMessages();
}

/** Shows the update banner when a new version is installed and waiting. */
function watchForUpdates(registration: ServiceWorkerRegistration): void {
  const banner = document.getElementById('update-banner');
  if (!banner) return;
  const show = (): void => {
    if (!navigator.serviceWorker.controller) return; // first install: nothing to update
    banner.hidden = false;
  };
  if (registration.waiting) show();
  registration.addEventListener('updatefound', () => {
    const worker = registration.installing;
    worker?.addEventListener('statechange', () => {
      if (worker.state === 'installed') show();
    });
  });
  document.getElementById('update-reload')?.addEventListener('click', () => {
    const next = registration.waiting ?? registration.installing;
    if (!next) {
      location.reload();
      return;
    }
    let reloading = false;
    const reload = (): void => {
      if (!reloading) location.reload();
      reloading = true;
    };
    navigator.serviceWorker.addEventListener('controllerchange', reload, { once: true });
    const activate = (): void => next.postMessage({ type: 'skip-waiting' });
    if (next.state === 'installed') activate();
    else next.addEventListener('statechange', () => next.state === 'installed' && activate());
    // Should the new version never take over (it failed to install), reload into whatever is current.
    setTimeout(reload, 10_000);
  });
  // Look for a new version now and then while the page stays open.
  setInterval(() => void registration.update().catch(() => undefined), 60 * 60 * 1000);
}
