// The sandbox's worker: Pyodide (static/vendor/pyodide/), micrograd's wheel and chainrule's own
// Python (the engine and chainrule.sandbox, from GET /sandbox/<version>/chainrule.zip) run the
// learner's code here, off the page's thread, so the page can stop it at its time limit by
// terminating this worker (sandbox/sandbox.js). Loaded only when a program needs running.
//
// Its walls are the browser's, not a list of names (docs/sandbox.md). Its response carries its
// own Content-Security-Policy (app/http/middleware.py): `default-src 'none'` (no fetch, XHR,
// WebSocket, EventSource, font, import or nested worker from any URL: the browser refuses each
// before a request leaves), `'wasm-unsafe-eval'` (Pyodide compiles WebAssembly) and `sandbox`
// (an opaque origin: no IndexedDB, no CacheStorage, no storage of the app's origin at all). Its
// two static imports below are fetched with the script itself, under the page's policy; every
// other file (Pyodide's wasm and standard library, micrograd's wheel, chainrule's zip) the page
// fetches and hands over as bytes in the first message, and Pyodide reads them through
// `servedFrom`, never the network.
//
// Messages in:  {type: "run", code, files?, lang?, maxNodes?, maxValueNodes?}, {type: "pick",
//               name, files?, lang?, maxNodes?, maxValueNodes?} (the first message's: `files`,
//               the bytes of every file Python loads: files.js; `lang`, the page's language, in
//               which the runner says the reader's warnings; `maxNodes`, the server's bound on a
//               graph: a bigger one is traced here; `maxValueNodes`, the reader's own bound)
// Messages out: {type: "started", cold, timings} when the learner's code starts (after loading
//               Python: the time limit counts from here; a cold start says where its time went),
//               {type: "line", line} while it runs (the line running, when it changes, at most
//               20 a second: sandbox/watch.py), {type: "ran"} when the code has run and its
//               graph is being read (and traced here when too big to send), once a run,
//               {type: "result", result} (chainrule.sandbox.
//               runner's reply as JSON text: the page checks its size before reading it),
//               {type: "failed", message} (Python could not be loaded).

import { loadPyodide } from "../../vendor/pyodide/pyodide.mjs";
// Emscripten's glue, which loadPyodide would otherwise import() from its URL (refused here).
import createPyodideModule from "../../vendor/pyodide/pyodide.asm.mjs";
import { SANDBOX_FILES } from "./files.js";
// Pyodide's lock file lists the packages it may download; this one lists none (its `info` is the
// vendored build's), so nothing is ever fetched from a CDN.
const LOCK = {
  info: { abi_version: "2026_0", arch: "wasm32", platform: "emscripten_5_0_3", python: "3.14.2" },
  packages: {},
};
const SITE = "/home/pyodide/lib";

// Not a wall (the policy is), a guard against a browser bug: Chromium (156) crashes the whole
// tab's renderer when a worker whose origin is opaque calls URL.createObjectURL, so the function
// is gone before the learner's code runs (a blob URL would be no way out anyway: it is local,
// and the policy lets nothing run from one). tests/sandbox_escapes.py's nested_worker tries it.
delete URL.createObjectURL;

let session = null; // the promise of chainrule.sandbox.runner's Session, once loading began

/**
 * A stand-in for `fetch` while Pyodide loads: it answers the URLs of `files` (the bytes the page
 * fetched) and refuses any other, so loading makes no request (the policy would refuse it anyway).
 */
function servedFrom(files) {
  const byUrl = { [SANDBOX_FILES.wasm]: files.wasm, [SANDBOX_FILES.stdlib]: files.stdlib };
  return async (url) => {
    const bytes = byUrl[String(url)];
    if (!bytes) throw new TypeError(`the sandbox was not given ${url}`);
    return new Response(bytes, { headers: { "content-type": "application/wasm" } });
  };
}

async function load({ files, lang, maxNodes, maxValueNodes }) {
  const began = performance.now();
  const browserFetch = self.fetch;
  self.fetch = servedFrom(files);
  let pyodide;
  try {
    pyodide = await loadPyodide({
      indexURL: SANDBOX_FILES.pyodide, createPyodideModule, lockFileContents: JSON.stringify(LOCK),
      stdout: () => {}, stderr: () => {},
    });
  } finally {
    self.fetch = browserFetch;
  }
  const loaded = performance.now();
  pyodide.unpackArchive(files.python, "zip", { extractDir: SITE });
  pyodide.unpackArchive(files.micrograd, "wheel", { extractDir: SITE });
  pyodide.runPython(`import sys\nsys.path.insert(0, ${JSON.stringify(SITE)})`);
  const runner = pyodide.pyimport("chainrule.sandbox.runner");
  const reportLine = (line) => self.postMessage({ type: "line", line });
  const reportRan = () => self.postMessage({ type: "ran" });
  // The page's bounds (its server's), else the runner's own.
  const bounds = { ...(maxNodes ? { max_nodes: maxNodes } : {}), ...(maxValueNodes ? { max_value_nodes: maxValueNodes } : {}) };
  const session = runner.Session.callKwargs({ report_line: reportLine, report_ran: reportRan, lang, ...bounds });
  // Where a cold start's time went (bench/sandbox.py reads it from the panel).
  const timings = { pyodide: loaded - began, python: performance.now() - loaded };
  return { runner, session, timings };
}

async function handle(message) {
  const cold = session === null;
  session ??= load(message);
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
  self.postMessage({ type: "result", result: reply });
}

// One message at a time, in order: a run must not start while Python is still loading.
let queue = Promise.resolve();
self.onmessage = (event) => {
  queue = queue.then(() => handle(event.data));
};
