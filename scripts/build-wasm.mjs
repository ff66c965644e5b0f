#!/usr/bin/env node
// Builds the AssemblyScript kernels (wasm/assembly/index.ts) eight ways into wasm/build/: scalar, simd128,
// relaxed-simd and relaxed-dot, each with an imported plain memory and as a shared-memory "threads" twin. The outputs are committed;
// CI reruns this and fails on any byte difference (`git diff --exit-code wasm/build`), so builds must be reproducible.
// Usage: npm run build:wasm   (node scripts/build-wasm.mjs [--check]: build to a temp dir and compare instead)
import asc from 'assemblyscript/asc';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const entry = 'wasm/assembly/index.ts';

/** Build variants: output name → extra asc flags (see docs: WASM-SIMD kernels). */
const FEATURES = {
  scalar: ['--use', 'DOT_ADD=0'],
  simd128: ['--enable', 'simd', '--use', 'DOT_ADD=0'],
  'relaxed-simd': ['--enable', 'simd', '--enable', 'relaxed-simd', '--use', 'DOT_ADD=0'],
  // The relaxed build with `i32x4.relaxed_dot_i8x16_i7x16_add_s` in the integer tiles (DOT_ADD = 1 in
  // wasm/assembly/simd-dot.ts): loaded only where the engine lowers it to one instruction (src/backend/wasm/dot-add-probe.ts).
  'relaxed-dot': ['--enable', 'simd', '--enable', 'relaxed-simd', '--use', 'DOT_ADD=1'],
};
/** Shared-memory twin: 65536 pages = the whole 4 GiB wasm32 space (the host may import a smaller maximum). */
const THREADS = ['--sharedMemory', '--maximumMemory', '65536', '--enable', 'threads'];
const COMMON = ['-O3', '--noAssert', '--runtime', 'stub', '--importMemory'];

/**
 * The host owns all of memory (its allocator starts at a fixed low address) and every helper thread instantiates the
 * module over the shared memory, so a data segment (e.g. a math lookup table) would be clobbered or rewritten.
 */
function assertNoDataSegment(bytes, file) {
  let p = 8;
  const leb = () => {
    let v = 0;
    let shift = 0;
    for (;;) {
      const b = bytes[p++];
      v += (b & 0x7f) * 2 ** shift;
      shift += 7;
      if (b < 0x80) return v;
    }
  };
  while (p < bytes.length) {
    const id = bytes[p++];
    const size = leb();
    if (id === 11 && size > 1)
      throw new Error(`${relative(root, file)} has a data segment: kernels must not use static data`);
    p += size;
  }
}

async function build(outDir) {
  await mkdir(outDir, { recursive: true });
  const outputs = [];
  for (const [name, features] of Object.entries(FEATURES)) {
    for (const threads of [false, true]) {
      const file = join(outDir, `kernels-${name}${threads ? '-threads' : ''}.wasm`);
      const argv = [entry, ...COMMON, ...features, ...(threads ? THREADS : []), '-o', relative(root, file)];
      let log = '';
      const { error } = await asc.main(argv, {
        stdout: { write: (s) => (log += s) },
        stderr: { write: (s) => (log += s) },
      });
      if (error) {
        process.stderr.write(log);
        throw new Error(`asc failed for ${relative(root, file)}: ${error.message}`);
      }
      assertNoDataSegment(await readFile(file), file);
      outputs.push(file);
    }
  }
  return outputs;
}

process.chdir(root);
if (process.argv.includes('--check')) {
  const tmp = await mkdtemp(join(tmpdir(), 'webgguf-wasm-'));
  try {
    const built = await build(tmp);
    let same = true;
    for (const f of built) {
      const committed = join(root, 'wasm/build', f.slice(tmp.length + 1));
      const a = await readFile(f);
      const b = await readFile(committed).catch(() => Buffer.alloc(0));
      if (!a.equals(b)) {
        same = false;
        console.error(`differs: ${relative(root, committed)}`);
      }
    }
    console.log(same ? 'wasm/build is up to date' : 'wasm/build is stale: run npm run build:wasm');
    process.exitCode = same ? 0 : 1;
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
} else {
  const built = await build(join(root, 'wasm/build'));
  for (const f of built) console.log(`built ${relative(root, f)} (${(await readFile(f)).length} bytes)`);
}
