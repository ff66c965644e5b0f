/**
 * Runs the `webgguf` CLI in-process (through `runCli`, never a child process) with its output captured, for the
 * command tests: exit status, stdout and stderr as strings.
 */

import type { CliIo } from '../../src/cli/cli-io.js';
import { runCli } from '../../src/cli/main.js';

/** What one CLI run printed and returned. */
export interface CliRun {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

/** Runs `webgguf <argv…>` and returns its exit status and captured output. */
export async function runCliCaptured(...argv: string[]): Promise<CliRun> {
  let out = '';
  let err = '';
  const io: CliIo = { out: (t) => void (out += t), err: (t) => void (err += t), signal: new AbortController().signal };
  const code = await runCli(argv, io);
  return { code, out, err };
}
