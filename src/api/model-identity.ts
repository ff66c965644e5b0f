/** The identity of a loaded model for the prompt cache and the shared engine: content hash, else validator, else name. */
import type { ByteSource } from '../io/byte-source.js';

/** What the prompt cache keys the model on: sha256, else etag + size, else name + size. */
export function modelIdentityOf(source: ByteSource): string {
  const s = source as ByteSource & { sha256?: string | null; etag?: string | null };
  if (typeof s.sha256 === 'string' && s.sha256) return `sha256:${s.sha256}`;
  if (typeof s.etag === 'string' && s.etag) return `etag:${s.etag}:${source.size}`;
  return `name:${source.name}:${source.size}`;
}
