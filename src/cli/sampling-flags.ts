/**
 * The command-line flags for the sampling options (`engine/sampling-options.ts`), shared by `webgguf generate` and
 * `webgguf chat`: a flag table, its usage line, and the parser that takes the flags out of an argument list.
 */

import { LlmError } from '../errors.js';
import type { SamplingOptions } from '../engine/sampling-options.js';

/** Command-line flags → option, for `webgguf generate` and `webgguf chat`. */
const NUMBER_FLAGS: Record<string, keyof SamplingOptions> = {
  '--temperature': 'temperature',
  '--temp': 'temperature',
  '--top-p': 'top_p',
  '--top-k': 'top_k',
  '--min-p': 'min_p',
  '-n': 'max_tokens',
  '--max-tokens': 'max_tokens',
  '--n-predict': 'max_tokens',
  '--seed': 'seed',
  '--frequency-penalty': 'frequency_penalty',
  '--presence-penalty': 'presence_penalty',
  '--repeat-penalty': 'repetition_penalty',
  '--repetition-penalty': 'repetition_penalty',
  '--repeat-last-n': 'repeat_last_n',
};

/** One line per sampling flag, for usage texts. */
export const SAMPLING_FLAGS_HELP =
  '[--temperature T] [--top-k K] [--top-p P] [--min-p P] [-n N] [--seed S] [--repeat-penalty R] [--repeat-last-n N] ' +
  '[--frequency-penalty F] [--presence-penalty P] [--logit-bias ID=BIAS]… [--stop STR]…';

/**
 * Takes the sampling flags out of `args` (values are checked later by `normalizeSamplingOptions`, which names the
 * field). Returns the options and the arguments that were not sampling flags.
 */
export function parseSamplingFlags(args: readonly string[]): { options: SamplingOptions; rest: string[] } {
  const o: Record<string, unknown> = {};
  const stop: string[] = [];
  const bias: Record<string, number> = {};
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const [flag, inline] =
      a.startsWith('--') && a.includes('=')
        ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)]
        : [a, undefined];
    const known = flag in NUMBER_FLAGS || flag === '--stop' || flag === '--logit-bias';
    if (!known) {
      rest.push(a);
      continue;
    }
    const value = inline ?? args[++i];
    if (value === undefined)
      throw new LlmError('invalid-request', `flag ${flag} needs a value`, { details: { field: flag } });
    if (flag === '--stop') stop.push(value.replace(/\\n/g, '\n'));
    else if (flag === '--logit-bias') {
      const m = /^(\d+)=([-+]?[\d.]+(?:e[-+]?\d+)?)$/i.exec(value);
      if (!m)
        throw new LlmError('invalid-request', `flag --logit-bias is '${value}'; write TOKEN_ID=BIAS, e.g. 13=-100`, {
          details: { field: 'logit_bias' },
        });
      bias[m[1]] = Number(m[2]);
    } else {
      const n = Number(value);
      if (value.trim() === '' || Number.isNaN(n))
        throw new LlmError('invalid-request', `flag ${flag} is '${value}'; it must be a number`, {
          details: { field: NUMBER_FLAGS[flag] },
        });
      o[NUMBER_FLAGS[flag]] = n;
    }
  }
  if (stop.length) o.stop = stop;
  if (Object.keys(bias).length) o.logit_bias = bias;
  return { options: o as SamplingOptions, rest };
}
