/**
 * `webgguf eval`: runs tokens through a model on a chosen backend and prints every position's logits (top entries
 * as text, or the full rows as JSON `{tokens, logits}`). Opening the model and reading the prompt are shared with
 * `conform` and `generate` (`../model-file.ts`, `../prompt-tokens.ts`).
 */

import { argmaxOf } from '../../model/conformance.js';
import { choiceFlag, parseCommandLine, positiveIntFlag, usageError } from '../cli-args.js';
import type { CliCommand, CliIo } from '../cli-io.js';
import { CLI_BACKENDS, kernelsFlag, loadModel, openModelFile } from '../model-file.js';
import { inputTokens, showToken } from '../prompt-tokens.js';
import { evalWithImages, IMAGE_FLAGS, IMAGE_FLAGS_HELP, imageInput } from '../image-input.js';

const USAGE =
  'webgguf eval <model.gguf> (--prompt "…" | --tokens 1,2,3) [--backend cpu|wasm|webgpu] [--kernels auto|hardware|software|hardware-nosubgroups (webgpu)] [--threads N] [--json] [--top K] ' +
  IMAGE_FLAGS_HELP;

async function run(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandLine(
    args,
    {
      prompt: { type: 'string' },
      tokens: { type: 'string' },
      backend: { type: 'string', short: 'b' },
      threads: { type: 'string' },
      kernels: { type: 'string' },
      json: { type: 'boolean' },
      top: { type: 'string' },
      ...IMAGE_FLAGS,
    },
    USAGE,
  );
  if (positionals.length !== 1) throw usageError('eval: expected one model path', USAGE);
  const backend = choiceFlag('eval', '--backend', values.backend, CLI_BACKENDS);
  const top = positiveIntFlag('eval', '--top', values.top) ?? 5;

  const file = await openModelFile(positionals[0], io.signal);
  try {
    const input = await inputTokens('eval', file.gguf, values);
    const { tokenizer } = input;
    const image = await imageInput('eval', file.gguf, tokenizer, values, io.signal);
    const tokens = image ? image.tokens : input.tokens;
    const kernels = kernelsFlag('eval', values.kernels, backend);
    const model = await loadModel(
      file,
      backend,
      tokens.length,
      io.signal,
      positiveIntFlag('eval', '--threads', values.threads),
      undefined,
      kernels,
    );
    try {
      const vocab = model.config.vocabSize;
      const logits = image // [n, vocab]
        ? await evalWithImages(model, tokens, image.images, io.signal)
        : (await model.eval(Int32Array.from(tokens), 0, 0, { logits: 'all', signal: io.signal }))!;
      if (values.json) {
        const rows = tokens.map((t, p) => (t < 0 ? null : Array.from(logits.subarray(p * vocab, (p + 1) * vocab))));
        const images = image?.images.map((im) => ({ start: im.start, n_tokens: im.nTokens }));
        const ids = tokens.map((t) => (t < 0 ? null : t)); // image positions: null (no logits there either)
        io.out(JSON.stringify({ tokens: ids, ...(images ? { images } : {}), logits: rows }) + '\n');
        return 0;
      }
      io.out(`${model.ops.description}; ${tokens.length} tokens, vocabulary ${vocab}\n`);
      for (let p = 0; p < tokens.length; p++) {
        if (tokens[p] < 0) continue; // an image position: no logits
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
