// Node, CommonJS: the example with the installed package's `require`; createAttention's options
// as JSON in argv[2]. Prints "RESULT {json}".
const { createAttention } = require('wasm-attention');

import('./src/example.js')
  .then(({ runExample }) => runExample(createAttention, JSON.parse(process.argv[2] ?? '{}')))
  .then((result) => console.log(`RESULT ${JSON.stringify(result)}`))
  .catch((e) => {
    console.error(e);
    process.exitCode = 1;
  });
