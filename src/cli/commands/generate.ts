/** `webgguf generate` — placeholder until its issue lands. */
import { LlmError } from '../../errors.js';
import type { CliCommand } from '../cli-io.js';

const command: CliCommand = {
  name: 'generate',
  usage: 'webgguf generate (not yet available)',
  async run() {
    throw new LlmError('invalid-request', "'webgguf generate' is not available in this build");
  },
};
export default command;
