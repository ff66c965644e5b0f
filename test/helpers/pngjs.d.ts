/** The part of the optional `pngjs` (no bundled types) the tests use to write PNG files. */
declare module 'pngjs' {
  export class PNG {
    constructor(options: { width: number; height: number });
    data: Buffer;
    static sync: { write(png: PNG): Buffer; read(buffer: Buffer): PNG };
  }
}
