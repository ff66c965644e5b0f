/**
 * `webgguf eval`: runs tokens through a model on a chosen backend and prints every position's logits (top entries
 * as text, or the full rows as JSON `{tokens, logits}`). Also exports the model-opening helpers that `conform` and
 * `generate` share: argument parsing, backend selection, tokenizer lookup and loading from a local path.
 */

import { parseArgs, type ParseArgsConfig } from 'node:util';
import { createBackend } from '../../backend/select-backend.js';
import type { Ops } from '../../backend/ops.js';
import { LlmError } from '../../errors.js';
import { parseGguf } from '../../gguf/parse.js';
import type { GgufFile } from '../../gguf/types.js';
import { NodeFileSource } from '../../io/node-file-source.js';
import { argmaxOf } from '../../model/conformance.js';
import { loadTransformer, readModelConfig } from '../../model/load.js';
import type { TransformerModel } from '../../model/transformer.js';
import { createTokenizer } from '../../tokenizer/index.js';
import type { Tokenizer } from '../../tokenizer/tokenizer.js';
import type { CliCommand, CliIo } from '../cli-io.js';

/** Backends a command can run on. */
export const BACKENDS = ['cpu', 'wasm', 'webgpu'] as const;
export type BackendName = (typeof BACKENDS)[number];

/** Parses `args` with node:util `parseArgs`; unknown options and bad values become `LlmError('invalid-request')`. */
export function parseCliArgs<T extends NonNullable<ParseArgsConfig['options']>>(command: string, args: string[], options: T) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (e) {
    throw new LlmError('invalid-request', `${command}: ${(e as Error).message}. Run 'webgguf --help' for usage`, { cause: e });
  }
}

/** Parses a --threads value (WASM worker threads), or undefined for the backend's default. */
export function threadCount(command: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!(Number.isInteger(n) && n > 0)) throw new LlmError('invalid-request', `${command}: --threads must be a positive integer, got '${value}'`);
  return n;
}

/** Checks a --backend value. */
export function backendName(command: string, value: string | undefined): BackendName {
  const v = value ?? 'cpu';
  if (!(BACKENDS as readonly string[]).includes(v)) {
    throw new LlmError('invalid-request', `${command}: --backend must be one of ${BACKENDS.join(', ')}, got '${v}'`);
  }
  return v as BackendName;
}

/** The WebGPU entry point in Node: npm `webgpu` (Dawn), on Mesa lavapipe when its ICD is installed. */
async function nodeGpu(): Promise<GPU> {
  const { existsSync } = await import('node:fs');
  const lavapipe = '/usr/share/vulkan/icd.d/lvp_icd.json';
  if (!process.env.VK_ICD_FILENAMES && existsSync(lavapipe)) process.env.VK_ICD_FILENAMES = lavapipe;
  try {
    const dawn = (await import('webgpu')) as unknown as { create(flags: string[]): GPU; globals: object };
    Object.assign(globalThis, dawn.globals);
    return dawn.create([]);
  } catch (e) {
    throw new LlmError('webgpu-unavailable', `starting the webgpu backend: the npm package 'webgpu' (Dawn for Node) failed to load; use --backend wasm`, {
      cause: e,
    });
  }
}

/** Starts backend `name` (the reference 'cpu', 'wasm' with `threads`, or 'webgpu' through Dawn in Node). */
export async function startBackend(name: BackendName, options: { threads?: number; signal?: AbortSignal } = {}): Promise<Ops> {
  const gpu = name === 'webgpu' && !(globalThis as { navigator?: { gpu?: GPU } }).navigator?.gpu ? await nodeGpu() : undefined;
  return createBackend(name, { ...options, ...(gpu ? { gpu } : {}) });
}

/** The tokenizer of a model file, or null when the file carries no vocabulary (then only --tokens works). */
export function createTokenizerFor(gguf: GgufFile): Tokenizer | null {
  return 'tokenizer.ggml.model' in gguf.metadata ? createTokenizer(gguf.metadata) : null;
}

/** A parsed model file whose tensors are read on demand. */
export interface ModelFile {
  readonly path: string;
  readonly source: NodeFileSource;
  readonly gguf: GgufFile;
}

/** Opens and parses `path` (header only). Close `source` when done. */
export async function openModelFile(path: string, signal: AbortSignal): Promise<ModelFile> {
  const source = await NodeFileSource.open(path, signal);
  try {
    return { path, source, gguf: await parseGguf(source, { signal }) };
  } catch (e) {
    await source.close?.();
    throw e;
  }
}

/**
 * Loads `file` on `backend` with room for `positions` KV positions (checked against the training context). The file
 * is read tensor by tensor, never whole. `model.destroy()` releases the backend.
 */
export async function loadModel(
  file: ModelFile,
  backend: BackendName,
  positions: number,
  signal: AbortSignal,
  threads?: number,
): Promise<TransformerModel> {
  const config = readModelConfig(file.gguf);
  if (positions > config.contextLength) {
    throw new LlmError('context-overflow', `${positions} positions exceed the model's training context of ${config.contextLength}`, {
      details: { positions, contextLength: config.contextLength },
    });
  }
  const ops = await startBackend(backend, { signal, ...(threads !== undefined ? { threads } : {}) });
  try {
    return await loadTransformer(file.gguf, file.source, ops, { contextLength: Math.max(1, positions), signal });
  } catch (e) {
    ops.destroy();
    throw e;
  }
}

/** Token ids from `--tokens 1,2,3` or from `--prompt` through the model's tokenizer (BOS as the vocab says). */
export async function inputTokens(
  command: string,
  gguf: GgufFile,
  values: { prompt?: string; tokens?: string },
): Promise<{ tokens: number[]; tokenizer: Tokenizer | null }> {
  const tokenizer = createTokenizerFor(gguf);
  if (values.tokens !== undefined) {
    const tokens = values.tokens.split(',').map((s) => Number(s.trim()));
    if (tokens.length === 0 || tokens.some((t) => !Number.isInteger(t) || t < 0)) {
      throw new LlmError('invalid-request', `${command}: --tokens must be comma-separated token ids, got '${values.tokens}'`);
    }
    return { tokens, tokenizer };
  }
  if (values.prompt === undefined) throw new LlmError('invalid-request', `${command}: give --prompt "text" or --tokens 1,2,3`);
  if (!tokenizer) throw new LlmError('tokenizer', `${command}: the model file has no vocabulary (tokenizer.ggml.model); pass --tokens instead of --prompt`);
  const tokens = tokenizer.encode(values.prompt, { addSpecial: true });
  if (tokens.length === 0) throw new LlmError('invalid-request', `${command}: the prompt tokenizes to nothing`);
  return { tokens, tokenizer };
}

/** Shows a token as `id 'text'` for humans. */
export function showToken(tokenizer: Tokenizer | null, id: number): string {
  return tokenizer ? `${id} ${JSON.stringify(tokenizer.tokenText(id))}` : String(id);
}

const USAGE = 'webgguf eval <model.gguf> (--prompt "…" | --tokens 1,2,3) [--backend cpu|wasm|webgpu] [--threads N] [--json] [--top K]';

async function run(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCliArgs('eval', args, {
    prompt: { type: 'string' },
    tokens: { type: 'string' },
    backend: { type: 'string', short: 'b' },
    threads: { type: 'string' },
    json: { type: 'boolean' },
    top: { type: 'string' },
  });
  if (positionals.length !== 1) throw new LlmError('invalid-request', `eval: expected one model path; usage: ${USAGE}`);
  const backend = backendName('eval', values.backend);
  const top = Number(values.top ?? 5);
  if (!(Number.isInteger(top) && top > 0)) throw new LlmError('invalid-request', `eval: --top must be a positive integer, got '${values.top}'`);

  const file = await openModelFile(positionals[0], io.signal);
  try {
    const { tokens, tokenizer } = await inputTokens('eval', file.gguf, values);
    const model = await loadModel(file, backend, tokens.length, io.signal, threadCount('eval', values.threads));
    try {
      const vocab = model.config.vocabSize;
      const logits = (await model.eval(Int32Array.from(tokens), 0, 0, { logits: 'all', signal: io.signal }))!; // [n, vocab]
      if (values.json) {
        const rows = tokens.map((_, p) => Array.from(logits.subarray(p * vocab, (p + 1) * vocab)));
        io.out(JSON.stringify({ tokens, logits: rows }) + '\n');
        return 0;
      }
      io.out(`${model.ops.description}; ${tokens.length} tokens, vocabulary ${vocab}\n`);
      for (let p = 0; p < tokens.length; p++) {
        const row = logits.subarray(p * vocab, (p + 1) * vocab);
        const order = Array.from(row.keys())
          .sort((a, b) => row[b] - row[a] || a - b)
          .slice(0, top);
        const best = order.map((id) => `${showToken(tokenizer, id)}=${row[id].toFixed(4)}`).join('  ');
        io.out(`pos ${p} token ${showToken(tokenizer, tokens[p])} → argmax ${argmaxOf(row)}: ${best}\n`);
      }
      return 0;
    } finally {
      model.destroy();
    }
  } finally {
    await file.source.close?.();
  }
}

const command: CliCommand = { name: 'eval', usage: USAGE, run };
export default command;
