// ---------------------------------------------------------------- Masking and K/V-head rules (kvHeadOf, isKeyMasked)

/** The masking arguments of a call, as multiHeadAttention takes them. */
export interface MaskRule {
  isCausal?: boolean;
  slidingWindow?: number;
  positionOffset?: number;
}
/** Extension. The K/V head query head `head` reads: ⌊head · numKvHeads / numHeads⌋. */
export function kvHeadOf(head: number, numHeads: number, numKvHeads: number): number;
/**
 * Extension. Whether key j is hidden from query row i, with pos = positionOffset + i: when isCausal
 * and j > pos, or when slidingWindow and pos − j ≥ slidingWindow. The engine's weights are 0 exactly there.
 */
export function isKeyMasked(rule: MaskRule, i: number, j: number): boolean;
