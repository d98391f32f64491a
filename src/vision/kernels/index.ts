// The module `npm run build:kernels` compiles: every kernel the vision pipeline calls (../kernels.ts).
export { boxMean, resamplePlane, unpackRgb } from './planes';
export { guidedMatte } from './guided';
export { colourFields } from './colour-fields';
export { settleCells, composeWorkSize, composeRows } from './compose';
export { stretchRgb } from './stretch';
export { filterUp, adler32 } from './png';
export { deflateScan, deflateSample, deflateEmit } from './deflate';
export { deflateFused } from './deflate-fused';
