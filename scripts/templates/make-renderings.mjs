#!/usr/bin/env node
// Regenerates the chat-template conformance corpus in test/fixtures/templates from llama.cpp itself:
//   corpus/<name>.jinja   the templates of the llama.cpp snapshot's models/templates (data, copied as is)
//   renderings.json.gz    llama.cpp's rendering of every template × conversation (scripts/templates/conversations.mjs),
//                         as POST /apply-template returns it, plus each template's probed caps and thinking support.
// Usage: node scripts/templates/make-renderings.mjs [--cache DIR] [--bundle PATH]
// Builds the renderer first when needed (scripts/templates/oracle-build.mjs; ~5 min on 2 cores, no ggml build).
import { execFileSync } from 'node:child_process';
import { gzipSync } from 'node:zlib';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheDir, ensureDriver, ensureSource } from './oracle-build.mjs';
import { CONVERSATIONS } from './conversations.mjs';
import { specialTokensFor } from './special-tokens.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const outDir = join(root, 'test/fixtures/templates');
const cache = cacheDir();
const src = ensureSource(cache);
const exe = ensureDriver(cache, src);

const corpus = join(outDir, 'corpus');
rmSync(corpus, { recursive: true, force: true });
mkdirSync(corpus, { recursive: true });
const templates = [];
for (const f of readdirSync(join(src, 'models/templates')).sort()) {
  if (!f.endsWith('.jinja')) continue;
  const name = f.slice(0, -'.jinja'.length);
  copyFileSync(join(src, 'models/templates', f), join(corpus, f));
  const text = readFileSync(join(corpus, f), 'utf8');
  const { bos, eos } = specialTokensFor(name, text);
  templates.push({
    name,
    file: join(corpus, f),
    bos,
    eos,
    cases: Object.entries(CONVERSATIONS).map(([id, body]) => ({ id, body })),
  });
}
const jobFile = join(cache, 'jobs.json');
writeFileSync(jobFile, JSON.stringify({ templates }));
const raw = execFileSync(exe, [jobFile], { env: { ...process.env, TZ: 'UTC' }, maxBuffer: 1 << 30 }).toString();
const result = JSON.parse(raw);
const snapshot = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: src }).toString().trim();
const doc = { llamaCppCommit: snapshot, dateString: result.date_string, timezone: 'UTC', templates: {} };
for (const t of templates) {
  const r = result.templates[t.name];
  doc.templates[t.name] = { bos: t.bos, eos: t.eos, ...r };
}
rmSync(join(outDir, 'renderings.json'), { force: true });
writeFileSync(join(outDir, 'renderings.json.gz'), gzipSync(`${JSON.stringify(doc, null, 1)}\n`, { level: 9 }));
let ok = 0;
let total = 0;
for (const t of Object.values(doc.templates)) {
  for (const c of Object.values(t.cases ?? {})) {
    total++;
    if (typeof c.prompt === 'string') ok++;
  }
}
console.log(`${templates.length} templates, ${total} renderings (${total - ok} llama.cpp errors) → ${join(outDir, 'renderings.json.gz')}`);
