/** Writes precache.json and sw.js into the built demo folder `outDir`; returns the version (12 hex digits). */
export function generateServiceWorker(outDir: string): string;
