/**
 * Worker entry: exposes one engine through Comlink. Bundlers pick it up from
 * `new Worker(new URL('./worker.ts', import.meta.url), { type: 'module' })` in `client.ts`; the script-tag build
 * ships it as a sibling asset. Nothing runs until the page calls `load`.
 */

import * as Comlink from 'comlink';
import { createEngine } from '../api/create-engine.js';
import './errors.js';
import { createWorkerApi } from './worker-api.js';

Comlink.expose(createWorkerApi(createEngine));
