/**
 * Vitest global setup: regenerates the recorded random-weight fixtures (test/fixtures/models/*.json) into
 * .cache/recorded-fixtures/ before any test runs, so the conformance suites list them beside ../shared's models.
 * A generator change that alters a recorded file's bytes fails here, naming the record.
 */

import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { materializeRecordedFixtures } from '../../scripts/synthetic/recorded-fixture.js';
import { writeSyntheticModel } from '../../scripts/synthetic-model.js';
import { RECORDED_FIXTURE_DIR } from '../helpers/shared-path.js';

const REPO = path.resolve(fileURLToPath(new URL('../../', import.meta.url)));

export default async function setup(): Promise<void> {
  await materializeRecordedFixtures(path.join(REPO, 'test', 'fixtures', 'models'), RECORDED_FIXTURE_DIR, (o) =>
    writeSyntheticModel(o),
  );
}
