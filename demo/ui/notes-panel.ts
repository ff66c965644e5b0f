/**
 * The "Search your notes" sidebar panel: loads the catalogue's embedding model in its own dedicated worker (apart
 * from the chat model; the download goes through the same model store, so it works offline afterwards), embeds the
 * pasted notes and a query, and lists the notes by similarity (notes-search.ts).
 */
import { createWorkerEngine, type Engine } from '../../src/index';
import { EMBEDDING_MODEL, formatBytes } from './catalogue';
import { searchNotes, splitNotes } from './notes-search';

/** The panel's elements (ids in index.html). */
export interface NotesPanelElements {
  readonly load: HTMLButtonElement;
  readonly status: HTMLElement;
  readonly notes: HTMLTextAreaElement;
  readonly query: HTMLInputElement;
  readonly search: HTMLButtonElement;
  readonly results: HTMLOListElement;
}

/** Wires the panel; `onError` shows a failure the way the rest of the demo does. */
export function wireNotesPanel(el: NotesPanelElements, onError: (e: unknown) => void): void {
  let engine: Engine | null = null;
  el.load.textContent = `Load ${EMBEDDING_MODEL.label} (${formatBytes(EMBEDDING_MODEL.bytes)})`;
  el.search.disabled = true;
  el.load.addEventListener('click', () => {
    el.load.disabled = true;
    el.status.textContent = 'Loading…';
    void createWorkerEngine({
      model: EMBEDDING_MODEL.url,
      onProgress: (p) => {
        if (p.totalBytes > 0)
          el.status.textContent = `${p.phase} ${Math.round((100 * p.loadedBytes) / p.totalBytes)} %`;
      },
    })
      .then((e) => {
        engine = e;
        el.status.textContent = `${EMBEDDING_MODEL.label} ready on ${e.info.backend.name}.`;
        el.search.disabled = false;
      })
      .catch((e: unknown) => {
        el.load.disabled = false;
        el.status.textContent = '';
        onError(e);
      });
  });
  el.search.addEventListener('click', () => {
    const notes = splitNotes(el.notes.value);
    const query = el.query.value.trim();
    if (!engine || notes.length === 0 || query.length === 0) return;
    el.search.disabled = true;
    void searchNotes(engine, EMBEDDING_MODEL.format, notes, query)
      .then((hits) => {
        el.results.replaceChildren(
          ...hits.map((h) => {
            const li = document.createElement('li');
            li.textContent = `${h.score.toFixed(3)} — ${h.text}`;
            return li;
          }),
        );
      })
      .catch(onError)
      .finally(() => {
        el.search.disabled = false;
      });
  });
}
