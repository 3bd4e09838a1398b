// The files the sandbox's Python is made of, beside chainrule's own zip (whose URL the page's
// body names: data-sandbox-python). The page fetches them (sandbox.js) and hands their bytes to
// the worker (worker.js), whose policy lets it fetch nothing itself; Pyodide asks for
// its two by these URLs, and the worker answers from the bytes.

const PYODIDE = new URL("../../vendor/pyodide/", import.meta.url).href;

export const SANDBOX_FILES = {
  pyodide: PYODIDE, // loadPyodide's indexURL
  wasm: `${PYODIDE}pyodide.asm.wasm`,
  stdlib: `${PYODIDE}python_stdlib.zip`,
  micrograd: new URL("../../vendor/micrograd/micrograd-0.1.0-py3-none-any.whl", import.meta.url).href,
};

/**
 * The bytes of every file the worker needs, `{wasm, stdlib, micrograd, python}`, fetched by the
 * page; `onProgress(loaded)` is told the bytes received so far (decoded), as they arrive.
 */
export async function fetchSandboxFiles(pythonUrl, onProgress = () => {}) {
  const urls = { wasm: SANDBOX_FILES.wasm, stdlib: SANDBOX_FILES.stdlib, micrograd: SANDBOX_FILES.micrograd, python: pythonUrl };
  let loaded = 0;
  const entries = await Promise.all(Object.entries(urls).map(async ([name, url]) => {
    const response = await fetch(url);
    if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
    const chunks = [];
    const reader = response.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      loaded += value.byteLength;
      onProgress(loaded);
    }
    const bytes = new Uint8Array(chunks.reduce((sum, chunk) => sum + chunk.byteLength, 0));
    let at = 0;
    for (const chunk of chunks) {
      bytes.set(chunk, at);
      at += chunk.byteLength;
    }
    return [name, bytes.buffer];
  }));
  return Object.fromEntries(entries);
}
