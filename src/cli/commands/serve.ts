/**
 * `webgguf serve <model>`: an OpenAI-compatible HTTP server on one engine (see `server/openai-server.ts`): point
 * any OpenAI client at `http://<host>:<port>/v1`. Runs until interrupted (SIGINT), then unloads the model.
 */

import { createEngine } from '../../api/create-engine.js';
import { BACKEND_CHOICES } from '../../api/engine.js';
import { createOpenAiServer } from '../../server/openai-server.js';
import { choiceFlag, parseCommandLine, positiveIntFlag, usageError } from '../cli-args.js';
import type { CliCommand, CliIo } from '../cli-io.js';
import { cliGpu } from '../model-file.js';

const USAGE =
  'webgguf serve <model.gguf|url> [--port N (8080)] [--host H (127.0.0.1)] [--api-key KEY] [--cors ORIGIN] [--backend auto|webgpu|wasm|cpu] [--ctx N] [--threads N] [--max-body BYTES]';

const command: CliCommand = {
  name: 'serve',
  usage: USAGE,
  async run(args: string[], io: CliIo): Promise<number> {
    const { values, positionals } = parseCommandLine(
      args,
      {
        port: { type: 'string', short: 'p' },
        host: { type: 'string' },
        'api-key': { type: 'string' },
        cors: { type: 'string' },
        backend: { type: 'string', short: 'b' },
        ctx: { type: 'string', short: 'c' },
        threads: { type: 'string' },
        'max-body': { type: 'string' },
      },
      USAGE,
    );
    if (positionals.length !== 1) throw usageError('serve: give one model', USAGE);
    const port = values.port === '0' ? 0 : (positiveIntFlag('serve', '--port', values.port) ?? 8080);
    if (port > 65535) throw usageError(`serve: --port ${port} is not a port (0–65535)`, USAGE);
    const host = values.host ?? '127.0.0.1';
    const backend = choiceFlag('serve', '--backend', values.backend, BACKEND_CHOICES);
    const engine = await createEngine({
      model: positionals[0],
      backend,
      contextLength: positiveIntFlag('serve', '--ctx', values.ctx),
      threads: positiveIntFlag('serve', '--threads', values.threads),
      gpu: backend === 'webgpu' ? await cliGpu() : undefined,
      signal: io.signal,
    });
    try {
      const server = await createOpenAiServer(engine, {
        ...(values['api-key'] !== undefined ? { apiKey: values['api-key'] } : {}),
        ...(values.cors !== undefined ? { cors: values.cors } : {}),
        ...(values['max-body'] !== undefined
          ? { maxBodyBytes: positiveIntFlag('serve', '--max-body', values['max-body']) }
          : {}),
      });
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => resolve());
      });
      const addr = server.address();
      const shown = typeof addr === 'object' && addr ? `http://${host}:${addr.port}` : String(addr);
      io.err(
        `${engine.info.model.name || positionals[0]} on ${engine.info.backend.description}; OpenAI API at ${shown}/v1 (Ctrl-C stops)\n`,
      );
      await new Promise<void>((resolve) => {
        if (io.signal.aborted) resolve();
        io.signal.addEventListener('abort', () => resolve(), { once: true });
      });
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return 0;
    } finally {
      await engine.unload();
    }
  },
};
export default command;
