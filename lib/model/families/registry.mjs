// The model families loadModel runs, each from its own file, and the one list of supported model
// types derived from their declarations (config.json's model_type → its family). A family file
// exports `family = { modelTypes, readConfig(keys, modelType), planTensors(config, open) }` and
// imports nothing from the model runtime, so the package entries can export the list cheaply.
import { family as bert } from './bert.mjs';
import { family as decoder } from './decoder.mjs';
import { family as gpt2 } from './gpt2.mjs';

const FAMILIES = [decoder, gpt2, bert];

/** config.json's model_type values loadModel takes. */
export const SUPPORTED_MODEL_TYPES = Object.freeze(FAMILIES.flatMap((f) => f.modelTypes));

/** The family of a supported model type; undefined for any other value. */
export function familyOf(modelType) {
  return FAMILIES.find((f) => f.modelTypes.includes(modelType));
}
