/**
 * Where persisted prompt-cache entries live: KV rows of a token prefix plus a small record describing them. Three
 * stores: IndexedDB (browsers; its own database `webgguf-prompt-cache`, record and rows written in one transaction),
 * a folder (Node; rows written before the record, so a crash never leaves a record without its rows) and memory.
 * Listing and deletion sit beside the model store's: `listPromptCaches`, `deletePromptCache`.
 */

import { createStore, promisifyRequest, type UseStore } from 'idb-keyval';
import { LlmError } from '../errors.js';

/** What the store records about one persisted prefix (plain data). */
export interface PromptCacheRecord {
  /** sha256 (hex) of the identity below: model, template, tokenizer, KV type and geometry, the tokens (and images). */
  readonly id: string;
  /** Model identity (sha256, etag + size, or name + size). */
  readonly model: string;
  /** Prompt-cache key (model identity, chat template hash, tokenizer flags), as the engine's prompt cache spells it. */
  readonly key: string;
  /** KV element type and cache geometry: `f32:layers×kvCols`. */
  readonly kv: string;
  /** Token ids whose KV is stored. */
  readonly tokens: readonly number[];
  /**
   * A multi-stream rope model's images in those positions, [start, n, nPos] each (its KV alone does not say where
   * the text after them sits: `model/rope-streams.ts`); part of the id. Absent for other prefixes.
   */
  readonly ropeImages?: readonly (readonly [number, number, number])[];
  /** Bytes of the KV rows. */
  readonly bytes: number;
  /** sha256 (hex) of the KV rows: checked on every restore. */
  readonly sha256: string;
  readonly createdAt: number;
  readonly lastUsedAt: number;
}

/** A persisted entry store. Implementations must be safe against partial writes (see each one). */
export interface PromptCacheStore {
  list(): Promise<PromptCacheRecord[]>;
  /** The KV rows of `id`, or undefined. */
  readRows(id: string): Promise<Uint8Array | undefined>;
  put(record: PromptCacheRecord, rows: Uint8Array): Promise<void>;
  /** Updates the record only (e.g. `lastUsedAt`). */
  touch(record: PromptCacheRecord): Promise<void>;
  delete(id: string): Promise<boolean>;
}

/** An in-memory store (Node default; lost with the process). */
export function memoryPromptCacheStore(): PromptCacheStore {
  const entries = new Map<string, { record: PromptCacheRecord; rows: Uint8Array }>();
  return {
    async list() {
      return [...entries.values()].map((e) => e.record);
    },
    async readRows(id) {
      return entries.get(id)?.rows.slice();
    },
    async put(record, rows) {
      entries.set(record.id, { record, rows: rows.slice() });
    },
    async touch(record) {
      const e = entries.get(record.id);
      if (e !== undefined) e.record = record;
    },
    async delete(id) {
      return entries.delete(id);
    },
  };
}

let defaultIdb: UseStore | undefined;

/** The IndexedDB store (default database `webgguf-prompt-cache`, object store `entries`). */
export function idbPromptCacheStore(store?: UseStore): PromptCacheStore {
  const use = (): UseStore => {
    if (store !== undefined) return store;
    if (typeof indexedDB === 'undefined')
      throw new LlmError(
        'invalid-request',
        'the persisted prompt cache needs IndexedDB here; pass a path (Node) or a store',
      );
    defaultIdb ??= createStore('webgguf-prompt-cache', 'entries');
    return defaultIdb;
  };
  return {
    async list() {
      return use()('readonly', (s) =>
        promisifyRequest(s.getAll(IDBKeyRange.bound(['record'], ['record', []])) as IDBRequest<PromptCacheRecord[]>),
      );
    },
    async readRows(id) {
      const v = await use()('readonly', (s) => promisifyRequest(s.get(['rows', id]) as IDBRequest<unknown>));
      return v instanceof ArrayBuffer ? new Uint8Array(v) : undefined;
    },
    async put(record, rows) {
      const buffer = rows.slice().buffer;
      await use()('readwrite', (s) => {
        s.put(buffer, ['rows', record.id]);
        s.put(record, ['record', record.id]);
        return promisifyRequest(s.transaction);
      });
    },
    async touch(record) {
      await use()('readwrite', (s) => {
        s.put(record, ['record', record.id]);
        return promisifyRequest(s.transaction);
      });
    },
    async delete(id) {
      return use()('readwrite', (s) => {
        const had = s.getKey(['record', id]);
        s.delete(['record', id]);
        s.delete(['rows', id]);
        return promisifyRequest(s.transaction).then(() => had.result !== undefined);
      });
    },
  };
}

/** A folder store for Node: `<id>.kv` (rows) then `<id>.json` (record, written last, via a rename). */
export function filePromptCacheStore(dir: string): PromptCacheStore {
  const fs = async (): Promise<typeof import('node:fs/promises')> => import('node:fs/promises');
  const path = (id: string, ext: string): string => `${dir}/${id}.${ext}`;
  const safe = (id: string): string => {
    if (!/^[0-9a-f]{64}$/.test(id))
      throw new LlmError('invalid-request', `prompt cache: malformed entry id ${JSON.stringify(id)}`);
    return id;
  };
  return {
    async list() {
      const f = await fs();
      let names: string[];
      try {
        names = await f.readdir(dir);
      } catch {
        return [];
      }
      const out: PromptCacheRecord[] = [];
      for (const n of names.filter((x) => /^[0-9a-f]{64}\.json$/.test(x))) {
        try {
          out.push(JSON.parse(await f.readFile(`${dir}/${n}`, 'utf8')) as PromptCacheRecord);
        } catch {
          // An unreadable record is skipped (and never served).
        }
      }
      return out;
    },
    async readRows(id) {
      try {
        return new Uint8Array(await (await fs()).readFile(path(safe(id), 'kv')));
      } catch {
        return undefined;
      }
    },
    async put(record, rows) {
      const f = await fs();
      await f.mkdir(dir, { recursive: true });
      await f.writeFile(path(safe(record.id), 'kv'), rows);
      await this.touch(record);
    },
    async touch(record) {
      const f = await fs();
      const tmp = path(safe(record.id), `json.${process.pid}.tmp`);
      await f.writeFile(tmp, JSON.stringify(record));
      await f.rename(tmp, path(record.id, 'json'));
    },
    async delete(id) {
      const f = await fs();
      const had = await f.rm(path(safe(id), 'json')).then(
        () => true,
        () => false,
      );
      await f.rm(path(id, 'kv'), { force: true });
      return had;
    },
  };
}

/** Options naming a prompt-cache store: an explicit store, a Node folder, or the default for this environment. */
export interface PromptCacheStoreOptions {
  /**
   * A store (e.g. `memoryPromptCacheStore()`, `idbPromptCacheStore(createStore(…))`). In-thread engines only: a
   * store holds functions, which cannot cross to a worker (worker engines use the default store or `path`).
   */
  readonly store?: PromptCacheStore;
  /** Node: a folder to keep entries in. */
  readonly path?: string;
}

let defaultMemory: PromptCacheStore | undefined;

/** The store `options` name: `store`, else a folder for `path`, else IndexedDB where present, else process memory. */
export function resolvePromptCacheStore(options: PromptCacheStoreOptions = {}): PromptCacheStore {
  if (options.store !== undefined) return options.store;
  if (options.path !== undefined) return filePromptCacheStore(options.path);
  if (typeof indexedDB !== 'undefined') return idbPromptCacheStore();
  defaultMemory ??= memoryPromptCacheStore();
  return defaultMemory;
}

/** Every persisted prompt-cache entry (records only), least recently used first. */
export async function listPromptCaches(options?: PromptCacheStoreOptions): Promise<PromptCacheRecord[]> {
  return (await resolvePromptCacheStore(options).list()).sort((a, b) => a.lastUsedAt - b.lastUsedAt);
}

/** Deletes the persisted prompt-cache entry `id`; resolves true when it existed. */
export async function deletePromptCache(id: string, options?: PromptCacheStoreOptions): Promise<boolean> {
  return resolvePromptCacheStore(options).delete(id);
}
