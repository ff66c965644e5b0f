/**
 * `webgguf embed <model> --text "…" [--text …] [--json]`: sentence embeddings of an embedding model (a GGUF with a
 * pooling type) through `engine.embeddings.create`. `--json` prints the response object itself; otherwise one line
 * per text: its index, its width and its values. Task prefixes some embedders expect (`search_query: `, `query: `)
 * go in the text.
 */

import { createEngine } from '../../api/create-engine.js';
import { BACKEND_CHOICES } from '../../api/engine.js';
import { choiceFlag, parseCommandLine, positiveIntFlag, usageError } from '../cli-args.js';
import type { CliCommand, CliIo } from '../cli-io.js';
import { cliGpu } from '../model-file.js';

const USAGE =
  'webgguf embed <model.gguf|url> --text "…" [--text "…" …] [--json] [--dimensions N] [--pooling mean|cls|last] [--no-normalize] [--truncate] [--backend auto|webgpu|wasm|cpu] [--ctx N] [--threads N]';

/** `--text` values in order (the shared parser keeps only the last of a repeated flag), and the other arguments. */
function takeTexts(args: readonly string[]): { texts: string[]; rest: string[] } {
  const texts: string[] = [];
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') {
      rest.push(...args.slice(i));
      break;
    }
    if (a === '--text' || a === '-t') {
      if (i + 1 >= args.length) throw usageError('embed: --text needs a value', USAGE, { option: a });
      texts.push(args[++i]!);
    } else if (a.startsWith('--text=')) texts.push(a.slice('--text='.length));
    else rest.push(a);
  }
  return { texts, rest };
}

async function run(args: string[], io: CliIo): Promise<number> {
  const { texts, rest } = takeTexts(args);
  const { values, positionals } = parseCommandLine(
    rest,
    {
      json: { type: 'boolean' },
      dimensions: { type: 'string' },
      pooling: { type: 'string' },
      'no-normalize': { type: 'boolean' },
      truncate: { type: 'boolean' },
      backend: { type: 'string', short: 'b' },
      ctx: { type: 'string', short: 'c' },
      threads: { type: 'string' },
    },
    USAGE,
  );
  if (positionals.length !== 1) throw usageError('embed: expected one model', USAGE);
  if (texts.length === 0) throw usageError('embed: give at least one --text', USAGE);
  const backend = choiceFlag('embed', '--backend', values.backend, BACKEND_CHOICES);
  const dimensions = positiveIntFlag('embed', '--dimensions', values.dimensions);
  const pooling = choiceFlag('embed', '--pooling', values.pooling, ['mean', 'cls', 'last'] as const);
  const engine = await createEngine({
    model: positionals[0]!,
    backend,
    contextLength: positiveIntFlag('embed', '--ctx', values.ctx),
    threads: positiveIntFlag('embed', '--threads', values.threads),
    gpu: backend === 'webgpu' ? await cliGpu() : undefined,
    warmup: false,
    slots: 1,
    signal: io.signal,
  });
  try {
    const t0 = performance.now();
    const r = await engine.embeddings.create({
      input: texts,
      ...(dimensions !== undefined ? { dimensions } : {}),
      ...(values.pooling !== undefined ? { pooling } : {}),
      ...(values['no-normalize'] ? { normalize: false } : {}),
      ...(values.truncate ? { truncate: true } : {}),
      signal: io.signal,
    });
    const ms = performance.now() - t0;
    if (values.json) io.out(`${JSON.stringify(r)}\n`);
    else
      for (const d of r.data)
        io.out(`${d.index}\t${(d.embedding as number[]).length}\t${(d.embedding as number[]).join(' ')}\n`);
    io.err(
      `${engine.info.model.name || engine.info.model.arch} on ${engine.info.backend.description}: ${r.data.length} ` +
        `embeddings, ${r.usage.prompt_tokens} tokens in ${ms.toFixed(0)} ms (${((r.data.length * 1000) / ms).toFixed(1)} embeddings/s)\n`,
    );
    return 0;
  } finally {
    await engine.unload();
  }
}

const command: CliCommand = { name: 'embed', usage: USAGE, run };
export default command;
