/**
 * The one command-line parser the `webgguf` sub-commands share: `--name value`, `--name=value`, `-x value`, boolean
 * switches and positionals, declared per command as a flag table. Unlike node:util `parseArgs`, a value may start with
 * '-' (`--text "-1"`). Bad flags become `LlmError('invalid-request')` naming the flag and repeating the usage line.
 */

import { LlmError } from '../errors.js';

/** One flag: a `string` takes a value, a `boolean` is a switch; `short` is its one-letter alias (without '-'). */
interface FlagSpec {
  readonly type: 'string' | 'boolean';
  readonly short?: string;
}

/** The flags of a command, keyed by long name (without '--'). */
export type FlagSpecs = Readonly<Record<string, FlagSpec>>;

/** Parsed flag values: strings for `string` flags, `true` for switches given; absent when not given. */
type FlagValues<T extends FlagSpecs> = { -readonly [K in keyof T]?: T[K]['type'] extends 'boolean' ? boolean : string };

/** What `parseCommandLine` returns. */
export interface CommandLine<T extends FlagSpecs> {
  readonly values: FlagValues<T>;
  readonly positionals: string[];
}

/** A bad command line: `LlmError('invalid-request')` with `message` and the command's usage line. */
export function usageError(message: string, usage: string, details?: Record<string, string>): LlmError {
  return new LlmError('invalid-request', `${message}; usage: ${usage}`, details ? { details } : undefined);
}

/**
 * Parses `args` against `specs`. A lone '-' is a positional; '--' ends the flags. Repeated flags: the last wins.
 * Unknown flags and missing values throw `LlmError('invalid-request')` with `usage` appended.
 */
export function parseCommandLine<T extends FlagSpecs>(
  args: readonly string[],
  specs: T,
  usage: string,
): CommandLine<T> {
  const values: Record<string, string | boolean> = {};
  const positionals: string[] = [];
  const byShort = new Map<string, string>();
  for (const [name, spec] of Object.entries(specs)) if (spec.short !== undefined) byShort.set(spec.short, name);
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--') {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (!a.startsWith('-') || a === '-') {
      positionals.push(a);
      continue;
    }
    const eq = a.startsWith('--') ? a.indexOf('=') : -1;
    const flag = eq >= 0 ? a.slice(0, eq) : a;
    const name = flag.startsWith('--') ? flag.slice(2) : byShort.get(flag.slice(1));
    const spec = name !== undefined && Object.hasOwn(specs, name) ? specs[name] : undefined;
    if (name === undefined || spec === undefined) {
      throw usageError(`unknown option ${flag}`, usage, { option: flag });
    }
    if (spec.type === 'boolean') {
      if (eq >= 0) throw usageError(`${flag} is a switch and takes no value`, usage, { option: flag });
      values[name] = true;
      continue;
    }
    const value = eq >= 0 ? a.slice(eq + 1) : args[++i];
    if (value === undefined) throw usageError(`${flag} needs a value`, usage, { option: flag });
    values[name] = value;
  }
  return { values: values as FlagValues<T>, positionals };
}

/**
 * Parses a flag's value as a number that passes `isValid` (described by `what`, e.g. 'a number ≥ 0'), or returns
 * undefined when the flag was not given.
 */
export function numberFlag(
  command: string,
  flag: string,
  value: string | undefined,
  isValid: (x: number) => boolean,
  what: string,
): number | undefined {
  if (value === undefined) return undefined;
  const x = Number(value);
  if (value.trim() === '' || !isValid(x)) {
    throw new LlmError('invalid-request', `${command}: ${flag} must be ${what}, got '${value}'`, {
      details: { field: flag },
    });
  }
  return x;
}

/** Parses a flag's value as a positive integer, or returns undefined when the flag was not given. */
export function positiveIntFlag(command: string, flag: string, value: string | undefined): number | undefined {
  return numberFlag(command, flag, value, (n) => Number.isSafeInteger(n) && n > 0, 'a positive integer');
}

/** Checks that a flag's value is one of `choices` (the first is the default when the flag was not given). */
export function choiceFlag<C extends string>(
  command: string,
  flag: string,
  value: string | undefined,
  choices: readonly C[],
): C {
  const v = value ?? choices[0];
  if (!(choices as readonly string[]).includes(v)) {
    throw new LlmError('invalid-request', `${command}: ${flag} must be one of ${choices.join(', ')}, got '${v}'`, {
      details: { field: flag },
    });
  }
  return v as C;
}
