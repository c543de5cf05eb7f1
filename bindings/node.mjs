// Entry for `import` in Node: the CommonJS entry, so both module systems share one implementation.
import entry from './index.cjs';

export const {
  createAttention,
  loadModel,
  version,
  readSafetensors,
  attentionArgsFromStateDict,
  isKeyMasked,
  kvHeadOf,
  mulberry32,
  SUPPORTED_MODEL_TYPES,
} = entry;
