/**
 * The one command-line parser the `webgguf` sub-commands share: `--name value`, `--name=value`, `-x value`, boolean
 * switches and positionals, declared per command as a flag table. Unlike node:util `parseArgs`, a value may start with
 * '-' (`--text "-1"`). Bad flags become `LlmError('invalid-request')` naming the flag and repeating the usage line.
 */

import { LlmError } from '../errors.js';

/** One flag: a `string` takes a value, a `boolean` is a switch; `short` is its one-letter alias (without '-'). */
export interface FlagSpec {
  readonly type: 'string' | 'boolean';
  readonly short?: string;
}

/** The flags of a command, keyed by long name (without '--'). */
export type FlagSpecs = Readonly<Record<string, FlagSpec>>;

/** Parsed flag values: strings for `string` flags, `true` for switches given; absent when not given. */
export type FlagValues<T extends FlagSpecs> = { -readonly [K in keyof T]?: T[K]['type'] extends 'boolean' ? boolean : string };

/** What `parseCommandLine` returns. */
export interface CommandLine<T extends FlagSpecs> {
  readonly values: FlagValues<T>;
  readonly positionals: string[];
}

/**
 * Parses `args` against `specs`. A lone '-' is a positional; '--' ends the flags. Repeated flags: the last wins.
 * Unknown flags and missing values throw `LlmError('invalid-request')` with `usage` appended.
 */
export function parseCommandLine<T extends FlagSpecs>(args: readonly string[], specs: T, usage: string): CommandLine<T> {
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
      throw new LlmError('invalid-request', `unknown option ${flag}; usage: ${usage}`, { details: { option: flag } });
    }
    if (spec.type === 'boolean') {
      if (eq >= 0) throw new LlmError('invalid-request', `${flag} is a switch and takes no value; usage: ${usage}`, { details: { option: flag } });
      values[name] = true;
      continue;
    }
    const value = eq >= 0 ? a.slice(eq + 1) : args[++i];
    if (value === undefined) throw new LlmError('invalid-request', `${flag} needs a value; usage: ${usage}`, { details: { option: flag } });
    values[name] = value;
  }
  return { values: values as FlagValues<T>, positionals };
}

/** Parses a flag's value as a positive integer, or returns undefined when the flag was not given. */
export function positiveIntFlag(command: string, flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!(value.trim() !== '' && Number.isSafeInteger(n) && n > 0)) {
    throw new LlmError('invalid-request', `${command}: ${flag} must be a positive integer, got '${value}'`, { details: { field: flag } });
  }
  return n;
}

/** Checks that a flag's value is one of `choices` (the first is the default when the flag was not given). */
export function choiceFlag<C extends string>(command: string, flag: string, value: string | undefined, choices: readonly C[]): C {
  const v = value ?? choices[0];
  if (!(choices as readonly string[]).includes(v)) {
    throw new LlmError('invalid-request', `${command}: ${flag} must be one of ${choices.join(', ')}, got '${v}'`, { details: { field: flag } });
  }
  return v as C;
}
