/**
 * Worker entry, for both kinds of worker: run as a dedicated `Worker` it exposes one engine through Comlink; run as
 * a `SharedWorker` (`createSharedWorkerEngine`) it serves every connecting port from one `SharedEngineHub`, so tabs
 * share loaded models (the hub's code loads only there). One script for both keeps a single worker chunk in the bundles. Bundlers pick it up from
 * `new Worker(new URL('./worker.ts', import.meta.url), { type: 'module' })` in `client.ts`; the script-tag build
 * ships it as a sibling asset. Nothing runs until a page calls `load`.
 */

import * as Comlink from 'comlink';
import { createEngine } from '../api/create-engine.js';
import './errors.js';
import { createWorkerApi } from './worker-api.js';

/** The global scope of a shared worker: it has `onconnect` (a dedicated worker has not). */
const scope = globalThis as typeof globalThis & { onconnect?: unknown };

if ('onconnect' in scope) {
  // The hub is a chunk of its own (only shared workers load it); a port that connects before it arrives waits for it
  // (its messages queue on the port until the hub starts it).
  const hub = import('./shared-hub.js').then(({ SharedEngineHub }) => new SharedEngineHub(createEngine));
  scope.addEventListener('connect', (event) => {
    const port = (event as MessageEvent).ports[0];
    if (port) void hub.then((h) => h.connect(port));
  });
} else {
  Comlink.expose(createWorkerApi(createEngine));
}
