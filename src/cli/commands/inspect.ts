/**
 * `webgguf inspect <path|url> [--json]`: reads only a GGUF file's header (local path through `NodeFileSource`, URL
 * through the HTTP range reader) and prints the architecture, hyper-parameters, tokenizer, chat-template presence,
 * the tensor table and totals — as text, or as one JSON object with `--json`.
 */

import {
  GGML_TYPES,
  type GgufFile,
  type GgufNumericArray,
  type GgufValue,
  isGgufArray,
  valueTypeName,
} from '../../gguf/index.js';
import { parseCommandLine, usageError } from '../cli-args.js';
import type { CliCommand, CliIo } from '../cli-io.js';
import { SplitByteSource } from '../../io/split-source.js';
import { openModelFile } from '../model-file.js';

const USAGE =
  'webgguf inspect <path|url> [--json]   print a GGUF header: architecture, hyper-parameters, tokenizer, tensors';
/** Metadata arrays longer than this are summarised in JSON (and text) output. */
const ARRAY_SUMMARY_THRESHOLD = 16;
/** Elements kept in a summarised array's `head`. */
const ARRAY_HEAD = 8;

/** A JSON-safe metadata value: bigint → number when exact, else decimal string; non-finite floats → string. */
type JsonValue = number | string | boolean | JsonValue[] | { type: string; length: number; head: JsonValue[] };

/** One row of the tensor table. */
interface TensorRow {
  name: string;
  type: string;
  shape: number[];
  offset: number;
  bytes: number;
  params: number;
}

/** The `--json` document. */
interface InspectReport {
  file: string;
  fileSize: number;
  /** The parts of a split model (`name-00001-of-0000N.gguf`), in order; the rest of the report is the merged view. */
  parts?: { name: string; size: number; tensors: number }[];
  version: number;
  alignment: number;
  tensorDataOffset: number;
  architecture: string | null;
  name: string | null;
  hyperParameters: Record<string, JsonValue>;
  tokenizer: {
    model: string | null;
    pre: string | null;
    vocabSize: number | null;
    mergesCount: number | null;
    hasChatTemplate: boolean;
  };
  metadataNote: string;
  metadata: Record<string, JsonValue>;
  metadataTypes: Record<string, string>;
  tensors: TensorRow[];
  totals: {
    tensors: number;
    params: number;
    bytes: number;
    perType: Record<string, { count: number; params: number; bytes: number }>;
  };
}

function jsonScalar(v: number | bigint | boolean | string): number | string | boolean {
  if (typeof v === 'bigint')
    return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString();
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
  return v;
}

/** Converts a value to JSON, summarising long arrays as `{ type, length, head }`. */
function toJson(v: GgufValue, typeName: string): JsonValue {
  if (!isGgufArray(v)) return jsonScalar(v);
  if (!Array.isArray(v)) {
    // A typed array (numbers, booleans as 0/1): summarise from its head without copying the whole of it.
    const isBool = typeName === 'ARRAY<BOOL>';
    const head = Array.from(
      v.subarray(0, v.length > ARRAY_SUMMARY_THRESHOLD ? ARRAY_HEAD : v.length) as ArrayLike<number | bigint>,
      (x) => (isBool ? x !== 0 : jsonScalar(x)),
    );
    return v.length > ARRAY_SUMMARY_THRESHOLD ? { type: typeName, length: v.length, head } : head;
  }
  const inner = typeName.startsWith('ARRAY<') ? typeName.slice(6, -1) : typeName;
  if (v.length > ARRAY_SUMMARY_THRESHOLD) {
    return { type: typeName, length: v.length, head: v.slice(0, ARRAY_HEAD).map((x) => toJson(x, inner)) };
  }
  return v.map((x) => toJson(x, inner));
}

/** Builds the report from a parsed header. */
export function buildInspectReport(file: GgufFile, fileName: string): InspectReport {
  const arch = safeString(file, 'general.architecture');
  const metadata: Record<string, JsonValue> = Object.create(null) as Record<string, JsonValue>;
  const metadataTypes: Record<string, string> = Object.create(null) as Record<string, string>;
  const hyperParameters: Record<string, JsonValue> = Object.create(null) as Record<string, JsonValue>;
  for (const key of Object.keys(file.metadata)) {
    const typeName = valueTypeName(file.metadataTypes[key]);
    metadataTypes[key] = typeName;
    metadata[key] = toJson(file.metadata[key], typeName);
    if (arch !== null && key.startsWith(`${arch}.`)) hyperParameters[key.slice(arch.length + 1)] = metadata[key];
  }
  const tensors: TensorRow[] = file.tensors.map((t) => ({
    name: t.name,
    type: GGML_TYPES.get(t.type)?.name ?? `type ${t.type}`,
    shape: [...t.shape],
    offset: t.offset,
    bytes: t.byteLength,
    params: t.nElements,
  }));
  const perType: InspectReport['totals']['perType'] = {};
  for (const t of tensors) {
    const e = (perType[t.type] ??= { count: 0, params: 0, bytes: 0 });
    e.count++;
    e.params += t.params;
    e.bytes += t.bytes;
  }
  const tokens = safeArray(file, 'tokenizer.ggml.tokens');
  const merges = safeArray(file, 'tokenizer.ggml.merges');
  return {
    file: fileName,
    fileSize: file.fileSize,
    version: file.version,
    alignment: file.alignment,
    tensorDataOffset: file.tensorDataOffset,
    architecture: arch,
    name: safeString(file, 'general.name'),
    hyperParameters,
    tokenizer: {
      model: safeString(file, 'tokenizer.ggml.model'),
      pre: safeString(file, 'tokenizer.ggml.pre'),
      vocabSize: tokens?.length ?? null,
      mergesCount: merges?.length ?? null,
      hasChatTemplate: typeof file.metadata['tokenizer.chat_template'] === 'string',
    },
    metadataNote: `metadata arrays longer than ${ARRAY_SUMMARY_THRESHOLD} elements are summarised as { type, length, head } (first ${ARRAY_HEAD} elements); 64-bit integers are numbers when exact, else decimal strings`,
    metadata,
    metadataTypes,
    tensors,
    totals: {
      tensors: tensors.length,
      params: tensors.reduce((n, t) => n + t.params, 0),
      bytes: tensors.reduce((n, t) => n + t.bytes, 0),
      perType,
    },
  };
}

/** A string key, or null when absent or not a string (inspect reports, it does not validate models). */
function safeString(file: GgufFile, key: string): string | null {
  const v = file.metadata[key];
  return typeof v === 'string' ? v : null;
}

function safeArray(file: GgufFile, key: string): readonly GgufValue[] | GgufNumericArray | undefined {
  const v = Object.hasOwn(file.metadata, key) ? file.metadata[key] : undefined;
  return v !== undefined && isGgufArray(v) ? v : undefined;
}

const int = (n: number): string => n.toLocaleString('en-US');

/** Shortest decimal that reads back as the same float32 (1e-5 rather than 0.000009999999747378752). */
function shortestF32(v: number): string {
  for (let p = 1; p <= 9; p++) {
    const s = v.toPrecision(p);
    if (Math.fround(Number(s)) === v) return String(Number(s));
  }
  return String(v);
}

/** One metadata value for a text line: strings quoted and shortened, arrays summarised, f32 shortest. */
function showValue(v: JsonValue, isF32: boolean, max = 72): string {
  if (typeof v === 'string') {
    const q = JSON.stringify(v);
    return q.length > max ? `${q.slice(0, max - 1)}…" (${int(v.length)} chars)` : q;
  }
  if (Array.isArray(v)) return `[${v.map((x) => showValue(x, isF32, 24)).join(', ')}]`;
  if (typeof v === 'object')
    return `${int(v.length)} elements: [${v.head.map((x) => showValue(x, isF32, 24)).join(', ')}, …]`;
  if (typeof v === 'number' && isF32 && Number.isFinite(v)) return shortestF32(v);
  return String(v);
}

const isF32 = (r: InspectReport, key: string): boolean => r.metadataTypes[key]?.includes('FLOAT32') ?? false;

function table(rows: string[][], rightAligned: Set<number>): string[] {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  return rows.map((r) =>
    r
      .map((cell, c) => (rightAligned.has(c) ? cell.padStart(widths[c]) : cell.padEnd(widths[c])))
      .join('  ')
      .trimEnd(),
  );
}

/** Renders the report as text. */
export function formatInspectText(r: InspectReport): string {
  const out: string[] = [];
  out.push(
    `file           ${r.file} (${int(r.fileSize)} bytes${r.parts !== undefined ? `, merged view of ${r.parts.length} split parts` : ''})`,
  );
  for (const [i, p] of (r.parts ?? []).entries()) {
    out.push(`  part ${i + 1}       ${p.name} (${int(p.size)} bytes, ${int(p.tensors)} tensors)`);
  }
  out.push(
    `gguf           version ${r.version}, alignment ${r.alignment}, tensor data at byte ${int(r.tensorDataOffset)}`,
  );
  out.push(`architecture   ${r.architecture ?? '(none)'}${r.name !== null ? `   name ${JSON.stringify(r.name)}` : ''}`);
  const hp = Object.entries(r.hyperParameters);
  if (hp.length > 0) {
    out.push('', `hyper-parameters (${r.architecture}.*)`);
    out.push(
      ...table(
        hp.map(([k, v]) => [`  ${k}`, showValue(v, isF32(r, `${r.architecture}.${k}`))]),
        new Set(),
      ),
    );
  }
  const t = r.tokenizer;
  out.push('', 'tokenizer');
  out.push(
    `  model ${t.model ?? '(none)'}, pre-tokenizer ${t.pre ?? '(none)'}, vocab ${t.vocabSize === null ? '(none)' : int(t.vocabSize)} tokens` +
      (t.mergesCount !== null ? `, ${int(t.mergesCount)} merges` : ''),
  );
  out.push(`  chat template ${t.hasChatTemplate ? 'present' : 'absent'}`);
  const other = Object.keys(r.metadata).filter((k) => !(r.architecture !== null && k.startsWith(`${r.architecture}.`)));
  if (other.length > 0) {
    out.push('', 'other metadata');
    out.push(
      ...table(
        other.map((k) => [`  ${k}`, r.metadataTypes[k], showValue(r.metadata[k], isF32(r, k))]),
        new Set(),
      ),
    );
  }
  out.push('', `tensors (${int(r.tensors.length)})`);
  if (r.tensors.length > 0) {
    const rows = [['  name', 'type', 'shape', 'offset', 'bytes']];
    for (const x of r.tensors)
      rows.push([`  ${x.name}`, x.type, `[${x.shape.join(', ')}]`, int(x.offset), int(x.bytes)]);
    out.push(...table(rows, new Set([3, 4])));
  }
  const totals = r.totals;
  out.push(
    '',
    `totals         ${int(totals.tensors)} tensors, ${int(totals.params)} parameters, ${int(totals.bytes)} bytes of tensor data`,
  );
  for (const [type, e] of Object.entries(totals.perType).sort((a, b) => b[1].bytes - a[1].bytes)) {
    out.push(
      `  ${type.padEnd(8)} ${int(e.count).padStart(5)} tensors  ${int(e.params).padStart(15)} params  ${int(e.bytes).padStart(15)} bytes`,
    );
  }
  return out.join('\n') + '\n';
}

function parseArgs(args: string[]): { target: string; json: boolean } {
  const { values, positionals } = parseCommandLine(args, { json: { type: 'boolean' } }, USAGE);
  if (positionals.length !== 1) {
    throw usageError(`expected one GGUF path or URL, got ${positionals.length}`, USAGE);
  }
  return { target: positionals[0], json: values.json === true };
}

const command: CliCommand = {
  name: 'inspect',
  usage: USAGE,
  async run(args: string[], io: CliIo): Promise<number> {
    const { target, json } = parseArgs(args);
    const file = await openModelFile(target, io.signal);
    await file.source.close?.();
    const report = buildInspectReport(file.gguf, target);
    if (file.source instanceof SplitByteSource) {
      report.parts = file.source.partInfo.map((p) => ({ name: p.name, size: p.size, tensors: p.tensorCount }));
    }
    io.out(json ? JSON.stringify(report, null, 2) + '\n' : formatInspectText(report));
    return 0;
  },
};
export default command;
