/**
 * WebGPU flag values as plain numbers (the values the spec fixes). Using these instead of the `GPUBufferUsage`,
 * `GPUShaderStage` and `GPUMapMode` globals keeps the backend working where those globals are not installed
 * (Node with npm `webgpu` unless `globals` is assigned to globalThis).
 */

/** `GPUBufferUsage` bits. */
export const BufferUsage = {
  MAP_READ: 0x0001,
  COPY_SRC: 0x0004,
  COPY_DST: 0x0008,
  UNIFORM: 0x0040,
  STORAGE: 0x0080,
} as const;

/** `GPUShaderStage.COMPUTE`. */
export const SHADER_STAGE_COMPUTE = 0x4;

/** `GPUMapMode.READ`. */
export const MAP_MODE_READ = 0x1;
