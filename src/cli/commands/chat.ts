/** `webgguf chat` — placeholder until its issue lands. */
import { LlmError } from '../../errors.js';
import type { CliCommand } from '../cli-io.js';

const command: CliCommand = {
  name: 'chat',
  usage: 'webgguf chat (not yet available)',
  async run() {
    throw new LlmError('invalid-request', "'webgguf chat' is not available in this build");
  },
};
export default command;
