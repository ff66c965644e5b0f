/**
 * Diagnostic of the Chromium cached-load bench (`WEBGGUF_BENCH_RSS_MAPS=1`, issue 20): where a renderer's resident
 * memory sits, by mapping (Linux `/proc/<pid>/smaps`). Anonymous mappings of 15 MiB and more are listed by size: the
 * WASM memory's accessible part is one (as large as the memory has grown), and each 16 MiB stored chunk read back is
 * one (a browser-made ArrayBuffer backing store is mapped on its own), so chunks still resident show as a count of
 * "anon 16 MiB" mappings; smaller ones are grouped. Sampled during a step, the sample with the most resident memory
 * is kept and reported against the same breakdown before the step.
 */

import { readFileSync } from 'node:fs';

/** Resident MiB by kind of mapping. */
type RssByKind = Record<string, number>;

const GiB = 2 ** 30;

/** The kind of a mapping from its size and name: what this diagnostic can tell apart. */
function kindOf(sizeBytes: number, name: string): string {
  if (name.startsWith('/')) return 'file';
  if (name.startsWith('[')) return name; // [heap], [stack], …
  if (sizeBytes >= 3.5 * GiB) return 'reservation ≥ 3.5 GiB';
  if (sizeBytes >= 15 * 2 ** 20) return `anon ${Math.round(sizeBytes / 2 ** 20)} MiB`;
  if (sizeBytes >= 2 ** 20) return 'anon 1–15 MiB';
  return 'anon < 1 MiB';
}

/** Resident MiB of `pid` by mapping kind (empty where /proc cannot tell). */
export function rssByKind(pid: number): RssByKind {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/smaps`, 'utf8');
  } catch {
    return {};
  }
  const out: RssByKind = {};
  let kind = '';
  for (const line of text.split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      kind = kindOf(Number.parseInt(head[2], 16) - Number.parseInt(head[1], 16), head[3]);
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) out[kind] = (out[kind] ?? 0) + Number(rss[1]) / 1024;
  }
  return out;
}

const total = (r: RssByKind): number => Object.values(r).reduce((a, b) => a + b, 0);

/**
 * Samples `pid`'s mappings every `everyMs` from now; the returned function stops and describes the peak sample — its
 * time, and per kind of mapping the resident MiB at the peak and the growth over `before` (kinds that grew, largest
 * first) — or returns null when no sample was above `before` by more than 30 MiB (a renderer that did not work).
 */
export function traceRssByKind(pid: number, before: RssByKind, everyMs = 50): () => string | null {
  const t0 = Date.now();
  let peak: RssByKind = before;
  let peakAt = 0;
  const timer = setInterval(() => {
    const now = rssByKind(pid);
    if (total(now) > total(peak)) [peak, peakAt] = [now, Date.now() - t0];
  }, everyMs);
  return () => {
    clearInterval(timer);
    if (total(peak) - total(before) <= 30) return null;
    const rows = Object.keys(peak)
      .map((k) => [k, peak[k], peak[k] - (before[k] ?? 0)] as const)
      .filter(([, , d]) => d >= 1)
      .sort((a, b) => b[2] - a[2])
      .map(([k, v, d]) => `${k} ${Math.round(v)} (+${Math.round(d)})`);
    return `peak at ${peakAt} ms, ${Math.round(total(peak))} MiB: ${rows.join('; ')}`;
  };
}
