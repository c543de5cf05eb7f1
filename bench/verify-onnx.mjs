// bench/export-onnx.py's last check: the exported .onnx, run by onnxruntime-web (1 thread), against
// the PyTorch module's logits — a prompt from an empty cache, then one token after it with the
// cache onnxruntime-web returned — within 1e-4 + 1e-4·|ref|. Exits 1 when they disagree.
//
//   node bench/verify-onnx.mjs MODEL.onnx REF.json
import fs from 'node:fs';
import { loadOrt } from './ort-peer.mjs';
import { createOrtLlama, worstError } from './ort-llama.mjs';

const [onnxPath, refPath] = process.argv.slice(2);
const ref = JSON.parse(fs.readFileSync(refPath, 'utf8'));
await loadOrt(1);
const ort = await import('onnxruntime-web');
const model = await createOrtLlama(ort, fs.readFileSync(onnxPath), ref);
const a = await model.run(ref.prompt, model.emptyPast);
const b = await model.run([ref.step], a.present);
const e = Math.max(
  worstError(a.logits, ref.prefillLogits, 1e-4, 1e-4),
  worstError(b.logits, ref.stepLogits, 1e-4, 1e-4),
);
console.log(`verify-onnx: onnxruntime-web vs the PyTorch module: worst error ${e.toFixed(3)} of the tolerance`);
await model.release();
process.exit(e <= 1 ? 0 : 1);
