/**
 * Loads `@mlc-ai/web-xgrammar` (XGrammar compiled to WASM, Apache-2.0: the grammar engine WebLLM uses) lazily, on
 * the first constrained request, so the core bundle never carries it. The published package is a UMD bundle inside
 * a `"type": "module"` package: a plain ESM `import` fails in Node and an IIFE build cannot split it into a chunk.
 * So its text is read (Node: from the installed package; browsers and workers: fetched from a separate asset file
 * emitted next to the bundle) and evaluated as CommonJS with our own `exports` — one path for Node, the worker, the
 * ES library and the script-tag build.
 *
 * XGrammar reports a bad grammar by printing a `[FATAL] …` line and aborting its WASM instance. The loader routes
 * that printing into a sink (so the message can name the error) and `reset()` drops the instance so the next use
 * evaluates a fresh one: no state leaks from a failed request into the next.
 */

import { LlmError } from '../errors.js';
import type * as Xg from '@mlc-ai/web-xgrammar';

/** The module's API (classes of `@mlc-ai/web-xgrammar`). */
export type XgrammarModule = typeof Xg;

let source: Promise<{ text: string; file: string }> | null = null;
let instance: Promise<XgrammarModule> | null = null;
/** Receives what XGrammar prints to stderr while a compile runs. */
let sink: ((line: string) => void) | null = null;

const isNode =
  typeof process !== 'undefined' && typeof process.versions === 'object' && typeof process.versions.node === 'string';

async function readSource(): Promise<{ text: string; file: string }> {
  if (isNode) {
    const nodeModule = 'node:module';
    const nodeFs = 'node:fs/promises';
    const { createRequire } = (await import(/* @vite-ignore */ nodeModule)) as typeof import('node:module');
    const fs = (await import(/* @vite-ignore */ nodeFs)) as typeof import('node:fs/promises');
    const file = createRequire(import.meta.url).resolve('@mlc-ai/web-xgrammar');
    return { text: await fs.readFile(file, 'utf8'), file };
  }
  // Emitted as its own file by the build (never inlined, never part of the core bundle).
  const url = new URL('../../node_modules/@mlc-ai/web-xgrammar/lib/index.js?no-inline', import.meta.url).href;
  const res = await fetch(url);
  if (!res.ok) throw new LlmError('network', `loading the grammar engine from ${url}: HTTP ${res.status}`);
  return { text: await res.text(), file: url };
}

async function evaluate(): Promise<XgrammarModule> {
  source ??= readSource().catch((e: unknown) => {
    source = null;
    throw e;
  });
  const { file } = await source;
  // The Emscripten glue's only dynamic import (Node's `module`, for createRequire) becomes a require: evaluated code
  // may not use import() where no module loader backs it (vm contexts, some workers).
  const text = (await source).text.replace("await import('module')", "require('module')");
  const mod = { exports: {} as Record<string, unknown> };
  let req: unknown;
  let dir = '';
  if (isNode) {
    const nodeModule = 'node:module';
    const { createRequire } = (await import(/* @vite-ignore */ nodeModule)) as typeof import('node:module');
    req = createRequire(file);
    dir = file.replace(/[\\/][^\\/]*$/, '');
  }
  // The Emscripten glue binds console.error when its instance starts (on the first call): route it through `sink`.
  const original = console.error;
  const routed = (...args: unknown[]): void => {
    if (sink) sink(args.map(String).join(' '));
    else original(...args);
  };
  console.error = routed;
  try {
    // eslint-disable-next-line @typescript-eslint/no-implied-eval
    new Function('exports', 'module', 'require', '__filename', '__dirname', text)(mod.exports, mod, req, file, dir);
    const xg = mod.exports as unknown as XgrammarModule;
    // Start the WASM instance now, while console.error is routed.
    const info = await xg.TokenizerInfo.createTokenizerInfo(['a'], 'RAW', false, 1, []);
    info.dispose();
    return xg;
  } finally {
    if (console.error === routed) console.error = original;
  }
}

/** The module, loaded on first use. */
export function loadXgrammar(): Promise<XgrammarModule> {
  instance ??= evaluate().catch((e: unknown) => {
    instance = null;
    throw e instanceof LlmError
      ? e
      : new LlmError('feature-missing', `loading the grammar engine (@mlc-ai/web-xgrammar) failed: ${String(e)}`, {
          cause: e,
        });
  });
  return instance;
}

/** Drops the instance (after XGrammar aborted): the next `loadXgrammar` evaluates a fresh one. */
export function resetXgrammar(): void {
  instance = null;
}

/** Runs `f`, collecting what XGrammar prints (its error messages). */
export async function withXgrammarMessages<T>(
  f: () => Promise<T>,
): Promise<{ value?: T; error?: unknown; messages: string[] }> {
  const messages: string[] = [];
  sink = (line) => messages.push(line);
  try {
    return { value: await f(), messages };
  } catch (error) {
    return { error, messages };
  } finally {
    sink = null;
  }
}
