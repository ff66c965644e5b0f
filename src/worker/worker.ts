/**
 * Worker entry, for both kinds of worker: run as a dedicated `Worker` it exposes one engine through Comlink; run as
 * a `SharedWorker` (`createSharedWorkerEngine`) it serves every connecting port from one `SharedEngineHub`, so tabs
 * share loaded models. One script for both keeps a single worker chunk in the bundles. Bundlers pick it up from
 * `new Worker(new URL('./worker.ts', import.meta.url), { type: 'module' })` in `client.ts`; the script-tag build
 * ships it as a sibling asset. Nothing runs until a page calls `load`.
 */

import * as Comlink from 'comlink';
import { createEngine } from '../api/create-engine.js';
import './errors.js';
import { SharedEngineHub } from './shared-hub.js';
import { createWorkerApi } from './worker-api.js';

/** The global scope of a shared worker: it has `onconnect` (a dedicated worker has not). */
const scope = globalThis as typeof globalThis & { onconnect?: unknown };

if ('onconnect' in scope) {
  const hub = new SharedEngineHub(createEngine);
  scope.addEventListener('connect', (event) => {
    const port = (event as MessageEvent).ports[0];
    if (port) hub.connect(port);
  });
} else {
  Comlink.expose(createWorkerApi(createEngine));
}
