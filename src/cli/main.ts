/**
 * `webgguf` command-line entry: dispatches to one sub-command per file in `src/cli/commands/`. Errors print the
 * `LlmError` message (never a stack trace) and exit non-zero.
 */

import { LlmError } from '../errors.js';
import type { CliCommand, CliIo } from './cli-io.js';

/** Sub-commands by name, loaded on demand so that `inspect` never pulls in a backend. */
const COMMANDS: Record<string, () => Promise<{ default: CliCommand }>> = {
  inspect: () => import('./commands/inspect.js'),
  tokenize: () => import('./commands/tokenize.js'),
  template: () => import('./commands/template.js'),
  eval: () => import('./commands/eval.js'),
  conform: () => import('./commands/conform.js'),
  generate: () => import('./commands/generate.js'),
  chat: () => import('./commands/chat.js'),
  profile: () => import('./commands/profile.js'),
  serve: () => import('./commands/serve.js'),
  embed: () => import('./commands/embed.js'),
};

/** Runs the CLI with `argv` (without node and script) and returns the exit status. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const [name, ...args] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    const lines = ['usage: webgguf <command> [options]', ''];
    for (const load of Object.values(COMMANDS)) {
      const cmd = (await load()).default;
      lines.push(`  ${cmd.usage}`);
    }
    io.out(lines.join('\n') + '\n');
    return name ? 0 : 2;
  }
  const load = COMMANDS[name];
  if (!load) {
    io.err(`webgguf: unknown command '${name}'. Run 'webgguf --help' for the list.\n`);
    return 2;
  }
  try {
    return await (await load()).default.run(args, io);
  } catch (e) {
    if (e instanceof LlmError) {
      io.err(`webgguf ${name}: ${e.message}\n`);
      return 1;
    }
    io.err(`webgguf ${name}: internal error: ${e instanceof Error ? e.message : String(e)}\n`);
    return 70;
  }
}

/** Entry for the built CLI: wires process streams and SIGINT. */
export async function main(argv: string[] = process.argv.slice(2)): Promise<number> {
  const controller = new AbortController();
  process.once('SIGINT', () => controller.abort(new Error('interrupted')));
  const io: CliIo = {
    out: (t) => void process.stdout.write(t),
    err: (t) => void process.stderr.write(t),
    signal: controller.signal,
  };
  return runCli(argv, io);
}
