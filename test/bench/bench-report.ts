/**
 * Turns the harness's runs into the report: medians per (runtime, threads), peer ratios against the issue-8 targets,
 * the decode roofline fraction, and the two human-readable renderings — a Markdown table and an SVG bar chart of
 * decode tok/s (with the bandwidth roofline drawn per thread count).
 */

import {
  median,
  round,
  type BandwidthResult,
  type BenchReport,
  type Ratio,
  type RunResult,
  type RuntimeId,
  type SummaryRow,
} from './bench-types.js';

/** Medians over rounds for each (runtime, threads), in first-seen order. */
export function summarize(
  runs: readonly RunResult[],
  bytesPerToken: number,
  bw: BandwidthResult | null,
  gpuGbPerS: number | null = null,
): SummaryRow[] {
  const groups = new Map<string, RunResult[]>();
  for (const r of runs) {
    const key = `${r.host ?? 'node'}|${r.runtime}|${r.threads}|${r.kv?.type ?? ''}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  return [...groups.values()].map((rs) => {
    const first = rs[0];
    const decode = rs.map((r) => r.decodeTokPerS);
    const prefill: Record<string, number> = {};
    for (const k of Object.keys(first.prefillTokPerS))
      prefill[k] = round(median(rs.map((r) => r.prefillTokPerS[k] ?? 0)));
    const dec = median(decode);
    const perCpuS = 1000 / median(rs.map((r) => r.decodeCpuMsPerToken));
    const isGpu = GPU_RUNTIMES.includes(first.runtime);
    const gb = isGpu ? (gpuGbPerS ?? undefined) : bw?.gbPerS[String(first.threads)];
    return {
      runtime: first.runtime,
      host: first.host ?? 'node',
      backend: first.backend,
      threads: first.threads,
      ...(first.kv ? { kv: first.kv } : {}),
      rounds: rs.length,
      loadMs: round(median(rs.map((r) => r.loadMs.total)), 0),
      prefillTokPerS: prefill,
      ttftMs: round(median(rs.map((r) => r.ttftMs)), 1),
      decodeTokPerS: round(dec, 2),
      decodeSpread: [round(Math.min(...decode), 2), round(Math.max(...decode), 2)],
      decodeTokPerCpuS: round(perCpuS, 2),
      roofline: gb ? round((bytesPerToken * dec) / (gb * 1e9), 3) : null,
      rooflineCpuTime: gb && !isGpu && first.threads === 1 ? round((bytesPerToken * perCpuS) / (gb * 1e9), 3) : null,
      peakRssMiB: round(median(rs.map((r) => r.memoryMiB.peakRss)), 0),
      breakdownMs: medianBreakdown(rs),
      breakdownSource: rs.find((r) => r.breakdownMs !== null)?.breakdownSource ?? null,
    };
  });
}

function medianBreakdown(rs: readonly RunResult[]): Record<string, number> | null {
  const withB = rs.filter((r) => r.breakdownMs !== null);
  if (withB.length === 0) return null;
  const out: Record<string, number> = {};
  for (const k of Object.keys(withB[0].breakdownMs ?? {}))
    out[k] = round(median(withB.map((r) => r.breakdownMs?.[k] ?? 0)), 3);
  return out;
}

const GPU_RUNTIMES: readonly RuntimeId[] = ['webgguf-webgpu', 'llama.cpp-vulkan', 'llama.cpp-cuda'];

/** Issue-8 targets for decode, ours ÷ peer (key 'ours/peer'). */
const TARGETS: Readonly<Record<string, number>> = { 'webgguf-wasm/llama.cpp-cpu': 0.8, 'webgguf-wasm/wllama': 1.2 };

/** Ours ÷ peer per metric and thread count, where both ran. */
export function computeRatios(rows: readonly SummaryRow[]): Ratio[] {
  const pairs: [RuntimeId, RuntimeId][] = [
    ['webgguf-wasm', 'llama.cpp-cpu'],
    ['webgguf-wasm', 'wllama'],
    ['webgguf-webgpu', 'wllama'],
    ['webgguf-webgpu', 'llama.cpp-vulkan'],
    ['webgguf-webgpu', 'llama.cpp-cuda'],
  ];
  const out: Ratio[] = [];
  for (const [ours, peer] of pairs) {
    for (const a of rows.filter((r) => r.runtime === ours)) {
      const host = peer === 'wllama' ? 'chromium' : 'node';
      // Our WebGPU runs once (no thread count): it is compared with every thread count the peer ran at.
      const anyThreads = ours === 'webgguf-webgpu';
      // Our WASM in Chromium (the product's host; its kernel build may differ from Node's) also against llama.cpp.
      const inBrowser = a.host === 'chromium' && host === 'node' && ours === 'webgguf-wasm';
      if (a.host !== host && !inBrowser) continue;
      const where = inBrowser ? ({ oursHost: 'chromium' } as const) : {};
      const peers = rows.filter(
        (r) => r.runtime === peer && r.host === host && (r.threads === a.threads || anyThreads),
      );
      for (const b of anyThreads ? peers : peers.slice(0, 1)) {
        const threads = anyThreads ? b.threads : a.threads;
        const target = TARGETS[`${ours}/${peer}`] ?? null;
        const ratio = round(a.decodeTokPerS / b.decodeTokPerS, 3);
        out.push({ metric: 'decode', threads, ours, ...where, peer, ratio, target });
        // The page has no process CPU clock (its "CPU" figures are wall time), so no CPU-time ratio from Chromium.
        if (peer === 'llama.cpp-cpu' && !inBrowser) {
          out.push({
            metric: 'decode-cpu-time',
            threads,
            ours,
            peer,
            ratio: round(a.decodeTokPerCpuS / b.decodeTokPerCpuS, 3),
            target: null,
          });
        }
        for (const [k, metric] of [
          ['128', 'prefill128'],
          ['512', 'prefill512'],
        ] as const) {
          const x = a.prefillTokPerS[k];
          const y = b.prefillTokPerS[k];
          if (x && y) out.push({ metric, threads, ours, ...where, peer, ratio: round(x / y, 3), target: null });
        }
      }
    }
  }
  return out;
}

/** The Markdown rendering (what BENCHMARKS.md quotes). */
export function toMarkdown(rep: BenchReport): string {
  const lens = rep.workload.promptLengths;
  const lines: string[] = [];
  lines.push(`### ${rep.model.shape} ${rep.model.quant} — ${rep.startedAt}`, '');
  lines.push(`Command: \`${rep.command}\``, '');
  lines.push(
    `Machine: ${rep.machine.cpus} × ${rep.machine.cpuModel}, ${rep.machine.totalMemGiB} GiB, Node ${rep.machine.node}. ` +
      `Model ${(rep.model.bytes / 2 ** 20).toFixed(0)} MiB, ${(rep.model.bytesPerToken / 2 ** 20).toFixed(0)} MiB read per decoded token. ` +
      `Load average during runs: ${loadRange(rep.runs)}.`,
    '',
  );
  if (rep.gpuBandwidthGbPerS) lines.push(`GPU bandwidth (given): ${rep.gpuBandwidthGbPerS} GB/s.`, '');
  if (rep.bandwidth) {
    const bw = Object.entries(rep.bandwidth.gbPerS)
      .map(([t, g]) => `${g} GB/s (${t} thr)`)
      .join(', ');
    lines.push(`WASM streaming-read bandwidth: ${bw} (load ${rep.bandwidth.loadAvg}).`, '');
  }
  lines.push(
    `| runtime | host | backend | thr | rounds | load ms | ${lens.map((n) => `prefill ${n} tok/s`).join(' | ')} | TTFT ${lens[0]} ms | decode tok/s (min–max) | decode tok/CPU-s | roofline (wall) | roofline (CPU time) | peak RSS MiB |`,
    `|---|---|---|---|---|---|${lens.map(() => '---|').join('')}---|---|---|---|---|---|`,
  );
  for (const r of rep.summary) {
    lines.push(
      `| ${r.runtime} | ${r.host} | ${r.backend} | ${r.threads} | ${r.rounds} | ${r.loadMs} | ${lens.map((n) => r.prefillTokPerS[String(n)] ?? '–').join(' | ')} | ` +
        `${r.ttftMs} | ${r.decodeTokPerS} (${r.decodeSpread[0]}–${r.decodeSpread[1]}) | ${r.decodeTokPerCpuS} | ${r.roofline === null ? '–' : `${(r.roofline * 100).toFixed(0)} %`} | ${pctOrDash(r.rooflineCpuTime)} | ${r.peakRssMiB} |`,
    );
  }
  if (rep.ratios.length) {
    lines.push('', '| ours ÷ peer | metric | threads | ratio | target |', '|---|---|---|---|---|');
    for (const q of rep.ratios) {
      const ok = q.target === null ? '' : q.ratio >= q.target ? ' ✔' : ' ✘';
      lines.push(
        `| ${q.ours}${q.oursHost ? ` (${q.oursHost})` : ''} ÷ ${q.peer}${q.peer === 'wllama' ? ' (chromium)' : ''} | ${q.metric} | ${q.threads} | ${q.ratio}×${ok} | ${q.target === null ? '–' : `≥ ${q.target}×`} |`,
      );
    }
    if (rep.ratios.some((q) => q.ours === 'webgguf-webgpu'))
      lines.push('', "WebGPU rows: threads = the peer's thread count (ours runs on the GPU).");
  }
  lines.push(...kvTypeLines(rep.summary));
  for (const c of rep.choices ?? []) {
    lines.push(
      '',
      `Batched choices (${c.host ?? 'node'}, ${c.backend}): n = ${c.n} aggregate decode ${c.batchedTokPerCpuS} tok/s vs n = 1 ${c.singleTokPerCpuS} ` +
        `tok/s per CPU second: ${c.ratio ?? '–'}× (wall time ${c.wallRatio ?? '–'}×; target ≥ 2.5×).`,
    );
  }
  const withB = rep.summary.filter((r) => r.breakdownMs);
  if (withB.length) {
    lines.push('', 'Decode step breakdown (ms per token, median over rounds; what each measures in brackets):', '');
    for (const r of withB) {
      const parts = Object.entries(r.breakdownMs ?? {})
        .map(([k, v]) => `${k} ${v}`)
        .join(', ');
      lines.push(`- ${r.runtime} (${r.host}) ×${r.threads} [${r.breakdownSource ?? 'unknown'}]: ${parts}`);
      const kernels = rep.runs
        .filter((x) => x.runtime === r.runtime && (x.host ?? 'node') === r.host && x.breakdownByKernelMs)
        .pop();
      if (kernels?.breakdownByKernelMs) {
        const top = Object.entries(kernels.breakdownByKernelMs)
          .slice(0, 8)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ');
        lines.push(`  - by kernel (GPU ms per token, last round): ${top}`);
      }
    }
  }
  const withP = rep.runs.filter((r) => r.prefillBreakdownMs);
  if (withP.length) {
    lines.push('', `Prefill breakdown of the ${lens[0]}-token prompt (ms for the whole prompt, last round):`, '');
    const last = new Map<string, RunResult>();
    for (const r of withP) last.set(`${r.host ?? 'node'} ${r.runtime} ×${r.threads}`, r);
    for (const [k, r] of last) {
      const parts = Object.entries(r.prefillBreakdownMs ?? {})
        .map(([kind, v]) => `${kind} ${round(v, 1)}`)
        .join(', ');
      lines.push(`- ${k} [${r.breakdownSource}]: ${parts}`);
    }
  }
  if (rep.errors.length) lines.push('', 'Not run / failed:', '', ...rep.errors.map((e) => `- ${e}`));
  return `${lines.join('\n')}\n`;
}

/**
 * Same-run ratios of our runs with several KV types (`--kv-type f16,q8_0`): each type's decode tok/s (wall and per
 * CPU-second) and KV bytes ÷ those of the first type run, per backend, host and thread count.
 */
function kvTypeLines(rows: readonly SummaryRow[]): string[] {
  const lines: string[] = [];
  for (const base of rows) {
    const same = rows.filter(
      (r) => r.kv && r.runtime === base.runtime && r.host === base.host && r.threads === base.threads,
    );
    if (same.length < 2 || same[0] !== base || !base.kv) continue;
    if (!lines.length)
      lines.push(
        '',
        `| KV type ÷ first | runtime | thr | decode tok/s | decode tok/CPU-s | KV bytes |`,
        '|---|---|---|---|---|---|',
      );
    for (const r of same.slice(1)) {
      lines.push(
        `| ${r.kv?.type} ÷ ${base.kv.type} | ${r.runtime} (${r.host}) | ${r.threads} | ${round(r.decodeTokPerS / base.decodeTokPerS, 3)}× | ` +
          `${round(r.decodeTokPerCpuS / base.decodeTokPerCpuS, 3)}× | ${round((r.kv?.bytes ?? 0) / base.kv.bytes, 3)}× |`,
      );
    }
  }
  return lines;
}

function pctOrDash(x: number | null): string {
  return x === null ? '–' : `${(x * 100).toFixed(0)} %`;
}

function loadRange(runs: readonly RunResult[]): string {
  const xs = runs.flatMap((r) => r.loadAvg);
  return xs.length ? `${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)}` : 'n/a';
}

const COLORS: Record<RuntimeId, string> = {
  'webgguf-wasm': '#2b7bb9',
  'webgguf-webgpu': '#7b4bb9',
  'webgguf-cpu': '#8aa0b4',
  'llama.cpp-cpu': '#d9822b',
  'llama.cpp-vulkan': '#b95b2b',
  'llama.cpp-cuda': '#8a3c1c',
  wllama: '#3c9a5f',
};

/** SVG bar chart of median decode tok/s per (runtime, threads), with a dashed roofline per thread count. */
export function toSvg(rep: BenchReport): string {
  const rows = rep.summary;
  const W = 720;
  const barH = 22;
  const left = 230;
  const top = 40;
  const H = top + rows.length * (barH + 8) + 40;
  const roof = (r: SummaryRow): number | null => (r.roofline ? r.decodeTokPerS / r.roofline : null);
  const maxV = Math.max(1e-9, ...rows.map((r) => r.decodeTokPerS), ...rows.map((r) => roof(r) ?? 0));
  const x = (v: number): number => left + (v / maxV) * (W - left - 60);
  const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="12">`,
    `<text x="10" y="20" font-size="14" font-weight="bold">${esc(`Decode tok/s — ${rep.model.shape} ${rep.model.quant} (${rep.startedAt.slice(0, 16)}Z)`)}</text>`,
  ];
  rows.forEach((r, i) => {
    const y = top + i * (barH + 8);
    const label = `${r.runtime}${r.host === 'chromium' ? ' (chromium)' : ''} ×${r.threads}`;
    parts.push(`<text x="${left - 8}" y="${y + 15}" text-anchor="end">${esc(label)}</text>`);
    parts.push(
      `<rect x="${left}" y="${y}" width="${(x(r.decodeTokPerS) - left).toFixed(1)}" height="${barH}" fill="${COLORS[r.runtime]}"/>`,
    );
    parts.push(`<text x="${x(r.decodeTokPerS) + 4}" y="${y + 15}">${r.decodeTokPerS}</text>`);
    const rf = roof(r);
    if (rf) {
      parts.push(
        `<line x1="${x(rf).toFixed(1)}" x2="${x(rf).toFixed(1)}" y1="${y - 2}" y2="${y + barH + 2}" stroke="#c00" stroke-dasharray="3,2"/>`,
      );
    }
  });
  parts.push(
    `<text x="10" y="${H - 12}" fill="#555">${esc('red dashes: bandwidth roofline (measured WASM read GB/s, or the given GPU GB/s, ÷ bytes per token)')}</text>`,
  );
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
