/**
 * What a CLI command gets: its arguments and where to write. Commands return an exit status and never call
 * `process.exit`, so they can be tested in-process.
 */

/** Output streams of a command (process.stdout/stderr in the real CLI, buffers in tests). */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  /** Aborted on SIGINT. */
  readonly signal: AbortSignal;
}

/** One `webgguf <name>` sub-command. */
export interface CliCommand {
  readonly name: string;
  /** One-line usage shown by `webgguf --help`. */
  readonly usage: string;
  run(args: string[], io: CliIo): Promise<number>;
}
