/**
 * `webgguf chat <model>`: an interactive chat in the terminal through the public `Engine` — the model's chat
 * template, streaming answers, the prompt cache carrying the conversation from turn to turn, old turns dropped
 * when the context fills. Reads one user message per stdin line; exits at end of input. `/reset` starts over.
 */

import { createEngine } from '../../api/create-engine.js';
import type { BackendChoice, Engine } from '../../api/engine.js';
import type { ChatMessage } from '../../api/types.js';
import { parseSamplingFlags, SAMPLING_FLAGS_HELP } from '../../engine/sampling-options.js';
import { LlmError, isLlmError } from '../../errors.js';
import type { CliCommand, CliIo } from '../cli-io.js';

const USAGE = `webgguf chat <model.gguf|url> [--backend auto|webgpu|wasm|cpu] [--ctx N] [--system TEXT] [--threads N] ${SAMPLING_FLAGS_HELP}`;
const BACKENDS: readonly BackendChoice[] = ['auto', 'webgpu', 'wasm', 'cpu'];

/** Parsed command line of `chat`. */
interface ChatArgs {
  model: string;
  backend: BackendChoice;
  contextLength?: number;
  threads?: number;
  system?: string;
}

function parseArgs(rest: string[]): ChatArgs {
  const out: Partial<ChatArgs> = { backend: 'auto' };
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i];
    const value = (): string => {
      const v = rest[++i];
      if (v === undefined) throw new LlmError('invalid-request', `chat: ${a} needs a value; usage: ${USAGE}`);
      return v;
    };
    const int = (name: string): number => {
      const v = value();
      const n = Number(v);
      if (!Number.isSafeInteger(n) || n <= 0) throw new LlmError('invalid-request', `chat: ${name} must be a positive integer, got '${v}'`, { details: { field: name } });
      return n;
    };
    if (a === '--backend' || a === '-b') {
      const b = value();
      if (!BACKENDS.includes(b as BackendChoice)) throw new LlmError('invalid-request', `chat: --backend is '${b}'; use one of ${BACKENDS.join(', ')}`, { details: { field: 'backend' } });
      out.backend = b as BackendChoice;
    } else if (a === '--ctx' || a === '-c') out.contextLength = int('--ctx');
    else if (a === '--threads') out.threads = int('--threads');
    else if (a === '--system' || a === '-s') out.system = value();
    else if (a.startsWith('-')) throw new LlmError('invalid-request', `chat: unknown option '${a}'; usage: ${USAGE}`);
    else if (out.model === undefined) out.model = a;
    else throw new LlmError('invalid-request', `chat: expected one model, got '${out.model}' and '${a}'; usage: ${USAGE}`);
  }
  if (out.model === undefined) throw new LlmError('invalid-request', `chat: give a model; usage: ${USAGE}`);
  return out as ChatArgs;
}

/** The WebGPU entry point in Node (npm `webgpu`, Dawn; lavapipe when installed). */
async function nodeGpu(): Promise<GPU | undefined> {
  if ((globalThis as { navigator?: { gpu?: GPU } }).navigator?.gpu) return undefined;
  try {
    const { existsSync } = await import('node:fs');
    const icd = '/usr/share/vulkan/icd.d/lvp_icd.json';
    if (!process.env.VK_ICD_FILENAMES && existsSync(icd)) process.env.VK_ICD_FILENAMES = icd;
    const mod = (await import('webgpu')) as unknown as { create(flags: string[]): GPU; globals: object };
    Object.assign(globalThis, mod.globals);
    return mod.create([]);
  } catch {
    return undefined;
  }
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
export async function chatSession(engine: Engine, lines: AsyncIterable<string>, io: CliIo, sampling: ReturnType<typeof parseSamplingFlags>['options'], system?: string): Promise<number> {
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
      const stream = await engine.chat.completions.create({ ...sampling, messages, stream: true, truncate: 'history', signal: io.signal });
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
    io.err(`[${s.decodeTokensPerSecond.toFixed(1)} tok/s, first token ${Math.round(s.timeToFirstTokenMs)} ms, prompt cache reused ${s.promptCache.reusedTokens} tokens]\n`);
  }
  return 0;
}

const command: CliCommand = {
  name: 'chat',
  usage: USAGE,
  async run(args: string[], io: CliIo): Promise<number> {
    const { options: sampling, rest } = parseSamplingFlags(args);
    const a = parseArgs(rest);
    const gpu = a.backend === 'webgpu' ? await nodeGpu() : undefined;
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
      io.err(`${engine.info.model.name || a.model}: ${b.description} (${b.reason}); context ${engine.info.contextLength}. One message per line; /reset, /exit; end of input quits.\n`);
      return await chatSession(engine, stdinLines(), io, sampling, a.system);
    } finally {
      await engine.unload();
    }
  },
};
export default command;
