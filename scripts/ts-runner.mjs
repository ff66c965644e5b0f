// Loads TypeScript modules through a Vite server-side module runner that stays open, so lazy `import()`s and `?raw`
// WGSL imports inside them keep working. Used by the CLI launcher in development and by `run-ts.mjs`.
import { createServer, createServerModuleRunner } from 'vite';

/** Imports `file` (absolute path) and returns its module namespace. */
export async function importTs(file) {
  const server = await createServer({
    configFile: false,
    logLevel: 'error',
    server: { middlewareMode: true, hmr: false, ws: false },
    appType: 'custom',
    optimizeDeps: { noDiscovery: true, include: [] },
  });
  const runner = createServerModuleRunner(server.environments.ssr, { hmr: false });
  const mod = await runner.import(file);
  const close = async () => {
    await runner.close();
    await server.close();
  };
  return { module: mod, close };
}
