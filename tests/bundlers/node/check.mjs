// Node, ESM: the example with the installed package's `import`; createAttention's options as
// JSON in argv[2]. Prints "RESULT {json}".
import { createAttention } from 'wasm-attention';
import { runExample } from './src/example.js';

const result = await runExample(createAttention, JSON.parse(process.argv[2] ?? '{}'));
console.log(`RESULT ${JSON.stringify(result)}`);
