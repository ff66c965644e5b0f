/**
 * `webgguf tokenize <model> --text "…" [--special] [--bos] [--json]` prints a text's token ids;
 * `webgguf tokenize <model> --test <file.inp>` runs a llama.cpp tokenizer vector file against the `.out` beside it,
 * prints the first mismatches and `N passed, M failed` last, and exits non-zero when any case fails.
 */

import { readFile } from 'node:fs/promises';
import { LlmError } from '../../errors.js';
import { loadTokenizer } from '../../tokenizer/index.js';
import { parseCommandLine, usageError } from '../cli-args.js';
import type { CliCommand, CliIo } from '../cli-io.js';
import { loadModelMetadata } from '../model-file.js';

const USAGE =
  'webgguf tokenize <model> --text "…" [--special] [--bos] [--json] | --test <file.inp>   token ids of a text, or run llama.cpp vectors';
/** Mismatches printed in full by `--test` before the summary line. */
const MAX_SHOWN_FAILURES = 5;

interface TokenizeArgs {
  model: string;
  text?: string;
  test?: string;
  special: boolean;
  bos: boolean;
  json: boolean;
}

function parseArgs(args: string[]): TokenizeArgs {
  const { values, positionals } = parseCommandLine(
    args,
    {
      text: { type: 'string' },
      test: { type: 'string' },
      special: { type: 'boolean' },
      bos: { type: 'boolean' },
      json: { type: 'boolean' },
    },
    USAGE,
  );
  if (positionals.length === 0) throw usageError('missing <model>', USAGE);
  if (positionals.length > 1) throw usageError(`unexpected argument '${positionals[1]}'`, USAGE);
  if ((values.text === undefined) === (values.test === undefined))
    throw usageError('give exactly one of --text or --test', USAGE);
  return {
    model: positionals[0],
    special: values.special === true,
    bos: values.bos === true,
    json: values.json === true,
    ...(values.text !== undefined ? { text: values.text } : {}),
    ...(values.test !== undefined ? { test: values.test } : {}),
  };
}

/** Splits a llama.cpp `.inp` file into cases and reads the ids of the `.out` beside it. */
async function readVectorFile(inpPath: string): Promise<{ text: string; ids: number[] }[]> {
  const outPath = inpPath.replace(/\.inp$/, '') + '.out';
  let inp: string;
  let out: string;
  try {
    [inp, out] = await Promise.all([readFile(inpPath, 'utf8'), readFile(outPath, 'utf8')]);
  } catch (e) {
    throw new LlmError(
      'invalid-request',
      `reading test vectors ${inpPath} / ${outPath} failed: ${(e as Error).message}`,
      { cause: e },
    );
  }
  const texts = inp.split('\n__ggml_vocab_test__\n');
  if (texts[texts.length - 1] === '') texts.pop();
  const lines = out.split('\n');
  if (lines.length < texts.length) {
    throw new LlmError(
      'invalid-request',
      `${outPath} has ${lines.length} lines for ${texts.length} cases in ${inpPath}`,
    );
  }
  return texts.map((text, i) => ({
    text,
    ids: lines[i]
      .split(' ')
      .filter((s) => s !== '')
      .map(Number),
  }));
}

const command: CliCommand = {
  name: 'tokenize',
  usage: USAGE,
  async run(args: string[], io: CliIo): Promise<number> {
    const opts = parseArgs(args);
    const tokenizer = await loadTokenizer(await loadModelMetadata(opts.model, io.signal));
    if (opts.text !== undefined) {
      const ids = tokenizer.encode(opts.text, { parseSpecial: opts.special, addSpecial: opts.bos });
      io.out(opts.json ? `${JSON.stringify(ids)}\n` : `${ids.join(' ')}\n`);
      return 0;
    }
    const cases = await readVectorFile(opts.test!);
    let passed = 0;
    let failed = 0;
    for (const c of cases) {
      const got = tokenizer.encode(c.text);
      if (got.length === c.ids.length && got.every((id, k) => id === c.ids[k])) {
        passed++;
        continue;
      }
      failed++;
      if (failed <= MAX_SHOWN_FAILURES) {
        io.out(
          `FAIL ${JSON.stringify(c.text.length > 120 ? `${c.text.slice(0, 120)}…` : c.text)}\n  want ${c.ids.join(' ')}\n  got  ${got.join(' ')}\n`,
        );
      }
    }
    if (failed > MAX_SHOWN_FAILURES) io.out(`… ${failed - MAX_SHOWN_FAILURES} more failures not shown\n`);
    io.out(`${passed} passed, ${failed} failed\n`);
    return failed === 0 ? 0 : 1;
  },
};
export default command;
