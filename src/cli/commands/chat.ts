/**
 * `webgguf chat <model>`: an interactive chat in the terminal through the public `Engine` — the model's chat
 * template, streaming answers, the prompt cache carrying the conversation from turn to turn, old turns dropped
 * when the context fills. Reads one user message per stdin line; exits at end of input. `/reset` starts over.
 */

import { createEngine } from '../../api/create-engine.js';
import { BACKEND_CHOICES, type BackendChoice, type Engine } from '../../api/engine.js';
import type { ChatMessage } from '../../api/types.js';
import { parseSamplingFlags, SAMPLING_FLAGS_HELP } from '../sampling-flags.js';
import { isLlmError } from '../../errors.js';
import { choiceFlag, parseCommandLine, positiveIntFlag, usageError } from '../cli-args.js';
import type { CliCommand, CliIo } from '../cli-io.js';
import { cliGpu } from '../model-file.js';

const USAGE = `webgguf chat <model.gguf|url> [--backend auto|webgpu|wasm|cpu] [--ctx N] [--system TEXT] [--threads N] ${SAMPLING_FLAGS_HELP}`;

/** Parsed command line of `chat`. */
interface ChatArgs {
  model: string;
  backend: BackendChoice;
  contextLength?: number;
  threads?: number;
  system?: string;
}

function parseArgs(rest: string[]): ChatArgs {
  const { values, positionals } = parseCommandLine(
    rest,
    {
      backend: { type: 'string', short: 'b' },
      ctx: { type: 'string', short: 'c' },
      threads: { type: 'string' },
      system: { type: 'string', short: 's' },
    },
    USAGE,
  );
  if (positionals.length === 0) throw usageError('chat: give a model', USAGE);
  if (positionals.length > 1)
    throw usageError(`chat: expected one model, got '${positionals[0]}' and '${positionals[1]}'`, USAGE);
  return {
    model: positionals[0],
    backend: choiceFlag('chat', '--backend', values.backend, BACKEND_CHOICES),
    contextLength: positiveIntFlag('chat', '--ctx', values.ctx),
    threads: positiveIntFlag('chat', '--threads', values.threads),
    system: values.system,
  };
}

/** Lines of process stdin. */
async function* stdinLines(): AsyncGenerator<string> {
  const { createInterface } = await import('node:readline');
  const rl = createInterface({ input: process.stdin, crlfDelay: Infinity, terminal: false });
  try {
    for await (const line of rl) yield line;
  } finally {
    rl.close();
  }
}

/**
 * Runs a chat session over `lines` (one user message each) on `engine`, writing answers to `io.out` and
 * status to `io.err`. Exported for tests.
 */
export async function chatSession(
  engine: Engine,
  lines: AsyncIterable<string>,
  io: CliIo,
  sampling: ReturnType<typeof parseSamplingFlags>['options'],
  system?: string,
): Promise<number> {
  const start = (): ChatMessage[] => (system ? [{ role: 'system', content: system }] : []);
  let messages = start();
  for await (const raw of lines) {
    const line = raw.trim();
    if (!line) continue;
    if (line === '/reset') {
      messages = start();
      io.err('(conversation reset)\n');
      continue;
    }
    if (line === '/exit' || line === '/quit') break;
    messages.push({ role: 'user', content: line });
    let answer = '';
    try {
      const stream = await engine.chat.completions.create({
        ...sampling,
        messages,
        stream: true,
        truncate: 'history',
        signal: io.signal,
      });
      for await (const chunk of stream) {
        const text = chunk.choices[0]?.delta.content ?? '';
        answer += text;
        if (text) io.out(text);
      }
    } catch (e) {
      if (isLlmError(e, 'aborted')) {
        io.out('\n');
        return 130;
      }
      throw e;
    }
    io.out('\n');
    messages.push({ role: 'assistant', content: answer });
    const s = await engine.stats();
    io.err(
      `[${s.decodeTokensPerSecond.toFixed(1)} tok/s, first token ${Math.round(s.timeToFirstTokenMs)} ms, prompt cache reused ${s.promptCache.reusedTokens} tokens]\n`,
    );
  }
  return 0;
}

const command: CliCommand = {
  name: 'chat',
  usage: USAGE,
  async run(args: string[], io: CliIo): Promise<number> {
    const { options: sampling, rest } = parseSamplingFlags(args);
    const a = parseArgs(rest);
    const gpu = a.backend === 'webgpu' ? await cliGpu() : undefined;
    const engine = await createEngine({
      model: a.model,
      backend: a.backend,
      contextLength: a.contextLength,
      threads: a.threads,
      gpu,
      signal: io.signal,
    });
    try {
      const b = engine.info.backend;
      io.err(
        `${engine.info.model.name || a.model}: ${b.description} (${b.reason}); context ${engine.info.contextLength}. One message per line; /reset, /exit; end of input quits.\n`,
      );
      return await chatSession(engine, stdinLines(), io, sampling, a.system);
    } finally {
      await engine.unload();
    }
  },
};
export default command;
