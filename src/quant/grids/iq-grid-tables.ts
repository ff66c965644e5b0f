/**
 * Every IQ codebook grid (ggml's data, see each file) and its WGSL `const` array (shaders/quant/tables/): the chunk
 * `loadIqGrids` imports when a model holds IQ1–IQ3 tensors, so no other download carries them.
 */

import type { IqGrids } from '../iq-grids.js';
import { dequantizeRowIq1M } from '../iq1_m-rows.js';
import { dequantizeRowIq1S } from '../iq1_s-rows.js';
import { dequantizeRowIq2S } from '../iq2_s-rows.js';
import { dequantizeRowIq2Xs } from '../iq2_xs-rows.js';
import { dequantizeRowIq2Xxs } from '../iq2_xxs-rows.js';
import { dequantizeRowIq3S } from '../iq3_s-rows.js';
import { dequantizeRowIq3Xxs } from '../iq3_xxs-rows.js';
import { IQ1S_GRID } from './iq1s-grid.js';
import { IQ2S_GRID } from './iq2s-grid.js';
import { IQ2XS_GRID } from './iq2xs-grid.js';
import { IQ2XXS_GRID } from './iq2xxs-grid.js';
import { IQ3S_GRID } from './iq3s-grid.js';
import { IQ3XXS_GRID } from './iq3xxs-grid.js';

/** The grids and their WGSL tables by file name. */
export const IQ_GRIDS: IqGrids = {
  iq1s: IQ1S_GRID,
  iq2xxs: IQ2XXS_GRID,
  iq2xs: IQ2XS_GRID,
  iq2s: IQ2S_GRID,
  iq3xxs: IQ3XXS_GRID,
  iq3s: IQ3S_GRID,
  rows: {
    iq1_s: dequantizeRowIq1S,
    iq1_m: dequantizeRowIq1M,
    iq2_xxs: dequantizeRowIq2Xxs,
    iq2_xs: dequantizeRowIq2Xs,
    iq2_s: dequantizeRowIq2S,
    iq3_xxs: dequantizeRowIq3Xxs,
    iq3_s: dequantizeRowIq3S,
  },
  wgsl: Object.fromEntries(
    Object.entries(
      import.meta.glob<string>('../../../shaders/quant/tables/*.wgsl', {
        query: '?raw',
        import: 'default',
        eager: true,
      }),
    ).map(([path, src]) => [path.replace(/^.*\/tables\//, '').replace(/\.wgsl$/, ''), src]),
  ),
};
