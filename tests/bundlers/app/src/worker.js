// The app's module worker: runs the example with the options the page sends.
import { createAttention } from 'wasm-attention';
import { runExample } from './example.js';

self.onmessage = (e) => {
  runExample(createAttention, e.data).then(
    (result) => self.postMessage(result),
    (err) => self.postMessage({ error: `${err?.stack ?? err}` }),
  );
};
