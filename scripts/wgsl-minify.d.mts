/** `src` without comments and redundant whitespace; line breaks between tokens are kept (see wgsl-minify.mjs). */
export declare function minifyWgsl(src: string): string;
