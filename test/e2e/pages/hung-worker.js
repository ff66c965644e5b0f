// A stand-in for webgguf's worker script (test/e2e/shared-worker.spec.ts): it answers Comlink's `load` call with an
// engine description, then hangs on `unload` in a busy loop, like a hung template render or kernel. While it lives
// it holds the Web Lock 'webgguf-test-hung-worker', so the page can tell when it has been terminated.
const INFO = {
  model: { name: 'hung', arch: 'llama', identity: 'test:hung', vocabSize: 4, trainContextLength: 8 },
  backend: { name: 'fake', description: 'fake', reason: 'requested' },
  contextLength: 8,
  slots: 1,
  ubatchSize: 8,
  chatTemplateHash: '0',
};
const alive = new Promise((held) =>
  navigator.locks.request('webgguf-test-hung-worker', () => {
    held();
    return new Promise(() => {});
  }),
);
addEventListener('message', (e) => {
  const { id, path } = e.data ?? {};
  if (path?.[0] === 'load') void alive.then(() => postMessage({ id, type: 'RAW', value: INFO }));
  else if (path?.[0] === 'unload') for (;;);
});
