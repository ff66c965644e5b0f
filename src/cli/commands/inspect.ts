/** `webgguf inspect` — placeholder until its issue lands. */
import { LlmError } from '../../errors.js';
import type { CliCommand } from '../cli-io.js';

const command: CliCommand = {
  name: 'inspect',
  usage: 'webgguf inspect (not yet available)',
  async run() {
    throw new LlmError('invalid-request', "'webgguf inspect' is not available in this build");
  },
};
export default command;
