/**
 * The vision half of an `mmproj` GGUF (llama.cpp's `tools/mtmd`, `clip.cpp` `load_hparams`): the `clip.*` and
 * `clip.vision.*` keys read into a typed `VisionConfig` through the project's one `MetadataReader` — every bad or
 * missing value `gguf-invalid` naming its key, a projector this runtime cannot run `unsupported-arch` listing the
 * ones it can. Per-projector defaults (merge factor, resize algorithm) are data in `PROJECTORS`.
 */

import { LlmError } from '../errors.js';
import { MetadataReader } from '../gguf/metadata-reader.js';
import type { GgufValue } from '../gguf/types.js';

/** How an image is resized to the encoder's input (llama.cpp `resize_algo`, Pillow-compatible). */
export type ResizeAlgorithm = 'bilinear' | 'bicubic' | 'lanczos';

/** The activation of the encoder's MLP (`clip.use_gelu` / `clip.use_silu`, else quick-GELU). */
type VisionFfnActivation = 'gelu' | 'silu' | 'gelu-quick';

/**
 * How an image becomes encoder inputs (llama.cpp `mtmd_image_preprocessor_*`): `fixed` — one `imageSize`² picture,
 * aspect kept, centred on black (gemma3); `idefics3` — resized so its longest side is `longestEdge`, cut into
 * `imageSize`² tiles, plus the whole image squeezed to one tile (the overview), each tile encoded alone; `lfm2` —
 * dynamic resolution: resized to whole merged patches within `tokenLimits`, large images also tiled (512²);
 * `dynamic` — the same size rule, one picture fitted (aspect kept, black padding) to it (pixtral).
 */
type Preprocessor = 'fixed' | 'idefics3' | 'lfm2' | 'dynamic';

/**
 * The prompt text around the tiles of a tiled image (llama.cpp `mtmd.cpp` slice templates): `tileStart` is text
 * (special tokens parsed) with `{row}` / `{col}` counted from 1; the other entries are single vocabulary tokens looked
 * up by their exact text (mtmd `lookup_token`).
 */
interface TileMarkers {
  readonly tileStart: string;
  /** After each row of tiles but the last. */
  readonly rowEnd: readonly string[];
  readonly overviewStart: readonly string[];
  readonly overviewEnd: readonly string[];
}

/** What a projector type fixes beyond the file's keys (llama.cpp hard-codes these per projector). */
interface ProjectorFacts {
  readonly preprocessor: Preprocessor;
  /** Markers around the tiles, for tiled preprocessors. */
  readonly tiles?: TileMarkers;
  /** Dynamic resolution: the fewest and most output tokens of one picture (llama.cpp `set_limit_image_tokens`). */
  readonly tokenLimits?: readonly [number, number];
  /** RGB of the padding around a fitted image (default black). */
  readonly padColor?: readonly [number, number, number];
  /** The key of the merge factor when not `clip.vision.projector.scale_factor` (pixtral: spatial_merge_size). */
  readonly mergeKey?: string;
  /** Positions by 2-D RoPE (base) instead of a learned table (pixtral). */
  readonly rope2dTheta?: number;
  /** Text widths for which the image rows are decoded causally after all (gemma4v: E2B 1536, E4B 2560). */
  readonly causalForTextWidths?: readonly number[];
  /** The text model places the image at M-RoPE grid positions; the ViT has window attention (`clip.vision.n_wa_pattern`). */
  readonly mrope?: boolean;
  /** Patches merged per side after the ViT (gemma3: 4×4 average pooling); `clip.vision.projector.scale_factor` overrides. */
  readonly defaultMerge: number;
  readonly resize: ResizeAlgorithm;
  /** Text inserted before/after the image's embeddings in the prompt (llama.cpp `mtmd.cpp` `img_beg`/`img_end`). */
  readonly imageBegin: string;
  readonly imageEnd: string;
  /** The language model decodes the image's rows non-causally (llama.cpp `mtmd_decode_use_non_causal`). */
  readonly nonCausal: boolean;
}

/** Projector types this runtime runs, keyed by `clip.projector_type`. */
const PROJECTORS: Readonly<Record<string, ProjectorFacts>> = {
  gemma3: {
    preprocessor: 'fixed',
    defaultMerge: 4,
    resize: 'bilinear',
    imageBegin: '<start_of_image>',
    imageEnd: '<end_of_image>',
    nonCausal: true,
  },
  // SmolVLM / Idefics3: SigLIP, pixel shuffle, one linear layer; tiles + overview (mtmd `MTMD_SLICE_TMPL_IDEFICS3`).
  idefics3: {
    preprocessor: 'idefics3',
    defaultMerge: 1,
    resize: 'lanczos',
    imageBegin: '',
    imageEnd: '',
    nonCausal: false,
    tiles: {
      tileStart: '<fake_token_around_image><row_{row}_col_{col}>',
      rowEnd: ['\n'],
      overviewStart: ['\n\n', '<fake_token_around_image>', '<global-img>'],
      overviewEnd: ['<fake_token_around_image>'],
    },
  },
  // LFM2-VL: SigLIP2 at dynamic resolution, pixel unshuffle, LayerNorm + MLP (mtmd `MTMD_SLICE_TMPL_LFM2`).
  lfm2: {
    preprocessor: 'lfm2',
    defaultMerge: 1,
    resize: 'bilinear',
    imageBegin: '<|image_start|>',
    imageEnd: '<|image_end|>',
    nonCausal: false,
    tiles: {
      tileStart: '<|img_row_{row}_col_{col}|>',
      rowEnd: [],
      overviewStart: ['<|img_thumbnail|>'],
      overviewEnd: [],
    },
    tokenLimits: [64, 256],
  },
  // LLaVA-1.5: CLIP ViT (all blocks but the last) + two-layer MLP; one fixed-size picture padded with the mean colour.
  mlp: {
    preprocessor: 'fixed',
    defaultMerge: 1,
    resize: 'bicubic',
    imageBegin: '',
    imageEnd: '',
    nonCausal: false,
    padColor: [122, 116, 104],
  },
  // MobileVLM: the llava CLIP trunk + the LDP projector (MobileNet blocks over the 24×24 grid → 144 tokens).
  ldp: {
    preprocessor: 'fixed',
    defaultMerge: 1,
    resize: 'bicubic',
    imageBegin: '',
    imageEnd: '',
    nonCausal: false,
    padColor: [122, 116, 104],
  },
  // Pixtral / Mistral Small 3.1 (mistral3): RMSNorm ViT with 2-D RoPE and a gated SiLU MLP at dynamic resolution,
  // an optional patch merger, a GELU MLP; [IMG_BREAK] rows after each row of tokens but the last, then [IMG_END].
  pixtral: {
    preprocessor: 'dynamic',
    defaultMerge: 1,
    resize: 'bicubic',
    imageBegin: '',
    imageEnd: '[IMG_END]',
    nonCausal: false,
    tokenLimits: [8, 1024],
    mergeKey: 'clip.vision.spatial_merge_size',
    rope2dTheta: 10000,
  },
  // Gemma 4 vision: RMSNorm ViT with per-head Q/K norms, 2-D NeoX RoPE and x/y position tables, merge² average
  // pooling, RMSNorm + projection; dynamic resolution between <|image> … <image|> (mtmd `clip_graph_gemma4v`).
  gemma4v: {
    preprocessor: 'dynamic',
    defaultMerge: 3,
    resize: 'bicubic',
    imageBegin: '<|image>',
    imageEnd: '<image|>',
    nonCausal: true,
    tokenLimits: [70, 1120],
    rope2dTheta: 100,
    causalForTextWidths: [1536, 2560],
  },
  // Qwen2.5-VL: RMSNorm ViT with two temporal patch kernels, 2-D M-RoPE, window attention but on every
  // n_wa_pattern-th block, gated SiLU FFNs; 2×2 patches merged by RMSNorm + GELU MLP (mtmd `clip_graph_qwen2vl`).
  'qwen2.5vl_merger': {
    preprocessor: 'dynamic',
    defaultMerge: 2,
    resize: 'bicubic',
    imageBegin: '<|vision_start|>',
    imageEnd: '<|vision_end|>',
    nonCausal: false,
    tokenLimits: [8, 4096],
    mergeKey: 'clip.vision.spatial_merge_size',
    rope2dTheta: 10000,
    mrope: true,
  },
  // Qwen3-VL: LayerNorm ViT with fused QKV, a learned position table resized (bilinear, corners aligned) to the
  // picture, 2-D M-RoPE, full attention; the 2×2 merger plus deepstack mergers after some blocks, whose outputs are
  // concatenated to each token's row (mtmd `clip_graph_qwen3vl`).
  qwen3vl_merger: {
    preprocessor: 'dynamic',
    defaultMerge: 2,
    resize: 'bicubic',
    imageBegin: '<|vision_start|>',
    imageEnd: '<|vision_end|>',
    nonCausal: false,
    tokenLimits: [8, 4096],
    mergeKey: 'clip.vision.spatial_merge_size',
    mrope: true,
  },
};

/** The projector types `readVisionConfig` accepts. */
export const SUPPORTED_PROJECTORS: readonly string[] = Object.keys(PROJECTORS);

/** Bounds that keep a hostile file from sizing huge allocations; real encoders are far inside them. */
const LIMITS = {
  /** SigLIP-so400m: 1152; the largest published ViTs (InternViT-6B) 3200. */
  maxEmbd: 16384,
  maxLayers: 256,
  maxHeads: 256,
  maxFfn: 65536,
  /** gemma3: 896; the largest fixed-size encoders are ~1–2k pixels a side. */
  maxImageSize: 8192,
  maxPatchSize: 64,
  maxMerge: 16,
} as const;

/** The vision encoder and projector of an mmproj file. */
export interface VisionConfig {
  /** `clip.projector_type` (or `clip.vision.projector_type` in mixed-modality files). */
  readonly projector: string;
  /** Side of the square image the encoder takes (`clip.vision.image_size`), in pixels. */
  readonly imageSize: number;
  /** Side of one patch (`clip.vision.patch_size`), in pixels; it divides `imageSize`. */
  readonly patchSize: number;
  /** Width of the ViT's hidden state (`clip.vision.embedding_length`). */
  readonly nEmbd: number;
  /** `clip.vision.feed_forward_length`. */
  readonly nFf: number;
  /** `clip.vision.block_count`. */
  readonly nLayers: number;
  /** `clip.vision.attention.head_count`. */
  readonly nHeads: number;
  /** `clip.vision.attention.head_dim`, else nEmbd / nHeads. */
  readonly headDim: number;
  /** `clip.vision.attention.layer_norm_epsilon`. */
  readonly eps: number;
  /** `clip.vision.projection_dim` as stored (informational; the output width comes from the projection tensor). */
  readonly projectionDim: number;
  /** Per-channel RGB mean and std applied after scaling pixels to [0, 1] (f32 values as stored). */
  readonly imageMean: readonly [number, number, number];
  readonly imageStd: readonly [number, number, number];
  readonly ffn: VisionFfnActivation;
  /** Patches merged per side by the projector. */
  readonly merge: number;
  readonly resize: ResizeAlgorithm;
  readonly imageBegin: string;
  readonly imageEnd: string;
  /** Image rows are decoded non-causally by the language model. */
  readonly nonCausal: boolean;
  readonly preprocessor: Preprocessor;
  /** `clip.vision.preproc_image_size`: the longest side a tiled image is resized to (0: absent). */
  readonly longestEdge: number;
  readonly tiles?: TileMarkers;
  /** Dynamic resolution: [min, max] output tokens of one picture; [0, 0] for the others. */
  readonly tokenLimits: readonly [number, number];
  /** RGB of the padding around a fitted image. */
  readonly padColor: readonly [number, number, number];
  /** 2-D RoPE base of the ViT's attention (pixtral, gemma4v); 0: a learned position table. */
  readonly rope2dTheta: number;
  /** Text widths for which `nonCausal` does not hold (mtmd `mtmd_decode_use_non_causal`). */
  readonly causalForTextWidths: readonly number[];
  /** Qwen2.5-VL: full attention on every `windowPattern`-th block, 112-pixel windows on the others (0: none). */
  readonly windowPattern?: number;
  /** The image's token grid goes with its rows (M-RoPE text models place them by it). */
  readonly mrope?: boolean;
  /** `clip.vision.feature_layer`: hidden states a llava projector concatenates (`llava-features.ts`); empty: none. */
  readonly featureLayers: readonly number[];
}

/** Reads three f32 channel values of `key` (llama.cpp demands at least 3, stored as an f32 array). */
function channels(
  r: MetadataReader,
  meta: Readonly<Record<string, GgufValue>>,
  key: string,
  nonZero: boolean,
): [number, number, number] {
  if (meta[key] !== undefined && !(meta[key] instanceof Float32Array)) {
    throw new LlmError(
      'gguf-invalid',
      `reading vision config: '${key}' must be an array of f32 (llama.cpp reads no other type)`,
      {
        details: { key },
      },
    );
  }
  const v = r.optionalNumbers(key);
  if (v === undefined || v.length < 3) {
    throw new LlmError(
      'gguf-invalid',
      `reading vision config: '${key}' must hold at least 3 values (R, G, B), found ${v === undefined ? 'none' : v.length}`,
      { details: { key } },
    );
  }
  const out: [number, number, number] = [Math.fround(v[0]), Math.fround(v[1]), Math.fround(v[2])];
  for (const x of out) {
    if (!Number.isFinite(x) || (nonZero && x === 0)) {
      throw new LlmError(
        'gguf-invalid',
        `reading vision config: '${key}' holds ${x}, not a finite${nonZero ? ' non-zero' : ''} number`,
        {
          details: { key },
        },
      );
    }
  }
  return out;
}

/** The projector type named by the file, or `gguf-invalid` when it names none. */
function projectorType(r: MetadataReader): string {
  const main = r.optionalString('clip.projector_type');
  const type = main !== undefined && main !== '' ? main : r.optionalString('clip.vision.projector_type');
  if (type === undefined || type === '') {
    throw new LlmError(
      'gguf-invalid',
      "reading vision config: metadata key 'clip.projector_type' is missing; this is not an mmproj file",
      { details: { key: 'clip.projector_type' } },
    );
  }
  return type;
}

/** Reads the vision config of an mmproj file's metadata. */
export function readVisionConfig(meta: Readonly<Record<string, GgufValue>>): VisionConfig {
  const r = new MetadataReader(meta, { code: 'gguf-invalid', context: 'reading vision config' }, 'clip.vision');
  if (r.optionalBool('clip.has_vision_encoder') === false) {
    throw new LlmError('gguf-invalid', "reading vision config: 'clip.has_vision_encoder' is false; no vision encoder", {
      details: { key: 'clip.has_vision_encoder' },
    });
  }
  const projector = projectorType(r);
  const facts = Object.hasOwn(PROJECTORS, projector) ? PROJECTORS[projector] : undefined;
  if (facts === undefined) {
    throw new LlmError(
      'unsupported-arch',
      `mmproj projector type '${projector}' is not supported; supported: ${SUPPORTED_PROJECTORS.join(', ')}`,
      { details: { projector, supported: SUPPORTED_PROJECTORS } },
    );
  }
  if (r.has('clip.vision.image_grid_pinpoints')) {
    throw new LlmError(
      'unsupported-arch',
      "reading vision config: 'clip.vision.image_grid_pinpoints' (LLaVA-1.6 any-resolution slicing) is not supported",
      { details: { key: 'clip.vision.image_grid_pinpoints', projector } },
    );
  }
  const k = (s: string) => r.archKey(s);
  const nEmbd = r.boundedCount(k('embedding_length'), undefined, 1, LIMITS.maxEmbd, 'maxEmbd');
  const nHeads = r.boundedCount(k('attention.head_count'), undefined, 1, LIMITS.maxHeads, 'maxHeads');
  const headDim = r.has(k('attention.head_dim'))
    ? r.boundedCount(k('attention.head_dim'), undefined, 1, LIMITS.maxEmbd, 'maxEmbd')
    : nEmbd / nHeads;
  if (!Number.isInteger(headDim) || headDim * nHeads !== nEmbd) {
    throw new LlmError(
      'gguf-invalid',
      `reading vision config: '${k('embedding_length')}' (${nEmbd}) is not '${k('attention.head_count')}' (${nHeads}) × head size ${headDim}`,
      { details: { key: k('attention.head_count'), nEmbd, nHeads } },
    );
  }
  const imageSize = r.boundedCount('clip.vision.image_size', undefined, 1, LIMITS.maxImageSize, 'maxImageSize');
  const patchSize = r.boundedCount('clip.vision.patch_size', undefined, 1, LIMITS.maxPatchSize, 'maxPatchSize');
  const merge = r.boundedCount(
    facts.mergeKey ?? 'clip.vision.projector.scale_factor',
    facts.defaultMerge,
    1,
    LIMITS.maxMerge,
    'maxMerge',
  );
  // Dynamic-resolution encoders size pictures themselves (gemma4v files state an unused 224).
  const fixedSize = facts.preprocessor === 'fixed' || facts.preprocessor === 'idefics3';
  if (fixedSize && imageSize % (patchSize * merge) !== 0) {
    throw new LlmError(
      'gguf-invalid',
      `reading vision config: 'clip.vision.image_size' ${imageSize} is not a multiple of patch size ${patchSize} × merge ${merge}`,
      { details: { key: 'clip.vision.image_size', imageSize, patchSize, merge } },
    );
  }
  const gelu = r.optionalBool('clip.use_gelu') ?? false;
  const silu = r.optionalBool('clip.use_silu') ?? false;
  if (gelu && silu) {
    throw new LlmError('gguf-invalid', "reading vision config: both 'clip.use_gelu' and 'clip.use_silu' are set", {
      details: { key: 'clip.use_silu' },
    });
  }
  const nLayers = r.boundedCount(k('block_count'), undefined, 1, LIMITS.maxLayers, 'maxLayers');
  return {
    projector,
    imageSize,
    patchSize,
    nEmbd,
    nFf: r.boundedCount(k('feed_forward_length'), undefined, 1, LIMITS.maxFfn, 'maxFfn'),
    nLayers,
    nHeads,
    headDim,
    eps: Math.fround(
      r.finite(
        k('attention.layer_norm_epsilon'),
        undefined,
        { min: 0, exclusiveMin: true, max: 1 },
        'layer norm epsilon',
      ),
    ),
    projectionDim: r.count(k('projection_dim'), 0),
    imageMean: channels(r, meta, 'clip.vision.image_mean', false),
    imageStd: channels(r, meta, 'clip.vision.image_std', true),
    ffn: gelu ? 'gelu' : silu ? 'silu' : 'gelu-quick',
    merge,
    resize: facts.resize,
    imageBegin: facts.imageBegin,
    imageEnd: facts.imageEnd,
    nonCausal: facts.nonCausal,
    preprocessor: facts.preprocessor,
    longestEdge: tiledLongestEdge(r, facts),
    ...(facts.tiles ? { tiles: facts.tiles } : {}),
    tokenLimits: facts.tokenLimits ?? [0, 0],
    padColor: facts.padColor ?? [0, 0, 0],
    rope2dTheta: facts.rope2dTheta ?? 0,
    causalForTextWidths: facts.causalForTextWidths ?? [],
    ...(facts.mrope ? { mrope: true, windowPattern: readWindowPattern(r, projector, headDim, merge) } : {}),
    featureLayers: readFeatureLayers(r, nLayers),
  };
}

/** `clip.vision.feature_layer` (optional): integer layer indices, none past the block count (as llama.cpp). */
function readFeatureLayers(r: MetadataReader, nLayers: number): number[] {
  const key = 'clip.vision.feature_layer';
  const v = r.optionalNumbers(key);
  if (v === undefined) return [];
  const layers = Array.from(v);
  for (const l of layers) {
    if (!Number.isInteger(l) || l > nLayers) {
      throw new LlmError(
        'gguf-invalid',
        `reading vision config: '${key}' holds ${l}, not a layer index within the ${nLayers} blocks`,
        { details: { key, layer: l, nLayers } },
      );
    }
  }
  return layers;
}

/**
 * Qwen2.5-VL's `clip.vision.n_wa_pattern` (required, as llama.cpp); its graph also fixes a 2×2 merge and splits each
 * head into four rope sections, so another merge or a head size not divisible by 4 is `gguf-invalid`.
 */
function readWindowPattern(r: MetadataReader, projector: string, headDim: number, merge: number): number {
  if (merge !== 2 || headDim % 4 !== 0) {
    throw new LlmError(
      'gguf-invalid',
      `reading vision config: the ${projector} needs 'clip.vision.spatial_merge_size' 2 (found ${merge}) and a head size divisible by 4 (found ${headDim})`,
      { details: { key: 'clip.vision.spatial_merge_size', merge, headDim } },
    );
  }
  const required = projector === 'qwen2.5vl_merger' ? undefined : 0; // only 2.5 requires it, as llama.cpp
  return r.boundedCount('clip.vision.n_wa_pattern', required, 0, LIMITS.maxLayers, 'maxLayers');
}

/**
 * The longest side of a tiled image (`clip.vision.preproc_image_size`); mtmd's other idefics3 path (files without the
 * key) is not built, so a tiled projector without it is `unsupported-arch`.
 */
function tiledLongestEdge(r: MetadataReader, facts: ProjectorFacts): number {
  const key = 'clip.vision.preproc_image_size';
  if (facts.preprocessor !== 'idefics3') return r.count(key, 0);
  if (!r.has(key)) {
    throw new LlmError(
      'unsupported-arch',
      `reading vision config: '${key}' is missing; re-convert the mmproj with a newer llama.cpp (tiling without it is not supported)`,
      { details: { key } },
    );
  }
  return r.boundedCount(key, undefined, 1, LIMITS.maxImageSize, 'maxImageSize');
}
