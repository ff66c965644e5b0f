/**
 * Conformance of the plain-TS reference backend against llama.cpp's logits for every shared fixture (driver in
 * test/helpers/conformance-suite.ts). Prints one summary line per fixture.
 */

import { createCpuOps } from '../../src/backend/cpu/cpu-ops.js';
import { formatReport, runConformanceSuite } from '../helpers/conformance-suite.js';

runConformanceSuite('cpu reference', () => createCpuOps(), {
  onReport: (fixture, report) => console.log(formatReport(fixture.id, report)),
});
