/** `webgguf conform` — placeholder until its issue lands. */
import { LlmError } from '../../errors.js';
import type { CliCommand } from '../cli-io.js';

const command: CliCommand = {
  name: 'conform',
  usage: 'webgguf conform (not yet available)',
  async run() {
    throw new LlmError('invalid-request', "'webgguf conform' is not available in this build");
  },
};
export default command;
