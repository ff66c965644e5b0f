/**
 * Playwright configuration for every end-to-end spec (`npx playwright test -c test/e2e/playwright.config.ts`).
 * Runs the system's Debian Chromium headless (never a downloaded browser) with WebGPU on SwiftShader, one worker
 * (the machine has 2 cores) and generous timeouts (SwiftShader compiles kernels in seconds). Pages are served on
 * 127.0.0.1 only: each spec starts the server it needs (idb.spec.ts runs test/helpers/fault-server.ts so it can count
 * requests); a spec group that needs a shared server can add a `webServer` entry here.
 */

import { defineConfig } from '@playwright/test';

/** Chromium flags from ../shared/docs/test-environment.md §1: WebGPU on SwiftShader, no background traffic on a closed network. */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--enable-unsafe-webgpu',
  '--use-webgpu-adapter=swiftshader',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

export default defineConfig({
  testDir: '.',
  testMatch: '**/*.spec.ts',
  outputDir: '../../test-results/e2e',
  workers: 1,
  fullyParallel: false,
  forbidOnly: true,
  retries: process.env.CI ? 1 : 0, // one retry in CI; Playwright still reports a retried pass as flaky
  timeout: 300_000,
  expect: { timeout: 30_000 },
  reporter: [['list']],
  use: {
    browserName: 'chromium',
    headless: true,
    launchOptions: { executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS },
    actionTimeout: 60_000,
    navigationTimeout: 60_000,
    trace: 'off',
  },
});
