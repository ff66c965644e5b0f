/**
 * `webgguf generate`: continues a prompt on a chosen backend with the engine's full sampler (every llama.cpp sampling
 * flag: temperature, top-k/p, min-p, penalties, logit bias, stop strings, seed), streaming text to stdout as soon as
 * it is safe to show and printing prompt and decode speed (tokens/s) to stderr.
 */

import { generateText } from '../../engine/generate-text.js';
import { parseSamplingFlags, SAMPLING_FLAGS_HELP } from '../sampling-flags.js';
import { LlmError } from '../../errors.js';
import type { Tokenizer } from '../../tokenizer/tokenizer.js';
import type { CliCommand, CliIo } from '../cli-io.js';
import { choiceFlag, parseCommandLine, positiveIntFlag, usageError } from '../cli-args.js';
import { CLI_BACKENDS, kernelsFlag, loadModel, openModelFile } from '../model-file.js';
import { inputTokens } from '../prompt-tokens.js';
import { IMAGE_FLAGS, IMAGE_FLAGS_HELP, imageInput } from '../image-input.js';

const USAGE = `webgguf generate <model.gguf> (--prompt "…" | --tokens 1,2,3) [--backend cpu|wasm|webgpu] [--kernels auto|hardware|software|hardware-nosubgroups (webgpu)] [--threads N] [--ignore-eos] ${IMAGE_FLAGS_HELP} ${SAMPLING_FLAGS_HELP}`;

/** Tokens generated when -n is not given. */
const DEFAULT_MAX_TOKENS = 64;
/** llama.cpp's default sampling temperature. */
const DEFAULT_TEMPERATURE = 0.8;

/** The same tokenizer with no end-of-generation tokens (for --ignore-eos). */
function withoutEog(tokenizer: Tokenizer): Tokenizer {
  return Object.create(tokenizer, { eogIds: { value: new Set<number>() } }) as Tokenizer;
}

async function run(args: string[], io: CliIo): Promise<number> {
  const { options: sampling, rest } = parseSamplingFlags(args);
  const { values, positionals } = parseCommandLine(
    rest,
    {
      prompt: { type: 'string', short: 'p' },
      tokens: { type: 'string' },
      backend: { type: 'string', short: 'b' },
      threads: { type: 'string' },
      kernels: { type: 'string' },
      'ignore-eos': { type: 'boolean' },
      ...IMAGE_FLAGS,
    },
    USAGE,
  );
  if (positionals.length !== 1) throw usageError('generate: expected one model path', USAGE);
  const backend = choiceFlag('generate', '--backend', values.backend, CLI_BACKENDS);
  const maxTokens = sampling.max_tokens ?? DEFAULT_MAX_TOKENS;

  const file = await openModelFile(positionals[0], io.signal);
  try {
    const input = await inputTokens('generate', file.gguf, values);
    const { tokenizer } = input;
    const image = await imageInput('generate', file.gguf, tokenizer, values, io.signal);
    const tokens = image ? image.tokens : input.tokens;
    if (!tokenizer)
      throw new LlmError(
        'tokenizer',
        'generate: the model file has no vocabulary, so its output cannot be shown as text',
      );
    const contextLength = tokens.length + maxTokens;
    const kernels = kernelsFlag('generate', values.kernels, backend);
    const model = await loadModel(
      file,
      backend,
      contextLength,
      io.signal,
      positiveIntFlag('generate', '--threads', values.threads),
      undefined,
      kernels,
    );
    try {
      const r = await generateText({
        ...sampling,
        temperature: sampling.temperature ?? DEFAULT_TEMPERATURE,
        max_tokens: maxTokens,
        transformer: model,
        tokenizer: values['ignore-eos'] ? withoutEog(tokenizer) : tokenizer,
        prompt: tokens,
        contextLength,
        onText: (t) => io.out(t),
        signal: io.signal,
        ...(image ? { images: image.images } : {}),
      });
      io.out('\n');
      io.err(
        `${model.ops.description}: prompt ${r.promptIds.length} tokens (${r.prefillTokensPerSecond.toFixed(1)} tokens/s), ` +
          `generated ${r.tokens.length} tokens (${r.decodeTokensPerSecond.toFixed(1)} tokens/s); seed ${r.seed}, temperature ${sampling.temperature ?? DEFAULT_TEMPERATURE}\n`,
      );
      return 0;
    } finally {
      model.destroy();
    }
  } finally {
    await file.source.close?.();
  }
}

const command: CliCommand = { name: 'generate', usage: USAGE, run };
export default command;
