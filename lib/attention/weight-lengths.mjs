// The length of every weight tensor of a layer, with the formula its error shows: name → [length,
// formula]. Creation checks the tensors given against it, and so does a forward that repeats a
// layer's argument (one object may serve both create and forward; the weights in use stay the ones
// given at creation).
export function layerTensorLengths(layer) {
  const { qIn, kIn, vIn, headDimQk: dk, headDimV: dv } = layer;
  if (!layer.outProjection) {
    return {
      wq: [dk * qIn, () => `dK·dModel = ${dk}·${qIn}`],
      wk: [dk * qIn, () => `dK·dModel = ${dk}·${qIn}`],
      wv: [dv * qIn, () => `dV·dModel = ${dv}·${qIn}`],
      bq: [dk, 'dK'],
      bk: [dk, 'dK'],
      bv: [dv, 'dV'],
    };
  }
  const { numHeads, numKvHeads, decoder } = layer;
  const E = qIn;
  const qWidth = numHeads * dk,
    kvWidth = numKvHeads * dk;
  return {
    inProjWeight: [3 * E * E, () => `3·embedDim·embedDim = 3·${E}·${E}`],
    qProjWeight: [
      qWidth * E,
      () => (decoder ? `numHeads·headDim·embedDim = ${numHeads}·${dk}·${E}` : `embedDim·embedDim = ${E}·${E}`),
    ],
    kProjWeight: [
      kvWidth * kIn,
      () => (decoder ? `numKvHeads·headDim·kdim = ${numKvHeads}·${dk}·${kIn}` : `embedDim·kdim = ${E}·${kIn}`),
    ],
    vProjWeight: [
      kvWidth * vIn,
      () => (decoder ? `numKvHeads·headDim·vdim = ${numKvHeads}·${dk}·${vIn}` : `embedDim·vdim = ${E}·${vIn}`),
    ],
    inProjBias: decoder
      ? [qWidth + 2 * kvWidth, () => `(numHeads + 2·numKvHeads)·headDim = (${numHeads} + 2·${numKvHeads})·${dk}`]
      : [3 * E, () => `3·embedDim = 3·${E}`],
    qProjBias: [qWidth, () => `numHeads·headDim = ${numHeads}·${dk}`],
    kProjBias: [kvWidth, () => `numKvHeads·headDim = ${numKvHeads}·${dk}`],
    vProjBias: [kvWidth, () => `numKvHeads·headDim = ${numKvHeads}·${dk}`],
    outProjWeight: [
      E * qWidth,
      () => (decoder ? `embedDim·numHeads·headDim = ${E}·${numHeads}·${dk}` : `embedDim·embedDim = ${E}·${E}`),
    ],
    outProjBias: [E, `embedDim = ${E}`],
  };
}
