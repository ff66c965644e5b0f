/**
 * The WGSL minifier of the production builds: every shader under shaders/ keeps its exact token sequence (compared
 * with an independent comment stripper, read by a tokenizer that knows WGSL's two-character operators, so two symbols
 * fused by a dropped space show up), loses every comment, and nested block comments are handled.
 */

import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { minifyWgsl } from '../../../scripts/wgsl-minify.mjs';

const SHADERS = path.resolve(import.meta.dirname, '../../../shaders');

function wgslFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? wgslFiles(path.join(dir, e.name)) : e.name.endsWith('.wgsl') ? [path.join(dir, e.name)] : [],
  );
}

/** Tokens of WGSL text whose comments are already gone; two-character operators are one token. */
function tokens(text: string): string[] {
  return (
    text.match(/[A-Za-z_][A-Za-z0-9_]*|[0-9][0-9A-Za-z_.]*|->|--|\+\+|>>|<<|[=!<>]=|&&|\|\||[-+*/%&|^]=|\S/g) ?? []
  );
}

describe('minifyWgsl', () => {
  const files = wgslFiles(SHADERS);

  it('finds the shaders', () => {
    expect(files.length).toBeGreaterThan(20);
  });

  it.each(files.map((f) => [path.relative(SHADERS, f), f]))(
    '%s keeps its tokens and loses its comments',
    (_name, file) => {
      const src = readFileSync(file, 'utf8');
      const min = minifyWgsl(src);
      const stripped = src.replace(/\/\/[^\n]*|\/\*[\s\S]*?\*\//g, ' '); // whichever opens first (no nesting in shaders/)
      expect(tokens(min)).toEqual(tokens(stripped));
      expect(min).not.toMatch(/\/\/|\/\*/);
      expect(min.length).toBeLessThan(src.length);
    },
  );

  it('handles nested block comments and comment markers inside comments, and drops spaces that separate nothing', () => {
    const src = 'fn a() /* x /* y */ z */ -> f32 {\n  // c /* not open\n  return 1.0 / 2.0; // d\n}\n';
    expect(minifyWgsl(src)).toBe('fn a()->f32{return 1.0/2.0;}\n');
  });

  it('keeps a space between words and between symbols that would fuse into another operator', () => {
    const src =
      'var a : array<f32, 4> = x - -y;\nlet b = c >> 2u;\nlet d = e < < f;\nlet g = h & &i;\nx = y / /* c */ z;\n';
    expect(minifyWgsl(src)).toBe('var a:array<f32,4> =x- -y;let b=c>>2u;let d=e< <f;let g=h& &i;x=y/z;\n');
  });
});
