#!/usr/bin/env bash
# Packs what `scripts/device-bench.sh` needs on a GPU machine that has no package registry (this workplace's `device`
# machine): Node itself, Dawn for Node (npm `webgpu`, linux-x64 only), node-llama-cpp with its Vulkan build, the
# committed tree at HEAD with its CLI and script bundles built, and the GGUF fixtures the conformance run reads.
# Output: .devcarry/ (git-ignored via .git/info/exclude), each part xz-compressed, ~60 MiB. Usage: bash scripts/device-pack.sh
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="$ROOT/.devcarry"; SHARED="${SHARED:-$ROOT/../shared}"
mkdir -p "$OUT"
xzc() { xz -T2 -9 -c; }

# 1. Node (same version as here), unless already packed.
[ -s "$OUT/node.xz" ] || xzc < "$(command -v node)" > "$OUT/node.xz"

# 2. Dawn for Node, linux-x64 binaries only.
tar -C "$ROOT/node_modules" --exclude='webgpu/dist/darwin-*' --exclude='webgpu/dist/win32-*' \
  --exclude='webgpu/dist/linux-arm64' -cf - webgpu | xzc > "$OUT/webgpu.tar.xz"

# 3. llama.cpp through node-llama-cpp: its JS, dependencies and the prebuilt Vulkan build (no sources, no CPU-only,
#    CUDA or other platforms' builds).
if [ ! -s "$OUT/oracle.tar.xz" ]; then
  tar -C "$ROOT/scripts/oracle" --exclude='node_modules/@node-llama-cpp/linux-arm64' \
    --exclude='node_modules/@node-llama-cpp/linux-armv7l' --exclude='node_modules/@node-llama-cpp/linux-x64' \
    --exclude='node_modules/@node-llama-cpp/linux-x64-cuda' --exclude='node_modules/@node-llama-cpp/linux-x64-cuda-ext' \
    --exclude='node_modules/node-llama-cpp/llama/gitRelease.bundle' --exclude='node_modules/koffi' \
    --exclude='node_modules/@koromix' -cf - node_modules package.json | xzc > "$OUT/oracle.tar.xz"
fi

# 4. HEAD as committed (not the working tree), with dist/cli and dist/scripts built from it.
SNAP="$(mktemp -d)"
git -C "$ROOT" archive HEAD | tar -C "$SNAP" -xf -
ln -s "$ROOT/node_modules" "$SNAP/node_modules"
(cd "$SNAP" && node scripts/build.mjs cli >/dev/null && node scripts/bundle-scripts.mjs >/dev/null 2>&1)
rm "$SNAP/node_modules"
tar -C "$SNAP" -cf - . | xzc > "$OUT/snapshot.tar.xz"
git -C "$ROOT" rev-parse HEAD > "$OUT/snapshot.commit"
rm -rf "$SNAP"

# 5. Fixtures with llama.cpp references (quantized ones, stories260K, and llama3-f16: the synthetic-model template;
#    the other arch f16 files stay behind for size).
if [ ! -s "$OUT/models.tar.xz" ]; then
  (cd "$SHARED" && ls models/stories260K.* models/derived/* models/synthetic/* models/arch/*-q* models/arch/llama3-f16.* | grep -v 'synth-llama-256-f16' \
    | tar -cf - -T -) | xzc > "$OUT/models.tar.xz"
fi
du -ch "$OUT"/* | tail -1
