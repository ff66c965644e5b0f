#!/usr/bin/env node
// Builds a minimal llama.cpp chat-template renderer ("oracle") from the llama.cpp snapshot that node-llama-cpp
// ships (`llama/gitRelease.bundle`), without building ggml or llama-server: only llama.cpp's `common/` chat,
// Jinja and parser sources are compiled, and the few libllama/ggml symbols they reference (never called when no
// model is passed) are satisfied by generated abort() stubs.
//
// Usage: node scripts/templates/oracle-build.mjs [--cache DIR] [--bundle PATH]
//   DIR defaults to $WEBGGUF_CACHE/llcpp-templates or ~/.cache/webgguf/llcpp-templates.
//   PATH defaults to scripts/oracle/node_modules/node-llama-cpp/llama/gitRelease.bundle, else the bundle inside
//   `npm pack node-llama-cpp@3.22.1` extracted into DIR.
// Prints the path of the built executable. Everything it writes stays in the cache folder (never in git).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const args = process.argv.slice(2);
const opt = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};

export function cacheDir() {
  return resolve(
    opt('--cache') ?? join(process.env.WEBGGUF_CACHE ?? join(homedir(), '.cache', 'webgguf'), 'llcpp-templates'),
  );
}

const sh = (cmd, argv, cwd) => execFileSync(cmd, argv, { cwd, stdio: ['ignore', 'pipe', 'inherit'] }).toString();

/** Returns the llama.cpp source folder (checked out from the bundle once). */
export function ensureSource(cache) {
  const src = join(cache, 'src');
  if (existsSync(join(src, 'common', 'chat.cpp'))) return src;
  mkdirSync(cache, { recursive: true });
  let bundle = opt('--bundle') ?? join(root, 'scripts/oracle/node_modules/node-llama-cpp/llama/gitRelease.bundle');
  if (!existsSync(bundle)) {
    const packDir = join(cache, 'pack');
    mkdirSync(packDir, { recursive: true });
    bundle = join(packDir, 'package/llama/gitRelease.bundle');
    if (!existsSync(bundle)) {
      sh('npm', ['pack', 'node-llama-cpp@3.22.1', '--silent'], packDir);
      sh('tar', ['xzf', 'node-llama-cpp-3.22.1.tgz', 'package/llama/gitRelease.bundle'], packDir);
    }
  }
  sh('git', ['init', '-q', src]);
  sh('git', ['fetch', '-q', bundle, 'HEAD:rel'], src);
  sh('git', ['checkout', '-q', 'rel'], src);
  return src;
}

const DRIVER = String.raw`
// Renders chat templates the way llama-server's POST /apply-template does (oaicompat_chat_params_parse subset).
#include "chat.h"
#include "json.h"
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>
using json = common_json;

static std::string slurp(const std::string & p) { std::ifstream f(p, std::ios::binary); std::stringstream s; s << f.rdbuf(); return s.str(); }

static json render(const common_chat_templates * t, const json & body, bool default_thinking) {
    auto caps = common_chat_templates_get_caps(t);
    common_chat_templates_inputs in;
    in.messages = common_chat_msgs_parse_oaicompat(body.at("messages"));
    in.tools = common_chat_tools_parse_oaicompat(body.value("tools", json()));
    in.tool_choice = common_chat_tool_choice_parse_oaicompat(body.value("tool_choice", std::string("auto")));
    in.parallel_tool_calls = body.value("parallel_tool_calls", (bool) caps["supports_parallel_tool_calls"]);
    in.add_generation_prompt = body.value("add_generation_prompt", true);
    // llama-server's default --prefill-assistant: a trailing assistant message is continued
    if (!in.messages.empty() && in.messages.back().role == "assistant" && body.value("prefill_assistant", true)) {
        in.continue_final_message = COMMON_CHAT_CONTINUATION_AUTO;
        in.add_generation_prompt = false;
    }
    in.reasoning_format = COMMON_REASONING_FORMAT_DEEPSEEK;
    in.enable_thinking = default_thinking;
    json kw = body.value("chat_template_kwargs", json::object());
    for (const auto & item : kw.items()) {
        in.chat_template_kwargs[item.key()] = item.value().dump();
    }
    auto it = in.chat_template_kwargs.find("enable_thinking");
    if (it != in.chat_template_kwargs.end()) {
        if (it->second == "true") in.enable_thinking = true;
        else if (it->second == "false") in.enable_thinking = false;
    }
    auto p = common_chat_templates_apply(t, in);
    json r = json::object();
    r["prompt"] = p.prompt;
    return r;
}

int main(int argc, char ** argv) {
    // argv[1]: {"templates":[{"name","file","bos","eos","cases":[{"id","body"}]}]}
    if (argc < 2) { std::cerr << "usage: render-templates jobs.json" << std::endl; return 2; }
    json jobs = json::parse(slurp(argv[1]));
    json out = json::object();
    char date[64]; std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%d %b %Y", std::localtime(&now));
    out["date_string"] = std::string(date);
    json res = json::object();
    const json & list = jobs.at("templates");
    for (size_t i = 0; i < list.size(); i++) {
        const json & t = list.at(i);
        json tr = json::object();
        std::string name = t.at("name");
        common_chat_templates_ptr tmpls;
        try {
            tmpls = common_chat_templates_init(nullptr, slurp(t.at("file")), t.value("bos", ""), t.value("eos", ""));
        } catch (const std::exception & e) { tr["error"] = std::string("init: ") + e.what(); res[name] = tr; continue; }
        bool thinking = false;
        try { thinking = common_chat_templates_support_enable_thinking(tmpls.get()); } catch (const std::exception & e) { tr["thinking_probe_error"] = std::string(e.what()); }
        tr["supports_thinking"] = thinking;
        json caps = json::object();
        for (const auto & kv : common_chat_templates_get_caps(tmpls.get())) caps[kv.first] = kv.second;
        tr["caps"] = caps;
        json cases = json::object();
        const json & cl = t.at("cases");
        for (size_t k = 0; k < cl.size(); k++) {
            const json & c = cl.at(k);
            std::string id = c.at("id");
            try { cases[id] = render(tmpls.get(), c.at("body"), thinking); }
            catch (const std::exception & e) { json err = json::object(); err["error"] = std::string(e.what()); cases[id] = err; }
        }
        tr["cases"] = cases;
        res[name] = tr;
    }
    out["templates"] = res;
    std::cout << out.dump(1) << std::endl;
    return 0;
}
`;

/** Compiles the driver against llama.cpp's common/ sources; returns the executable's path. */
export function ensureDriver(cache, src) {
  const exe = join(cache, 'render-templates');
  if (existsSync(exe)) return exe;
  const obj = join(cache, 'obj');
  mkdirSync(obj, { recursive: true });
  writeFileSync(join(cache, 'driver.cpp'), DRIVER);
  const common = join(src, 'common');
  const files = [
    'chat.cpp', 'chat-auto-parser-generator.cpp', 'chat-auto-parser-helpers.cpp', 'chat-diff-analyzer.cpp',
    'chat-peg-parser.cpp', 'peg-parser.cpp', 'json-schema-to-grammar.cpp', 'json-schema.cpp', 'json.cpp',
    'log.cpp', 'unicode.cpp', 'common.cpp', 'trie.cpp',
    ...readdirSync(join(common, 'jinja')).filter((f) => f.endsWith('.cpp')).map((f) => `jinja/${f}`),
    ...readdirSync(join(common, 'parsers')).filter((f) => f.endsWith('.cpp')).map((f) => `parsers/${f}`),
  ].map((f) => join(common, f));
  files.push(join(cache, 'driver.cpp'));
  // build-info symbols
  writeFileSync(
    join(cache, 'build-info.cpp'),
    'int LLAMA_BUILD_NUMBER = 0; const char * LLAMA_COMMIT = "snapshot"; const char * LLAMA_COMPILER = "g++"; const char * LLAMA_BUILD_TARGET = "oracle";\n',
  );
  files.push(join(cache, 'build-info.cpp'));
  // ggml_abort (GGML_ASSERT) and the clock are the only ggml functions the renderer can reach
  writeFileSync(
    join(cache, 'ggml-stubs.cpp'),
    '#include <cstdio>\n#include <cstdlib>\n#include <chrono>\n#include <cstdint>\n' +
      'extern "C" void ggml_abort(const char * file, int line, const char * fmt, ...) { std::fprintf(stderr, "GGML_ASSERT %s:%d %s\\n", file, line, fmt); std::abort(); }\n' +
      'extern "C" int64_t ggml_time_us(void) { return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch()).count(); }\n',
  );
  files.push(join(cache, 'ggml-stubs.cpp'));
  const inc = ['common', 'include', 'ggml/include', 'vendor', 'vendor/nlohmann', 'tools/mtmd'].map((d) => `-I${join(src, d)}`);
  const flags = ['-std=c++17', '-O1', '-w', '-DNDEBUG', ...inc];
  const objs = files.map((f) => join(obj, f.replace(/[^A-Za-z0-9]+/g, '_') + '.o'));
  // sequential and niced: the build shares a small machine (about 2.5 min on 2 busy cores)
  files.forEach((f, i) => {
    if (existsSync(objs[i])) return;
    const p = spawnSync('nice', ['-n', '10', 'g++', ...flags, '-c', f, '-o', objs[i]], { stdio: 'inherit' });
    if (p.status !== 0) throw new Error(`compile failed: ${f}`);
  });
  return link(exe, objs);
}

function link(exe, objs) {
  // libllama / ggml / sampling symbols that common.cpp references are left unresolved: without a model none of them
  // is ever called (the renderer only needs the chat, Jinja and parser code).
  const r = spawnSync('g++', ['-no-pie', '-o', exe, ...objs, '-lpthread', '-Wl,--unresolved-symbols=ignore-all'], {
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(r.stderr);
  return exe;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const cache = cacheDir();
  const src = ensureSource(cache);
  console.log(ensureDriver(cache, src));
}
