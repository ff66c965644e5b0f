/**
 * Walks a valid GGUF header (independently of the parser under test) and lists the byte offsets of its count,
 * length, type and tensor-shape fields, so the fuzz test can inflate exactly the fields a hostile file would.
 */

/** One integer field of the header. */
export interface LengthField {
  /** Absolute byte offset. */
  readonly offset: number;
  readonly width: 4 | 8;
  readonly what: string;
}

/** Element size of fixed-size GGUF value types (gguf_type ids 0–7, 10–12). */
const FIXED: Record<number, number> = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };
const STRING = 8;
const ARRAY = 9;
/** String lengths recorded per array (the first few elements; vocabularies have hundreds of thousands). */
const SAMPLED_ELEMENTS = 8;

/** Lists the fields of the valid GGUF in `bytes` and the offset where its tensor infos end. */
export function locateFields(bytes: Uint8Array): { fields: LengthField[]; headerEnd: number } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const fields: LengthField[] = [];
  let pos = 8;
  const u32 = (what: string): number => {
    fields.push({ offset: pos, width: 4, what });
    const v = view.getUint32(pos, true);
    pos += 4;
    return v;
  };
  const u64 = (what: string, record = true): number => {
    if (record) fields.push({ offset: pos, width: 8, what });
    const v = Number(view.getBigUint64(pos, true));
    pos += 8;
    return v;
  };
  const str = (what: string, record = true): void => {
    const n = u64(`${what} length`, record); // (not `pos += u64(…)`: that would read pos before u64 advances it)
    pos += n;
  };
  const value = (type: number, what: string, record = true): void => {
    if (type === STRING) return str(what, record);
    if (type !== ARRAY) {
      pos += FIXED[type];
      return;
    }
    const elem = record ? u32(`${what} element type`) : view.getUint32(pos, true);
    if (!record) pos += 4;
    const n = u64(`${what} length`, record);
    if (elem in FIXED) {
      pos += n * FIXED[elem];
      return;
    }
    for (let i = 0; i < n; i++) value(elem, `${what}[${i}]`, record && i < SAMPLED_ELEMENTS);
  };

  const nTensors = u64('tensor count');
  const nKv = u64('kv count');
  for (let i = 0; i < nKv; i++) {
    str(`key #${i}`);
    const type = u32(`key #${i} type`);
    value(type, `value #${i}`);
  }
  for (let i = 0; i < nTensors; i++) {
    str(`tensor #${i} name`);
    const nDims = u32(`tensor #${i} n_dims`);
    for (let d = 0; d < nDims; d++) u64(`tensor #${i} dim ${d}`);
    u32(`tensor #${i} type`);
    u64(`tensor #${i} offset`);
  }
  return { fields, headerEnd: pos };
}
