/**
 * `webgguf generate`: continues a prompt on a chosen backend, streaming text to stdout as tokens are decided and
 * printing prompt and decode speed (tokens/s) to stderr. Sampling here is deliberately simple — greedy at
 * temperature 0, else softmax(logits / T) over the whole vocabulary with a seeded RNG; the engine has the full sampler.
 */

import { createRng, randomSeed, type Rng } from '../../engine/rng.js';
import { LlmError } from '../../errors.js';
import type { TransformerModel } from '../../model/transformer.js';
import type { CliCommand, CliIo } from '../cli-io.js';
import { choiceFlag, numberFlag, parseCommandLine, positiveIntFlag, usageError } from '../cli-args.js';
import { CLI_BACKENDS, loadModel, openModelFile } from '../model-file.js';
import { inputTokens } from '../prompt-tokens.js';

const USAGE =
  'webgguf generate <model.gguf> --prompt "…" [-n N] [--temperature T] [--seed S] [--backend cpu|wasm|webgpu] [--threads N] [--ignore-eos]';

/** Draws a token from softmax(logits / temperature), computed in f64. */
export function sampleWithTemperature(logits: Float32Array, temperature: number, rng: Rng): number {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) if (logits[i] > max) max = logits[i];
  const weights = new Float64Array(logits.length); // [vocab] unnormalised probabilities
  let sum = 0;
  for (let i = 0; i < logits.length; i++) {
    const w = Math.exp((logits[i] - max) / temperature);
    weights[i] = w;
    sum += w;
  }
  let r = rng.nextDouble() * sum;
  for (let i = 0; i < weights.length; i++) {
    r -= weights[i];
    if (r < 0) return i;
  }
  return logits.length - 1;
}

/** The next token after the last eval: backend argmax at temperature 0, else a sample from the read-back logits. */
async function nextToken(model: TransformerModel, temperature: number, rng: Rng): Promise<number> {
  return temperature === 0 ? model.argmax() : sampleWithTemperature(await model.readLogits(), temperature, rng);
}

async function run(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandLine(
    args,
    {
      prompt: { type: 'string', short: 'p' },
      tokens: { type: 'string' },
      n: { type: 'string', short: 'n' },
      temperature: { type: 'string', short: 't' },
      seed: { type: 'string', short: 's' },
      backend: { type: 'string', short: 'b' },
      threads: { type: 'string' },
      'ignore-eos': { type: 'boolean' },
    },
    USAGE,
  );
  if (positionals.length !== 1) throw usageError('generate: expected one model path', USAGE);
  const backend = choiceFlag('generate', '--backend', values.backend, CLI_BACKENDS);
  const nPredict = positiveIntFlag('generate', '-n', values.n) ?? 64;
  const temperature = numberFlag('generate', '--temperature', values.temperature, (x) => x >= 0 && Number.isFinite(x), 'a number ≥ 0') ?? 0.8;
  const seed = numberFlag('generate', '--seed', values.seed, (x) => Number.isSafeInteger(x), 'an integer') ?? randomSeed();
  const rng = createRng(seed);

  const file = await openModelFile(positionals[0], io.signal);
  try {
    const { tokens, tokenizer } = await inputTokens('generate', file.gguf, values);
    if (!tokenizer) throw new LlmError('tokenizer', 'generate: the model file has no vocabulary, so its output cannot be shown as text');
    const model = await loadModel(file, backend, tokens.length + nPredict, io.signal, positiveIntFlag('generate', '--threads', values.threads));
    try {
      const decoder = tokenizer.createStreamDecoder();
      const promptStart = performance.now();
      await model.eval(Int32Array.from(tokens), 0, 0, { logits: 'last', signal: io.signal });
      let next = await nextToken(model, temperature, rng);
      const promptMs = performance.now() - promptStart;
      const decodeStart = performance.now();
      let generated = 0;
      for (let pos = tokens.length; generated < nPredict; pos++) {
        if (!values['ignore-eos'] && tokenizer.eogIds.has(next)) break;
        io.out(decoder.push(next));
        generated++;
        if (generated === nPredict) break;
        await model.eval(Int32Array.of(next), pos, 0, { logits: 'last', signal: io.signal });
        next = await nextToken(model, temperature, rng);
      }
      io.out(decoder.flush() + '\n');
      const decodeMs = performance.now() - decodeStart;
      const rate = (n: number, ms: number): string => (ms > 0 ? (n / (ms / 1000)).toFixed(1) : '∞');
      io.err(
        `${model.ops.description}: prompt ${tokens.length} tokens in ${promptMs.toFixed(0)} ms (${rate(tokens.length, promptMs)} tokens/s), ` +
          `generated ${generated} tokens in ${decodeMs.toFixed(0)} ms (${rate(generated, decodeMs)} tokens/s); seed ${seed}, temperature ${temperature}\n`,
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
