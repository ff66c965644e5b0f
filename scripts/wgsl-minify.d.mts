/** `src` without comments and without whitespace that separates nothing (see wgsl-minify.mjs). */
export declare function minifyWgsl(src: string): string;
