/**
 * No source file over 500 lines (issue 13): a file that grows past it holds more than one thing and is split, in
 * every part of the project — library, shaders, WASM kernels, demo, scripts and tests. Files come from `git ls-files`
 * when the checkout is a git repository (so untracked scratch files do not count), else from a walk of the folders.
 */

import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..', '..', '..');
const FOLDERS = ['src', 'shaders', 'wasm/assembly', 'demo', 'scripts', 'test'];
const SOURCE = /\.(ts|mts|mjs|js|wgsl|html|css)$/;
const MAX_LINES = 500;

function walk(dir: string, out: string[]): void {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else out.push(path.relative(ROOT, p));
  }
}

function sourceFiles(): string[] {
  let files: string[];
  try {
    files = execFileSync('git', ['ls-files', '--', ...FOLDERS], { cwd: ROOT, encoding: 'utf8' }).split('\n');
  } catch {
    files = [];
    for (const f of FOLDERS) walk(path.join(ROOT, f), files);
  }
  return files.filter((f) => SOURCE.test(f) && !f.includes('node_modules/'));
}

/** Lines of a file as an editor counts them (a trailing newline does not open a line). */
function lineCount(text: string): number {
  if (text === '') return 0;
  const n = text.split('\n').length;
  return text.endsWith('\n') ? n - 1 : n;
}

describe('source file size', () => {
  it('lists the project sources', () => {
    const files = sourceFiles();
    expect(files).toContain('src/model/transformer.ts');
    expect(files.some((f) => f.startsWith('shaders/') && f.endsWith('.wgsl'))).toBe(true);
  });

  it(`keeps every source file at or under ${MAX_LINES} lines`, () => {
    const over = sourceFiles()
      .map((f) => ({ file: f, lines: lineCount(readFileSync(path.join(ROOT, f), 'utf8')) }))
      .filter((f) => f.lines > MAX_LINES)
      .map((f) => `${f.file}: ${f.lines} lines`);
    expect(over).toEqual([]);
  });

  it('counts lines as an editor does', () => {
    expect(lineCount('')).toBe(0);
    expect(lineCount('a\n')).toBe(1);
    expect(lineCount('a\nb')).toBe(2);
  });
});
