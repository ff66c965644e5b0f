/**
 * A stored chunk's raw IndexedDB value as bytes, for tests that damage a chunk in place: chunks are stored as Blobs
 * where there is one (older versions, and stores that refuse Blobs, hold ArrayBuffers or views).
 */
export async function storedChunkBytes(value: unknown): Promise<Uint8Array> {
  if (value instanceof Blob) return new Uint8Array(await value.arrayBuffer());
  if (value instanceof ArrayBuffer) return new Uint8Array(value.slice(0));
  if (ArrayBuffer.isView(value))
    return new Uint8Array(value.buffer.slice(value.byteOffset, value.byteOffset + value.byteLength));
  throw new Error(`not a stored chunk: ${String(value)}`);
}
