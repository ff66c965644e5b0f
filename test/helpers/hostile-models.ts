/**
 * Hostile-but-parseable models, generated at test time from `../shared/models/stories260K.gguf` with one field changed
 * each (re-encoded with the project's GGUF writer), and the clean `LlmError` each must produce. Used in-thread by
 * test/unit/model/hostile-models.test.ts and through the worker by test/e2e/hostile-models.spec.ts.
 */

import { GgmlType, type GgufValue, type GgufValueTypeInfo, GgufValueType } from '../../src/gguf/types.js';
import { type GgufWriteInput, type GgufWriteTensor, writeGguf } from '../../src/gguf/write.js';
import { readEditableGguf } from './editable-gguf.js';

/** A mutable copy of the base model, as the writer takes it. */
interface EditableModel {
  metadata: Record<string, GgufValue>;
  metadataTypes: Record<string, GgufValueTypeInfo>;
  tensors: GgufWriteTensor[];
}

/** One hostile case: how to derive it from the base model and the error it must give. */
export interface HostileCase {
  readonly name: string;
  /** Expected `LlmError.code`. */
  readonly code: string;
  /** The message must match this (it names the real cause). */
  readonly message: RegExp;
  /** The message must not match this (a misleading cause), when given. */
  readonly notMessage?: RegExp;
  /** Edits the model in place; may return raw bytes instead (for changes the writer refuses to make). */
  // biome-ignore lint/suspicious/noConfusingVoidType: most edits are statement bodies that return nothing
  readonly edit: (m: EditableModel, write: (m: EditableModel) => Uint8Array) => Uint8Array | void;
}

const U32 = { type: GgufValueType.UINT32 } as const;
const U64 = { type: GgufValueType.UINT64 } as const;
const I32 = { type: GgufValueType.INT32 } as const;
const F32 = { type: GgufValueType.FLOAT32 } as const;

function set(m: EditableModel, key: string, value: GgufValue, type: GgufValueTypeInfo): void {
  m.metadata[key] = value;
  m.metadataTypes[key] = type;
}

function tensor(m: EditableModel, name: string): GgufWriteTensor {
  const t = m.tensors.find((x) => x.name === name);
  if (!t) throw new Error(`base model has no tensor ${name}`);
  return t;
}

function replaceTensor(m: EditableModel, name: string, next: Partial<GgufWriteTensor>): void {
  const i = m.tensors.findIndex((x) => x.name === name);
  m.tensors[i] = { ...m.tensors[i], ...next };
}

/** F32 data of `t` with element `i` replaced. */
function withF32(t: GgufWriteTensor, fill: (out: Float32Array) => void): Uint8Array {
  const out = new Float32Array(t.data.slice().buffer);
  fill(out);
  return new Uint8Array(out.buffer);
}

const BLOCKS = /'llama\.block_count'/;

/** Every case. Codes: gguf-invalid for broken files, unsupported-arch for valid files of another kind. */
export const HOSTILE_CASES: readonly HostileCase[] = [
  {
    name: 'block_count 1e8',
    code: 'gguf-invalid',
    message: BLOCKS,
    edit: (m) => set(m, 'llama.block_count', 1e8, U32),
  },
  {
    name: 'block_count 2^31',
    code: 'gguf-invalid',
    message: BLOCKS,
    edit: (m) => set(m, 'llama.block_count', 2 ** 31, U32),
  },
  {
    name: 'block_count 2^40 (u64)',
    code: 'gguf-invalid',
    message: BLOCKS,
    edit: (m) => set(m, 'llama.block_count', 2n ** 40n, U64),
  },
  { name: 'block_count 0', code: 'gguf-invalid', message: BLOCKS, edit: (m) => set(m, 'llama.block_count', 0, U32) },
  {
    name: 'block_count -1 (i32)',
    code: 'gguf-invalid',
    message: BLOCKS,
    edit: (m) => set(m, 'llama.block_count', -1, I32),
  },
  {
    name: 'block_count 2.5 (f32)',
    code: 'gguf-invalid',
    message: BLOCKS,
    edit: (m) => set(m, 'llama.block_count', 2.5, F32),
  },
  {
    name: 'vocabulary-only (no tensors)',
    code: 'gguf-invalid',
    message: /no model weights/,
    edit: (m) => void m.tensors.splice(0),
  },
  {
    name: 'block_count one beyond the tensors',
    code: 'gguf-invalid',
    message: /'llama\.block_count' is 6 .*5 layer/,
    edit: (m) => set(m, 'llama.block_count', 6, U32),
  },
  {
    name: 'n_embd / n_head not an integer, no key_length',
    code: 'gguf-invalid',
    message: /not a multiple of 'llama\.attention\.head_count' = 6/,
    notMessage: /key_length/,
    edit: (m) => {
      set(m, 'llama.attention.head_count', 6, U32);
      set(m, 'llama.attention.head_count_kv', 3, U32);
    },
  },
  {
    name: 'head_count_kv not dividing head_count',
    code: 'gguf-invalid',
    message: /'llama\.attention\.head_count_kv' = 3/,
    edit: (m) => set(m, 'llama.attention.head_count_kv', 3, U32),
  },
  {
    name: 'head_count 2^40',
    code: 'gguf-invalid',
    message: /'llama\.attention\.head_count' is 1099511627776/,
    edit: (m) => set(m, 'llama.attention.head_count', 2n ** 40n, U64),
  },
  {
    name: 'head count × key_length ≠ attn_q rows',
    code: 'gguf-invalid',
    message: /head_count.*query rows.*attn_q/,
    // rope.dimension_count follows the new head size, or the whole-head rope check (llama.cpp's "invalid n_rot") fires first.
    edit: (m) => {
      set(m, 'llama.attention.key_length', 16, U32);
      set(m, 'llama.rope.dimension_count', 16, U32);
    },
  },
  {
    name: 'embedding_length ≠ token_embd',
    code: 'gguf-invalid',
    message: /'llama\.embedding_length' is 128/,
    edit: (m) => {
      set(m, 'llama.embedding_length', 128, U32);
      set(m, 'llama.rope.dimension_count', 16, U32); // the head size 128 / 8 heads, as above
    },
  },
  {
    name: 'feed_forward_length ≠ ffn_down',
    code: 'gguf-invalid',
    message: /'llama\.feed_forward_length' is 100/,
    edit: (m) => set(m, 'llama.feed_forward_length', 100, U32),
  },
  {
    name: 'context_length 2^40',
    code: 'gguf-invalid',
    message: /'llama\.context_length' is 1099511627776/,
    edit: (m) => set(m, 'llama.context_length', 2n ** 40n, U64),
  },
  {
    name: 'expert_count 2^40',
    code: 'gguf-invalid',
    message: /'llama\.expert_count' is 1099511627776/,
    edit: (m) => set(m, 'llama.expert_count', 2n ** 40n, U64),
  },
  {
    name: 'rope.dimension_count beyond the head',
    code: 'gguf-invalid',
    message: /rope\.dimension_count/,
    edit: (m) => set(m, 'llama.rope.dimension_count', 1000, U32),
  },
  {
    name: 'NaN rms epsilon',
    code: 'gguf-invalid',
    message: /layer_norm_rms_epsilon' is NaN/,
    edit: (m) => set(m, 'llama.attention.layer_norm_rms_epsilon', NaN, F32),
  },
  {
    name: 'rope.freq_base 0',
    code: 'gguf-invalid',
    message: /'llama\.rope\.freq_base' is 0/,
    edit: (m) => set(m, 'llama.rope.freq_base', 0, F32),
  },
  {
    name: 'NaN weight',
    code: 'gguf-invalid',
    message: /blk\.0\.attn_q\.weight' holds a non-finite value/,
    notMessage: /try another backend/,
    edit: (m) =>
      replaceTensor(m, 'blk.0.attn_q.weight', { data: withF32(tensor(m, 'blk.0.attn_q.weight'), (w) => (w[5] = NaN)) }),
  },
  {
    name: 'Inf weight',
    code: 'gguf-invalid',
    message: /output_norm\.weight' holds a non-finite value/,
    edit: (m) =>
      replaceTensor(m, 'output_norm.weight', {
        data: withF32(tensor(m, 'output_norm.weight'), (w) => (w[0] = -Infinity)),
      }),
  },
  {
    name: 'finite weights that overflow to non-finite logits',
    code: 'gguf-invalid',
    message: /produces non-finite output/,
    notMessage: /try another backend/,
    edit: (m) => replaceTensor(m, 'output.weight', { data: withF32(tensor(m, 'output.weight'), (w) => w.fill(3e38)) }),
  },
  {
    name: 'all-zero output weights',
    code: 'gguf-invalid',
    message: /all-zero logits/,
    notMessage: /try another backend/,
    edit: (m) => replaceTensor(m, 'output.weight', { data: new Uint8Array(tensor(m, 'output.weight').data.length) }),
  },
  {
    name: 'per-layer head_count array of the wrong length',
    code: 'gguf-invalid',
    message: /'llama\.attention\.head_count' has 3 entries, expected one per layer \(5\)/,
    edit: (m) => set(m, 'llama.attention.head_count', [8, 8, 8], { type: GgufValueType.ARRAY, element: U32 }),
  },
  {
    name: 'missing output_norm',
    code: 'gguf-invalid',
    message: /output_norm\.weight' is missing/,
    edit: (m) =>
      void m.tensors.splice(
        m.tensors.findIndex((t) => t.name === 'output_norm.weight'),
        1,
      ),
  },
  {
    name: 'non-string general.architecture',
    code: 'gguf-invalid',
    message: /general\.architecture/,
    notMessage: /vocabulary/,
    edit: (m) => set(m, 'general.architecture', 7, U32),
  },
  {
    name: 'unknown architecture',
    code: 'unsupported-arch',
    message: /'mamba9'/,
    edit: (m) => set(m, 'general.architecture', 'mamba9', { type: GgufValueType.STRING }),
  },
  {
    name: 'missing general.architecture',
    code: 'gguf-invalid',
    message: /general\.architecture/,
    edit: (m) => {
      delete m.metadata['general.architecture'];
      delete m.metadataTypes['general.architecture'];
    },
  },
  {
    name: 'non-string chat_template',
    code: 'gguf-invalid',
    message: /tokenizer\.chat_template/,
    edit: (m) => set(m, 'tokenizer.chat_template', 42, U32),
  },
  {
    name: 'vocabulary size ≠ token_embd rows',
    code: 'gguf-invalid',
    message: /511 tokens but token_embd\.weight has 512 rows/,
    edit: (m) => {
      for (const key of ['tokenizer.ggml.tokens', 'tokenizer.ggml.scores', 'tokenizer.ggml.token_type']) {
        const v = m.metadata[key] as ArrayLike<GgufValue>;
        m.metadata[key] = Array.from(v).slice(0, 511);
      }
    },
  },
  {
    name: 'missing layer tensor',
    code: 'gguf-invalid',
    message: /blk\.2\.ffn_up\.weight' is missing/,
    edit: (m) =>
      void m.tensors.splice(
        m.tensors.findIndex((t) => t.name === 'blk.2.ffn_up.weight'),
        1,
      ),
  },
  {
    name: 'missing token_embd',
    code: 'gguf-invalid',
    message: /token_embd\.weight' is missing/,
    edit: (m) =>
      void m.tensors.splice(
        m.tensors.findIndex((t) => t.name === 'token_embd.weight'),
        1,
      ),
  },
  {
    name: 'wrong tensor shape',
    code: 'gguf-invalid',
    message: /blk\.1\.attn_k\.weight' has shape \[64, 16\]/,
    edit: (m) => replaceTensor(m, 'blk.1.attn_k.weight', { shape: [64, 16], data: new Uint8Array(64 * 16 * 4) }),
  },
  {
    name: 'wrong tensor type (I32 norm)',
    code: 'unsupported-type',
    message: /blk\.0\.attn_norm\.weight/,
    edit: (m) => replaceTensor(m, 'blk.0.attn_norm.weight', { type: GgmlType.I32 }),
  },
  {
    name: 'tensor data beyond the end of the file',
    code: 'gguf-invalid',
    message: /outside the file/,
    edit: (m, write) => write(m).subarray(0, 1_100_000),
  },
];

/** The base model, parsed once (tensor data as views into the file bytes). */
let base: { model: EditableModel; version: 2 | 3 } | null = null;

async function baseModel(): Promise<{ model: EditableModel; version: 2 | 3 }> {
  if (base) return base;
  const { version, ...model } = await readEditableGguf('stories260K.gguf');
  base = { model, version };
  return base;
}

/** The bytes of `c`: the base model with its one change. */
export async function hostileModelBytes(c: HostileCase): Promise<Uint8Array> {
  const { model, version } = await baseModel();
  const copy: EditableModel = {
    metadata: { ...model.metadata },
    metadataTypes: { ...model.metadataTypes },
    tensors: [...model.tensors],
  };
  const write = (m: EditableModel): Uint8Array => writeGguf({ version, ...m } satisfies GgufWriteInput);
  return c.edit(copy, write) ?? write(copy);
}
