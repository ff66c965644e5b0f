/**
 * gemma3n with n sequences decoded together (`evalRows`) equals each sequence run alone, on the CPU reference
 * backend: every row keeps its own AltUp streams, LAuReL and per-layer inputs, and its own sparsity cutoff.
 * Fixtures: the recorded gemma3n models (window 512 and 8).
 */

import { join } from 'node:path';
import { createCpuOps } from '../../src/backend/cpu/cpu-ops.js';
import { describeMultiSequence } from '../helpers/multi-sequence-check.js';
import { RECORDED_FIXTURE_DIR } from '../helpers/shared-path.js';

const fixtures = ['gemma3n-q8_0-s1.gguf', 'gemma3n-q8_0-swa8-s2.gguf'].map((f) => join(RECORDED_FIXTURE_DIR, f));
describeMultiSequence('gemma3n cpu', () => createCpuOps(), fixtures, 1e-4);
