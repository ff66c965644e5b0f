/**
 * The browser-free worker stand-ins the worker tests share: an engine over a fake model, MessageChannel pairs that
 * are closed after each test, a worker API exposed on one end of a channel, and a `Worker` class whose messages go
 * to such a channel.
 */
import * as Comlink from 'comlink';
import { afterEach } from 'vitest';
import { createChatMlFormatter } from '../../../src/api/chat-formatter.js';
import type { Engine } from '../../../src/api/engine.js';
import { createEngineFromParts } from '../../../src/api/local-engine.js';
import type { Transformer } from '../../../src/model/model.js';
import { createFakeTokenizer } from '../engine/fake-model.js';

/** A local engine over `transformer` with the fake tokenizer and ChatML, named `fake:<model>`. */
export function createFakeEngine(
  model: unknown,
  transformer: Transformer,
  contextLength: number,
  slots: number,
): Promise<Engine> {
  const tokenizer = createFakeTokenizer();
  return createEngineFromParts({
    transformer,
    tokenizer,
    chat: createChatMlFormatter(tokenizer),
    modelIdentity: `fake:${String(model)}`,
    backend: { name: 'fake', description: 'fake', reason: 'requested' },
    contextLength,
    slots,
  });
}

/** MessageChannel pairs of one test file, every port closed after each test (registers the afterEach). */
export function useChannels(): { pair(): MessageChannel; expose(api: unknown): MessagePort } {
  const ports: MessagePort[] = [];
  afterEach(() => {
    for (const p of ports.splice(0)) p.close();
  });
  const pair = (): MessageChannel => {
    const channel = new MessageChannel();
    ports.push(channel.port1, channel.port2);
    return channel;
  };
  return {
    pair,
    /** Exposes `api` with Comlink on a new channel's port1 and returns its port2, the "worker" side a client uses. */
    expose(api: unknown): MessagePort {
      const { port1, port2 } = pair();
      Comlink.expose(api, port1);
      return port2;
    },
  };
}

/** A stand-in for the `Worker` global whose messages go to `connect()`'s port; `terminate` calls `onTerminate`. */
export function fakeWorkerClass(
  connect: () => MessagePort,
  onTerminate: () => void,
): new (
  url?: string | URL,
) => object {
  return class FakeWorker {
    private readonly port = connect();
    postMessage(data: unknown, transfer?: Transferable[]): void {
      this.port.postMessage(data, transfer ?? []);
    }
    addEventListener(type: string, f: EventListenerOrEventListenerObject): void {
      this.port.addEventListener(type, f);
    }
    removeEventListener(type: string, f: EventListenerOrEventListenerObject): void {
      this.port.removeEventListener(type, f);
    }
    start(): void {
      this.port.start();
    }
    terminate(): void {
      onTerminate();
      this.port.close();
    }
  };
}
