/**
 * The persisted prompt cache: KV of chosen prompt prefixes (the system prompt of chat requests by default, every
 * cached prefix on `engine.saveCache()`) written to a `PromptCacheStore` (IndexedDB in browsers; a folder or memory
 * in Node) and restored into free slots when an engine for the same model is created, so the next visit skips the
 * prefill of that prefix. An entry is keyed by model identity + prompt-cache key (chat template hash, tokenizer
 * flags) + KV element type and geometry + token ids (whose image placeholders spell each image's content hash; an
 * M-RoPE model's image spans with them); its rows carry a sha256 checked before use. An entry of another
 * model, template or KV type, or whose rows fail the check, is never served (a damaged one is deleted). Entries are
 * evicted least recently used first to stay under `maxBytes` and the storage quota.
 */

import type { KvRows } from '../backend/ops.js';
import { estimateStorage } from '../io/model-store.js';
import {
  type PromptCacheRecord,
  type PromptCacheStore,
  type PromptCacheStoreOptions,
  resolvePromptCacheStore,
} from '../io/prompt-cache-store.js';
import { sha256Hex, sha256HexAsync } from '../io/sha256.js';
import type { Transformer } from '../model/model.js';
import type { RopeImageSpan } from '../model/rope-streams.js';
import { describeLayers, kvLayersOf } from '../model/layer-spec.js';
import type { PromptCache } from './prompt-cache.js';

/** Options of the persisted prompt cache (`EngineOptions.persistedCache`). */
export interface PersistedPromptCacheOptions extends PromptCacheStoreOptions {
  /** Persist the prefix of each new system prompt of chat requests automatically (default true). */
  readonly auto?: boolean;
  /** Most bytes kept across all entries; older entries are evicted first (default 512 MiB). */
  readonly maxBytes?: number;
  /** Prefixes shorter than this many tokens are not persisted (default 8). */
  readonly minTokens?: number;
}

const DEFAULT_MAX_BYTES = 512 * 1024 * 1024;

/** Save and restore of one engine's prompt prefixes. */
export class PersistedPromptCache {
  readonly store: PromptCacheStore;
  readonly auto: boolean;
  private readonly maxBytes: number;
  private readonly minTokens: number;
  /** Ids saved or restored by this engine (no second write of the same entry). */
  private readonly known = new Set<string>();

  constructor(
    private readonly transformer: Transformer,
    private readonly cache: PromptCache,
    private readonly model: string,
    options: PersistedPromptCacheOptions = {},
  ) {
    this.store = resolvePromptCacheStore(options);
    this.auto = options.auto ?? true;
    this.maxBytes = Math.max(0, options.maxBytes ?? DEFAULT_MAX_BYTES);
    this.minTokens = Math.max(1, options.minTokens ?? 8);
  }

  /** `layers×kvCols` of this model's KV cache (`kvCols` listed per layer when the layers differ). */
  private geometry(): string {
    const cols = kvLayersOf(describeLayers(this.transformer.config)).map((l) => l.nKvHeads * l.headDim);
    return `${cols.length}x${cols.every((c) => c === cols[0]) ? cols[0] : cols.join(',')}`;
  }

  /**
   * Persists the KV of `tokens` under `key` when a slot holds exactly that prefix (or longer) and the backend can
   * read its KV. Resolves the record written (or found), or null when nothing was persisted.
   */
  async save(key: string, tokens: readonly number[]): Promise<PromptCacheRecord | null> {
    const ops = this.transformer.ops;
    // A recurrent model's KV alone cannot resume it (its state is not persisted): such an entry would never be used.
    if (ops.readKv === undefined || tokens.length < this.minTokens || this.transformer.hasRecurrentState) return null;
    const match = this.cache.lookup(key, tokens, tokens.length);
    if (match === null || match.matched !== tokens.length) return null;
    const streams = this.transformer.ropeStreams;
    const images = this.placesImagesByGrid(tokens);
    if (images && !streams) return null; // an M-RoPE model that does not say where its images sit
    const ropeImages = images ? streams!.spans(match.slot, tokens.length) : undefined;
    const rows = await ops.readKv(match.slot, tokens.length);
    const kv = `${rows.elementType}:${this.geometry()}`;
    const id = this.recordId(key, kv, tokens, ropeImages);
    const now = Date.now();
    const existing = (await this.store.list()).find((r) => r.id === id);
    if (existing !== undefined) {
      await this.store.touch({ ...existing, lastUsedAt: now });
      this.known.add(id);
      return existing;
    }
    if (!(await this.makeRoom(rows.data.byteLength))) return null;
    const record: PromptCacheRecord = {
      id,
      model: this.model,
      key,
      kv,
      tokens: [...tokens],
      ...(ropeImages && { ropeImages }),
      bytes: rows.data.byteLength,
      sha256: await sha256HexAsync(rows.data),
      createdAt: now,
      lastUsedAt: now,
    };
    await this.store.put(record, rows.data);
    this.known.add(id);
    return record;
  }

  /** Saves `tokens` once per engine (the automatic system-prompt path); failures are ignored. */
  async saveOnce(key: string, tokens: readonly number[]): Promise<void> {
    const id = sha256Hex(JSON.stringify([this.model, key, tokens]));
    if (this.known.has(`auto:${id}`)) return;
    this.known.add(`auto:${id}`);
    await this.save(key, tokens).catch(() => null);
  }

  /** Persists every unused slot's cached prefix; resolves the number of entries written or refreshed. */
  async saveAll(): Promise<number> {
    let n = 0;
    for (const s of this.cache.kv.all()) {
      if (s.refs > 0 || s.tokens.length === 0) continue;
      if ((await this.save(s.key, s.tokens)) !== null) n++;
    }
    return n;
  }

  /**
   * Restores this model's entries under `keys` (most recently used first, one per free slot) into the KV cache and
   * the prompt cache. Entries of other models, keys or KV geometry are skipped; one whose rows fail their sha256 or
   * size is deleted. Resolves the number restored.
   */
  async restore(keys: readonly string[]): Promise<number> {
    const ops = this.transformer.ops;
    if (ops.writeKv === undefined) return 0;
    const geometry = this.geometry();
    const wanted = (await this.store.list())
      .filter(
        (r) =>
          r.model === this.model &&
          keys.includes(r.key) &&
          r.kv.endsWith(`:${geometry}`) &&
          Array.isArray(r.tokens) &&
          r.tokens.length > 0 &&
          r.tokens.length < this.cache.kv.contextLength &&
          this.imagesFit(r),
      )
      .sort((a, b) => b.lastUsedAt - a.lastUsedAt);
    let restored = 0;
    for (const r of wanted) {
      const slot = this.cache.kv.all().find((s) => s.refs === 0 && s.tokens.length === 0);
      if (slot === undefined) break;
      if (r.id !== this.recordId(r.key, r.kv, r.tokens, r.ropeImages)) continue; // a record not written for these fields
      const data = await this.store.readRows(r.id);
      if (data === undefined || data.byteLength !== r.bytes || (await sha256HexAsync(data)) !== r.sha256) {
        await this.store.delete(r.id).catch(() => false); // damaged: never served
        continue;
      }
      const elementType = r.kv.split(':')[0];
      if (elementType !== 'f32' && elementType !== 'f16') continue;
      const rows: KvRows = { elementType, nPositions: r.tokens.length, data };
      try {
        await ops.writeKv(slot.index, rows);
      } catch {
        continue; // another KV type on this backend: not usable here
      }
      this.transformer.ropeStreams?.place(slot.index, r.ropeImages ?? []); // where the text after its images sits
      this.cache.adopt(slot.index, r.key, r.tokens);
      this.known.add(r.id);
      await this.store.touch({ ...r, lastUsedAt: Date.now() }).catch(() => undefined);
      restored++;
    }
    return restored;
  }

  /** An entry's id: sha256 of its identity (the images of an M-RoPE prefix included, so they are checked too). */
  private recordId(key: string, kv: string, tokens: readonly number[], ropeImages?: readonly RopeImageSpan[]): string {
    return sha256Hex(
      JSON.stringify(ropeImages ? [this.model, key, kv, tokens, ropeImages] : [this.model, key, kv, tokens]),
    );
  }

  /**
   * An M-RoPE model's prefix holding an image (negative placeholder ids, spelled from the image's content hash): its
   * KV alone does not say where the text after the image sits (the model keeps that per slot), so the images'
   * spans are persisted with it (`ropeImages`) and placed again on restore.
   */
  private placesImagesByGrid(tokens: readonly number[]): boolean {
    return this.transformer.config.ropeMulti !== undefined && tokens.some((t) => t < 0);
  }

  /** True when a record's images suit this model: none without M-RoPE images, else spans that fit its tokens. */
  private imagesFit(r: PromptCacheRecord): boolean {
    if (!this.placesImagesByGrid(r.tokens)) return r.ropeImages === undefined;
    return this.transformer.ropeStreams?.fits(r.ropeImages, r.tokens) === true;
  }

  /** Evicts least recently used entries until `bytes` more fit `maxBytes` and the storage quota; false if they never can. */
  private async makeRoom(bytes: number): Promise<boolean> {
    if (bytes > this.maxBytes) return false;
    const records = (await this.store.list()).sort((a, b) => a.lastUsedAt - b.lastUsedAt);
    let total = records.reduce((n, r) => n + r.bytes, 0);
    const estimate = await estimateStorage();
    let available = estimate?.quota != null ? estimate.quota - (estimate.usage ?? 0) : Infinity;
    for (const r of records) {
      if (total + bytes <= this.maxBytes && bytes <= available) break;
      if (await this.store.delete(r.id).catch(() => false)) {
        total -= r.bytes;
        available += r.bytes;
      }
    }
    return total + bytes <= this.maxBytes && bytes <= available;
  }
}
