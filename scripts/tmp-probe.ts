import { getTestGpu } from '../test/helpers/gpu.js';
import { createWebGpuOps } from '../src/backend/webgpu/index.js';
export async function main() {
  const gpu = await getTestGpu();
  const ops = await createWebGpuOps({ gpu, preferF16: true, useSubgroups: true });
  const x = ops.createActivation('x', 1, 64);
  for (const nd of [1, 10, 87]) {
    for (let rep = 0; rep < 2; rep++) {
      const t = performance.now();
      for (let s = 0; s < 20; s++) {
        ops.beginStep({ tokens: new Int32Array(1), startPos: 0, slot: 0 });
        for (let i = 0; i < nd; i++) ops.scale(x, 1.0, 1);
        ops.endStep();
        await ops.argmax(x, 0);
      }
      console.log(nd, 'dispatches/step:', ((performance.now() - t) / 20).toFixed(2), 'ms/step');
    }
  }
  ops.destroy();
}
