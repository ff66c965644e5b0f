/**
 * Comlink transfer handlers shared by both sides of the worker boundary. Comlink's default "throw" handler keeps
 * only message, name and stack (comlink issue #594), so ours rebuilds `LlmError` with its `code` and `details`;
 * the "abort-signal" handler lets an `AbortSignal` cross as a `MessagePort` that carries the abort. Importing this
 * module registers both (idempotent); `worker.ts` and `client.ts` import it.
 */

import * as Comlink from 'comlink';
import { ERROR_CODES, LlmError, type ErrorCode, type ErrorDetails } from '../errors.js';

/** An error as it crosses the boundary. */
interface SerializedError {
  readonly message: string;
  readonly name: string;
  readonly stack?: string;
  readonly code?: ErrorCode;
  readonly details?: ErrorDetails;
  /** The cause's message, when there was one (causes are not cloned whole). */
  readonly cause?: string;
}

type SerializedThrow =
  | { readonly isError: true; readonly value: SerializedError }
  | { readonly isError: false; readonly value: unknown };

/** Turns any thrown value into cloneable data, keeping `LlmError`'s code and details. */
export function serializeError(value: unknown): SerializedThrow {
  if (!(value instanceof Error)) return { isError: false, value };
  const cause = (value as { cause?: unknown }).cause;
  const base: SerializedError = {
    message: value.message,
    name: value.name,
    stack: value.stack,
    cause: cause instanceof Error ? cause.message : cause === undefined ? undefined : String(cause),
  };
  if (value instanceof LlmError)
    return {
      isError: true,
      value: { ...base, code: value.code, details: value.details ? { ...value.details } : undefined },
    };
  return { isError: true, value: base };
}

/** Rebuilds the thrown value on the receiving side (an `LlmError` when it was one). */
export function deserializeError(s: SerializedThrow): unknown {
  if (!s.isError) return s.value;
  const v = s.value;
  if (v.code !== undefined && (ERROR_CODES as readonly string[]).includes(v.code)) {
    const e = new LlmError(v.code, v.message, { details: v.details, cause: v.cause });
    if (v.stack) e.stack = v.stack;
    return e;
  }
  const e = new Error(v.message, v.cause !== undefined ? { cause: v.cause } : undefined);
  e.name = v.name;
  if (v.stack) e.stack = v.stack;
  return e;
}

/** Lets a port not keep a Node process alive (no-op in browsers). */
function unref(port: MessagePort): void {
  (port as unknown as { unref?: () => void }).unref?.();
}

/** Carries an abort (with an `LlmError`-preserving reason) through a MessagePort. */
const abortSignalHandler: Comlink.TransferHandler<AbortSignal, MessagePort> = {
  canHandle: (v): v is AbortSignal => typeof AbortSignal !== 'undefined' && v instanceof AbortSignal,
  serialize(signal) {
    const { port1, port2 } = new MessageChannel();
    const send = (): void => {
      port1.postMessage(serializeError(signal.reason ?? new LlmError('aborted', 'request was aborted')));
      port1.close();
    };
    if (signal.aborted) send();
    else signal.addEventListener('abort', send, { once: true });
    unref(port1);
    return [port2, [port2]];
  },
  deserialize(port) {
    const controller = new AbortController();
    port.addEventListener('message', (e: MessageEvent) => {
      controller.abort(deserializeError(e.data as SerializedThrow));
      port.close();
    });
    port.start();
    unref(port);
    return controller.signal;
  },
};

let registered = false;

/** Registers the "throw" and "abort-signal" handlers with Comlink (once per realm). */
function registerTransferHandlers(): void {
  if (registered) return;
  registered = true;
  const original = Comlink.transferHandlers.get('throw');
  if (!original) throw new Error('comlink has no "throw" transfer handler to extend');
  const throwHandler: Comlink.TransferHandler<{ value: unknown }, SerializedThrow> = {
    // Comlink marks thrown values with a private symbol; its own handler knows how to recognise them.
    canHandle: (v): v is { value: unknown } => original.canHandle(v),
    serialize: ({ value }) => [serializeError(value), []],
    deserialize: (s) => {
      throw deserializeError(s);
    },
  };
  Comlink.transferHandlers.set('throw', throwHandler as Comlink.TransferHandler<unknown, unknown>);
  Comlink.transferHandlers.set('abort-signal', abortSignalHandler as Comlink.TransferHandler<unknown, unknown>);
}

registerTransferHandlers();
