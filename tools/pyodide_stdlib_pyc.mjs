// Compile Pyodide's standard library to bytecode, once, with Pyodide's own CPython:
//   node tools/pyodide_stdlib_pyc.mjs <npm's python_stdlib.zip> <out.zip>
// (`make pyodide-stdlib` fetches the npm package and writes static/vendor/pyodide/python_stdlib.zip.)
//
// npm's python_stdlib.zip holds the standard library as source, and Pyodide compiles the ~190
// modules it imports at start-up on every cold start: 10 to 12 s of the sandbox's 12 s cold start
// on this project's busy 2-core machine (bench/sandbox.py). The same files compiled ahead load in
// 1 to 2 s. Every `.py` becomes a sourceless `.pyc` (CPython 3.14.2's magic number, a zero
// timestamp: there is no source to check it against), every other file is copied as it is, the
// entries keep their names' order and times: the same input gives the same bytes.

import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const [source, out] = process.argv.slice(2);
if (!source || !out) {
  console.error("usage: node tools/pyodide_stdlib_pyc.mjs <npm python_stdlib.zip> <out.zip>");
  process.exit(2);
}
const vendor = fileURLToPath(new URL("../static/vendor/pyodide/", import.meta.url));
const { loadPyodide } = await import(`${vendor}pyodide.mjs`);
// The lock file the sandbox's worker passes (static/js/sandbox/worker.js): no packages.
const lock = { info: { abi_version: "2026_0", arch: "wasm32", platform: "emscripten_5_0_3", python: "3.14.2" }, packages: {} };
const pyodide = await loadPyodide({ indexURL: vendor, lockFileContents: JSON.stringify(lock), stdLibURL: source });
pyodide.FS.writeFile("/tmp/source.zip", new Uint8Array(readFileSync(source)));
const compiled = pyodide.runPython(`
import importlib.util, io, marshal, zipfile

HEADER = importlib.util.MAGIC_NUMBER + bytes(12)  # flags 0, mtime 0, size 0: sourceless
source = zipfile.ZipFile("/tmp/source.zip")
buffer = io.BytesIO()
count = 0
with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as target:
    for info in source.infolist():
        data = source.read(info)
        if info.filename.endswith(".py"):
            try:
                code = compile(data, info.filename, "exec", dont_inherit=True)
            except SyntaxError:  # a file that is data, not a module: kept as it is
                target.writestr(info, data)
                continue
            entry = zipfile.ZipInfo(info.filename[:-3] + ".pyc", date_time=info.date_time)
            target.writestr(entry, HEADER + marshal.dumps(code), zipfile.ZIP_DEFLATED)
            count += 1
        else:
            target.writestr(info, data)
open("/tmp/out.zip", "wb").write(buffer.getvalue())
count
`);
writeFileSync(out, pyodide.FS.readFile("/tmp/out.zip"));
console.log(`${out}: ${compiled} modules compiled`);
