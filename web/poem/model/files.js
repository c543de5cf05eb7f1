// The poem model's folder as the worker reads it: config.json, tokenizer.json and model.safetensors
// (a Hugging Face checkpoint, models/tang-poems/) fetched from one folder URL. A file that is not
// there (the npm package ships no model) is an answer, { missing: { url, status } }, for the page to
// say so in its words; only a file that is there but unreadable is an error.

const FILES = { config: 'config.json', tokenizer: 'tokenizer.json', weights: 'model.safetensors' };

/**
 * → { config, tokenizer, weights } (config.json and tokenizer.json parsed, weights the bytes of
 * model.safetensors as a Uint8Array), or { missing: { url, status, error } } naming the first file
 * that did not come (status 0 and the error's message when the request itself failed).
 */
export async function fetchModelFiles(folderUrl) {
  const folder = new URL(folderUrl);
  if (!folder.pathname.endsWith('/'))
    throw new TypeError(`fetchModelFiles: folderUrl must end with '/' (a folder), got ${folder.href}`);
  const get = async (name) => {
    const url = new URL(name, folder).href;
    let response;
    try {
      response = await fetch(url);
    } catch (e) {
      return { missing: { url, status: 0, error: String(e && e.message ? e.message : e) } };
    }
    if (!response.ok) return { missing: { url, status: response.status } };
    return { response, url };
  };
  // config.json first: without it (a package folder) nothing else is asked for.
  const config = await get(FILES.config);
  if (config.missing) return config;
  const [tokenizer, weights] = await Promise.all([get(FILES.tokenizer), get(FILES.weights)]);
  for (const file of [tokenizer, weights]) if (file.missing) return file;
  const json = async ({ response, url }) => {
    try {
      return await response.json();
    } catch (e) {
      throw new TypeError(`${url} is not JSON (${e.message})`);
    }
  };
  return {
    config: await json(config),
    tokenizer: await json(tokenizer),
    weights: new Uint8Array(await weights.response.arrayBuffer()),
  };
}
