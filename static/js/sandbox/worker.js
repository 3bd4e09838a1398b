// The sandbox's worker: Pyodide (static/vendor/pyodide/), micrograd's wheel and chainrule's own
// Python (the engine and chainrule.sandbox, from GET /sandbox/<version>/chainrule.zip) run the
// learner's code here, off the page's thread, so the page can stop it at its time limit by
// terminating this worker (sandbox/sandbox.js). Loaded only when a program needs running.
//
// Its response carries its own Content-Security-Policy (app/http/middleware.py), the page's plus
// 'wasm-unsafe-eval': Pyodide compiles WebAssembly. Once Python is loaded the worker has no
// network at all: fetch, XMLHttpRequest, WebSocket, EventSource and importScripts are taken
// away before the learner's first line runs, and no package is ever installed (the lock file
// lists none; micropip is not shipped).
//
// Messages in:  {type: "run", code, python} (python: the zip's URL), {type: "pick", name}
// Messages out: {type: "started", cold, timings} when the learner's code starts (after loading
//               Python: the time limit counts from here; a cold start says where its time went), {type: "line", line} while it runs (the line
//               running, when it changes), {type: "result", result} (chainrule.sandbox.runner's
//               reply, parsed), {type: "failed", message} (Python could not be loaded).

import { loadPyodide } from "../../vendor/pyodide/pyodide.mjs";

const PYODIDE = new URL("../../vendor/pyodide/", import.meta.url).href;
const MICROGRAD = new URL("../../vendor/micrograd/micrograd-0.1.0-py3-none-any.whl", import.meta.url).href;
// Pyodide's lock file lists the packages it may download; this one lists none (its `info` is the
// vendored build's), so nothing is ever fetched from a CDN.
const LOCK = {
  info: { abi_version: "2026_0", arch: "wasm32", platform: "emscripten_5_0_3", python: "3.14.2" },
  packages: {},
};
const SITE = "/home/pyodide/lib";

let session = null; // the promise of chainrule.sandbox.runner's Session, once loading began

async function bytes(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

/** Take the network away: nothing the learner's code reaches (through `js`) can use it. */
function cutNetwork() {
  const refused = () => {
    throw new TypeError("the sandbox has no network");
  };
  self.fetch = () => Promise.reject(new TypeError("the sandbox has no network"));
  self.importScripts = refused;
  for (const name of ["XMLHttpRequest", "WebSocket", "EventSource", "WebTransport", "Worker", "SharedWorker"]) {
    self[name] = undefined;
  }
}

async function load(python) {
  const began = performance.now();
  const files = Promise.all([bytes(python), bytes(MICROGRAD)]); // beside Pyodide's own
  const pyodide = await loadPyodide({
    indexURL: PYODIDE, lockFileContents: JSON.stringify(LOCK), stdout: () => {}, stderr: () => {},
  });
  const loaded = performance.now();
  const [zip, wheel] = await files;
  pyodide.unpackArchive(zip, "zip", { extractDir: SITE });
  pyodide.unpackArchive(wheel, "wheel", { extractDir: SITE });
  cutNetwork();
  pyodide.runPython(`import sys\nsys.path.insert(0, ${JSON.stringify(SITE)})`);
  const runner = pyodide.pyimport("chainrule.sandbox.runner");
  const reportLine = (line) => self.postMessage({ type: "line", line });
  const session = runner.Session.callKwargs({ report_line: reportLine });
  // Where a cold start's time went (bench/sandbox.py reads it from the panel).
  const timings = { pyodide: loaded - began, python: performance.now() - loaded };
  return { runner, session, timings };
}

async function handle(message) {
  const cold = session === null;
  session ??= load(message.python);
  let loaded;
  try {
    loaded = await session;
  } catch (err) {
    session = null;
    self.postMessage({ type: "failed", message: String(err?.message ?? err) });
    return;
  }
  self.postMessage({ type: "started", cold, timings: cold ? loaded.timings : null });
  const reply = message.type === "pick"
    ? loaded.runner.as_json(loaded.session.pick(message.name))
    : loaded.runner.as_json(loaded.session.run(message.code));
  self.postMessage({ type: "result", result: JSON.parse(reply) });
}

// One message at a time, in order: a run must not start while Python is still loading.
let queue = Promise.resolve();
self.onmessage = (event) => {
  queue = queue.then(() => handle(event.data));
};
