/**
 * Baseline (sequential, Huffman, 8-bit) JPEG decoding with stb_image's arithmetic, so Node gets the pixels llama.cpp's
 * mtmd decodes (`stbi_load_from_memory(…, 3)`): stb's integer IDCT (jidctint-derived, 12-bit constants), its
 * "fancy" chroma upsampling (triangle filters for 2× in either axis, nearest otherwise) and its fixed-point YCbCr
 * conversion; grey replicated, Adobe RGB kept, CMYK/YCCK as stb. EXIF orientation is ignored, as stb ignores it.
 * Returns null for what it does not decode (progressive, lossless, arithmetic, 12-bit): the caller falls back.
 */

import { LlmError } from '../errors.js';
import { idctBlock } from './jpeg-idct.js';
import { type JpegPlane, toRgb } from './jpeg-rgb.js';
import type { RgbImage } from './resize-pillow.js';

/** Natural-order index of the k-th zig-zag coefficient. */
const DEZIGZAG = [
  0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14, 21, 28,
  35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47,
  55, 62, 63,
];

interface Huffman {
  /** Per code length 1…16: the largest code (−1: none), the first code and its symbol index. */
  readonly maxCode: Int32Array;
  readonly firstCode: Int32Array;
  readonly firstIndex: Int32Array;
  readonly symbols: Uint8Array;
}

interface Component extends JpegPlane {
  readonly id: number;
  readonly h: number;
  readonly v: number;
  readonly tq: number;
  /** Samples per row of the padded plane (whole MCUs) and its rows. */
  w2: number;
  h2: number;
  /** Real samples: ceil(width · h / hMax) × ceil(height · v / vMax). */
  x: number;
  y: number;
  data: Uint8Array; // [h2, w2]
  dcPred: number;
  td: number;
  ta: number;
}

const corrupt = (why: string): LlmError =>
  new LlmError('invalid-request', `the JPEG image could not be decoded; it is corrupt or truncated (${why})`, {
    details: { format: 'jpeg' },
  });

function buildHuffman(counts: Uint8Array, symbols: Uint8Array): Huffman {
  const maxCode = new Int32Array(18).fill(-1);
  const firstCode = new Int32Array(18);
  const firstIndex = new Int32Array(18);
  let code = 0;
  let k = 0;
  for (let len = 1; len <= 16; len++) {
    firstIndex[len] = k;
    firstCode[len] = code;
    code += counts[len - 1]!;
    k += counts[len - 1]!;
    if (counts[len - 1]! > 0) maxCode[len] = code - 1;
    code <<= 1;
  }
  return { maxCode, firstCode, firstIndex, symbols };
}

/** Entropy-coded bits, as stb reads them: 0xFF 0x00 is 0xFF; a marker ends the data (then `marker` holds it). */
class BitReader {
  private acc = 0;
  private bits = 0;
  marker = -1;
  constructor(
    private readonly b: Uint8Array,
    public pos: number,
  ) {}
  bit(): number {
    if (this.bits === 0) {
      if (this.marker >= 0 || this.pos >= this.b.length) throw corrupt('the scan ends early');
      const c = this.b[this.pos++]!;
      if (c === 0xff) {
        let m = this.b[this.pos]!;
        while (m === 0xff) m = this.b[++this.pos]!;
        this.pos++;
        if (m !== 0) {
          this.marker = m;
          this.pos -= 2;
          throw corrupt('a marker inside the scan'); // stb would feed zeros; a scan needing them is corrupt here
        }
      }
      this.acc = c;
      this.bits = 8;
    }
    this.bits--;
    return (this.acc >> this.bits) & 1;
  }
  receive(n: number): number {
    let v = 0;
    for (let i = 0; i < n; i++) v = (v << 1) | this.bit();
    return v;
  }
  /** stb's `extend_receive`: n bits as a signed magnitude. */
  extend(n: number): number {
    if (n === 0) return 0;
    const v = this.receive(n);
    return v < 1 << (n - 1) ? v - (1 << n) + 1 : v;
  }
  decode(h: Huffman): number {
    let code = 0;
    for (let len = 1; len <= 16; len++) {
      code = (code << 1) | this.bit();
      if (code <= h.maxCode[len]!) return h.symbols[h.firstIndex[len]! + code - h.firstCode[len]!]!;
    }
    throw corrupt('a bad Huffman code');
  }
  /** Skips to the next RSTn marker after an interval (stb's STBI__RESTART). */
  restart(): void {
    this.bits = 0;
    this.marker = -1;
    while (
      this.pos + 1 < this.b.length &&
      !(this.b[this.pos] === 0xff && this.b[this.pos + 1]! >= 0xd0 && this.b[this.pos + 1]! <= 0xd7)
    )
      this.pos++;
    if (this.pos + 1 >= this.b.length) throw corrupt('a restart marker is missing');
    this.pos += 2;
  }
  /** After a scan: the byte offset of the next marker. */
  end(): number {
    let p = this.pos;
    while (p + 1 < this.b.length && !(this.b[p] === 0xff && this.b[p + 1] !== 0 && this.b[p + 1] !== 0xff)) p++;
    return p;
  }
}

/** Decodes a baseline JPEG as stb_image does, or null when it is not one this decoder handles. */
export function decodeBaselineJpeg(b: Uint8Array): RgbImage | null {
  const be16 = (o: number) => (b[o]! << 8) | b[o + 1]!;
  const quant = Array.from({ length: 4 }, () => new Uint16Array(64));
  const dc: (Huffman | undefined)[] = [];
  const ac: (Huffman | undefined)[] = [];
  let comps: Component[] = [];
  let width = 0;
  let height = 0;
  let hMax = 1;
  let vMax = 1;
  let restartInterval = 0;
  let jfif = false;
  let adobeTransform = -1;
  let scanned = false;
  let p = 2;
  for (;;) {
    if (p + 4 > b.length) {
      if (scanned) break;
      throw corrupt('it ends before its image data');
    }
    if (b[p] !== 0xff) throw corrupt(`no marker at byte ${p}`);
    const m = b[p + 1]!;
    if (m === 0xff) {
      p++;
      continue;
    }
    if (m === 0xd9) break; // EOI
    if (m >= 0xd0 && m <= 0xd7) {
      p += 2;
      continue;
    }
    const len = be16(p + 2);
    const s = p + 4;
    const e = p + 2 + len;
    if (e > b.length) throw corrupt('a segment runs past the end');
    if (m === 0xc0 || m === 0xc1) {
      if (b[s] !== 8) return null; // 12-bit
      height = be16(s + 1);
      width = be16(s + 3);
      const n = b[s + 5]!;
      if (n !== 1 && n !== 3 && n !== 4) return null;
      comps = [];
      for (let i = 0; i < n; i++) {
        const o = s + 6 + i * 3;
        const h = b[o + 1]! >> 4;
        const v = b[o + 1]! & 15;
        if (h < 1 || h > 4 || v < 1 || v > 4) throw corrupt('a bad sampling factor');
        comps.push({
          id: b[o]!,
          h,
          v,
          tq: b[o + 2]! & 3,
          w2: 0,
          h2: 0,
          x: 0,
          y: 0,
          data: new Uint8Array(0),
          dcPred: 0,
          td: 0,
          ta: 0,
        });
      }
      hMax = Math.max(...comps.map((c) => c.h));
      vMax = Math.max(...comps.map((c) => c.v));
      const mcux = Math.ceil(width / (hMax * 8));
      const mcuy = Math.ceil(height / (vMax * 8));
      for (const c of comps) {
        c.x = Math.ceil((width * c.h) / hMax);
        c.y = Math.ceil((height * c.v) / vMax);
        c.w2 = mcux * c.h * 8;
        c.h2 = mcuy * c.v * 8;
        c.data = new Uint8Array(c.w2 * c.h2);
      }
    } else if (m >= 0xc2 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc) {
      return null; // progressive, lossless, arithmetic: not here
    } else if (m === 0xdb) {
      for (let o = s; o < e; ) {
        const sixteen = b[o]! >> 4;
        const t = b[o]! & 3;
        o++;
        for (let i = 0; i < 64; i++) {
          quant[t]![DEZIGZAG[i]!] = sixteen ? be16(o + 2 * i) : b[o + i]!;
        }
        o += sixteen ? 128 : 64;
      }
    } else if (m === 0xc4) {
      for (let o = s; o < e; ) {
        const tc = b[o]! >> 4;
        const th = b[o]! & 3;
        const counts = b.subarray(o + 1, o + 17);
        const total = counts.reduce((a, x) => a + x, 0);
        const table = buildHuffman(counts, b.subarray(o + 17, o + 17 + total));
        (tc === 0 ? dc : ac)[th] = table;
        o += 17 + total;
      }
    } else if (m === 0xdd) {
      restartInterval = be16(s);
    } else if (m === 0xe0) {
      jfif ||= b[s] === 0x4a && b[s + 1] === 0x46 && b[s + 2] === 0x49 && b[s + 3] === 0x46 && b[s + 4] === 0;
    } else if (m === 0xee) {
      if (
        len >= 14 &&
        b[s] === 0x41 &&
        b[s + 1] === 0x64 &&
        b[s + 2] === 0x6f &&
        b[s + 3] === 0x62 &&
        b[s + 4] === 0x65
      )
        adobeTransform = b[s + 11]!;
    } else if (m === 0xda) {
      if (comps.length === 0) throw corrupt('a scan before the frame header');
      const ns = b[s]!;
      const scan: Component[] = [];
      for (let i = 0; i < ns; i++) {
        const c = comps.find((k) => k.id === b[s + 1 + i * 2]);
        if (!c) throw corrupt('a scan names an unknown component');
        c.td = b[s + 2 + i * 2]! >> 4;
        c.ta = b[s + 2 + i * 2]! & 15;
        scan.push(c);
      }
      p = decodeScan(b, e, scan, hMax, vMax, width, height, restartInterval, quant, dc, ac);
      scanned = true;
      continue;
    }
    p = e;
  }
  if (!scanned || width === 0 || height === 0) throw corrupt('no image data');
  const isRgb =
    comps.length === 3 &&
    ((comps[0]!.id === 82 && comps[1]!.id === 71 && comps[2]!.id === 66) || (adobeTransform === 0 && !jfif));
  return toRgb(comps, width, height, hMax, vMax, isRgb, adobeTransform);
}

/** One sequential scan into the components' planes; returns the offset of the marker after it. */
function decodeScan(
  b: Uint8Array,
  start: number,
  scan: Component[],
  hMax: number,
  vMax: number,
  width: number,
  height: number,
  restartInterval: number,
  quant: Uint16Array[],
  dc: (Huffman | undefined)[],
  ac: (Huffman | undefined)[],
): number {
  const r = new BitReader(b, start);
  const block = new Int16Array(64);
  for (const c of scan) {
    c.dcPred = 0;
    if (!dc[c.td] || !ac[c.ta]) throw corrupt('a scan uses an undefined Huffman table');
  }
  const decodeBlock = (c: Component, out: number) => {
    block.fill(0);
    const q = quant[c.tq]!;
    const t = r.decode(dc[c.td]!);
    c.dcPred += r.extend(t);
    block[0] = c.dcPred * q[0]!; // Int16Array stores as stb's (short) cast
    for (let k = 1; k < 64; ) {
      const rs = r.decode(ac[c.ta]!);
      const size = rs & 15;
      const run = rs >> 4;
      if (size === 0) {
        if (rs !== 0xf0) break;
        k += 16;
        continue;
      }
      k += run;
      if (k > 63) throw corrupt('a coefficient past the block');
      const z = DEZIGZAG[k++]!;
      block[z] = r.extend(size) * q[z]!;
    }
    idctBlock(c.data, out, c.w2, block);
  };
  let todo = restartInterval || Number.MAX_SAFE_INTEGER;
  const interval = () => {
    if (--todo <= 0) {
      r.restart();
      todo = restartInterval;
      for (const c of scan) c.dcPred = 0;
    }
  };
  if (scan.length === 1) {
    const c = scan[0]!;
    const bw = Math.ceil(c.x / 8);
    const bh = Math.ceil(c.y / 8);
    for (let j = 0; j < bh; j++)
      for (let i = 0; i < bw; i++) {
        decodeBlock(c, j * 8 * c.w2 + i * 8);
        if (!(j === bh - 1 && i === bw - 1)) interval();
      }
  } else {
    const mcux = Math.ceil(width / (hMax * 8));
    const mcuy = Math.ceil(height / (vMax * 8));
    for (let j = 0; j < mcuy; j++)
      for (let i = 0; i < mcux; i++) {
        for (const c of scan)
          for (let y = 0; y < c.v; y++)
            for (let x = 0; x < c.h; x++) decodeBlock(c, (j * c.v + y) * 8 * c.w2 + (i * c.h + x) * 8);
        if (!(j === mcuy - 1 && i === mcux - 1)) interval();
      }
  }
  return r.end();
}
