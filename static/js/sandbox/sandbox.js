// The sandbox: Python that the server's reader cannot read as data (a `class Value`, `def`,
// loops, lists, `random`, `from micrograd import nn`) runs here, in the learner's own browser,
// in Pyodide inside a Web Worker (sandbox/worker.js) with a time limit, walled by the browser
// (its own policy: no request, no storage; docs/sandbox.md). The
// worker reads the Value graph the code leaves as a straight-line program (the notebook's
// reader); the page then traces that program through POST /api/graph like any other, so the
// server only ever receives the program (docs/sandbox.md). The learner's code stays in the
// editor; the store's `state.sandbox` holds the run:
//   {code, status: "waiting" | "starting" | "running" | "done" | "failed", line, cold, ms, result}
// where `result` is chainrule.sandbox.runner's reply (program, choice, choices, nodes, backward,
// output, notes). The autograd check (sandbox/autograd-check.js) reads it beside the trace. Code the
// viewer did not type (a link's, a lesson's, a live class's) waits in "waiting" for their Run.

import { SCRIPT_NAMES, TENSOR_PROGRAM } from "../compute/op-functions.js";
import { ApiError } from "../core/api-error.js";
import { h, keepChildren } from "../core/dom.js";
import { compactText, countText } from "../core/format.js";
import { lang, t } from "../core/i18n.js";
import { withStepObjects } from "../core/step-columns.js";
import { fetchSandboxFiles } from "./files.js";

// Loading Python the first time (a cold cache on a slow machine) may take long; the learner's
// code gets RUN_LIMIT_S from its first line (`?sandbox_limit=<seconds>` changes it), and
// reading its graph READ_LIMIT_S once it ran (`?sandbox_read_limit=<seconds>`).
const START_LIMIT_MS = 120_000;
const PROGRESS_GAP_MS = 100; // a download's progress is said at most this often
const RUN_LIMIT_S = 10;
const WORKER_URL = new URL("./worker.js", import.meta.url);
// What the page reads from the worker, whose code is the learner's too (it can post anything
// through `js`): at most MESSAGES_PER_SECOND messages a second (the worker's own send at most 20
// line reports a second: sandbox/watch.py), a reply of at most replyMaxChars() characters, and
// only the messages the worker sends, each checked before it is acted on. Anything else ends
// the run and the worker, and says why; a message between runs ends the worker.
export const MESSAGES_PER_SECOND = 100;
export const REPLY_MAX_CHARS = 8_000_000;
// A reply that holds the trace of a graph too big to send (sandbox/local_trace.py) is bounded as
// the server bounds its own replies: so many characters a node (engine/reply.py
// REPLY_BYTES_PER_NODE) at the most nodes the reader reads, which the page is told
// (`data-sandbox-traced-max-chars`; micrograd's demo's: 72,935,735 for 65,818 nodes, its trace
// and the run's facts).
// Reading the graph the code made, once it has run: the reader, the autograd check and, for a
// graph too big to send, the engine's trace and the layout (micrograd's demo, 65,818 nodes:
// about 8 s of a cold start on the 2-core machine). The code's own limit ends when it has run.
export const READ_LIMIT_S = 60;

/** The server's bounds the page hands the worker (templates/index.html): `maxNodes`, past which
 *  the worker traces a graph itself, and `maxValueNodes`, past which it refuses one. */
export function sandboxBounds() {
  const { sandboxMaxNodes, sandboxMaxValueNodes } = document.body.dataset;
  return { maxNodes: Number(sandboxMaxNodes) || null, maxValueNodes: Number(sandboxMaxValueNodes) || null };
}

/** The most characters a runner's reply may have: a trace made in the worker's, as the server says. */
export function replyMaxChars() {
  return Math.max(REPLY_MAX_CHARS, Number(document.body.dataset.sandboxTracedMaxChars) || 0);
}
const FAILED_MAX_CHARS = 2_000;

// What the server's reader cannot read and the sandbox runs, as the server's reader decides it
// (engine/lexer.py, parser.py: a NeedsRunning error), so that code never reaches the server:
// a statement (at a line's start or after `;`) that starts a definition or a block, or changes
// `x.data`; an import of random or of micrograd's nn; a call of random, or of a Python builtin; a
// list or an index (a `[` outside PyTorch's `torch.Tensor([2.0])`). Dropped first, as the server
// skips them: comments, a session's prompts, the definitions of chainrule's own helpers and what
// follows the first line ending in `L.backward()`. A string holding one of these only costs a
// run; tests/browser/test_sandbox.py holds the two to one verdict on the lecture's cells.
const STATEMENT = String.raw`(?:^|;)[ \t]*`;
const BUILTINS = "abs|all|any|dict|enumerate|filter|float|int|isinstance|len|list|map|max|min|range|reversed|round|set|sorted|str|sum|tuple|zip";
const RUNS = [
  new RegExp(`${STATEMENT}(?:class|def|for|while|if|elif|else|with|try|except|finally|lambda|async|await|return|yield)\\b`, "m"),
  new RegExp(`${STATEMENT}[A-Za-z_]\\w*[ \t]*\\.[ \t]*data[ \t]*(?:\\*\\*|//|[-+*/])?=(?!=)`, "m"),
  /^[ \t]*import[ \t]+random\b/m,
  /^[ \t]*from[ \t]+micrograd(?:\.nn)?[ \t]+import[ \t]+(?:nn|Neuron|Layer|MLP|Module)\b/m,
  /\brandom\.\w+\s*\(/,
  new RegExp(`(?<![\\w.])(?:${BUILTINS})[ \t]*\\(`),
  /\[/,
];
// A tensor program (docs/tensors.md; the engine's pattern, generated) is read by the server, its
// lists and `range(n)` as data: only a statement of the first patterns makes it run.
const TENSOR = new RegExp(TENSOR_PROGRAM);
const RUNS_IN_TENSORS = RUNS.slice(0, 5);
// The server reads `L.backward()` ending a line as the result: what follows is not read.
const BACKWARD_LINE = /^[ \t]*[A-Za-z_]\w*\.backward\(\)[ \t]*$/m;
// The helpers chainrule's own micrograd scripts define (io/micrograd.js; their names are the op
// table's, engine/ops.py SCRIPT_NAMES), which the server skips: a `def` of one of them at a line's
// start, with its indented (or blank) lines.
const HELPER_DEF = new RegExp(
  String.raw`^[ \t]*def[ \t]+(?:${SCRIPT_NAMES.join("|")})[ \t]*\([^\n]*\):[ \t]*(?:\n(?:[ \t]*(?=\n|$)|[ \t]+[^\n]*))*`,
  "gm",
);
// A session's prompts (`>>> `, `... `, `In [3]:`), read as blanks by the server too.
const PROMPT = /^[ \t]*(?:>>>|\.\.\.:?|In \[\d*\]:)(?: |$)/gm;
// PyTorch's scalar in a list (`torch.Tensor([2.0])`) is a number to the server, not a list.
const TORCH_NUMBER = /\btorch\.(?:tensor|Tensor|DoubleTensor)\([ \t]*\[[^\]\n]*\]/g;

/**
 * Whether `source` must run before there is a graph: its text says so, or the server said so of
 * it (an error of type NeedsRunning). The one place that decides; the page never sends code that
 * this claims to the server.
 */
export function needsRunning(source, error = null) {
  if (error?.type === "NeedsRunning") return true;
  let code = String(source ?? "").replace(/\r/g, "").replace(PROMPT, "").replace(/#[^\n]*/g, "");
  const runs = TENSOR.test(code) ? RUNS_IN_TENSORS : RUNS;
  const backward = BACKWARD_LINE.exec(code);
  if (backward) code = code.slice(0, backward.index + backward[0].length);
  code = code.replace(HELPER_DEF, "").replace(TORCH_NUMBER, "torch.tensor(");
  return runs.some((pattern) => pattern.test(code));
}

/** Whether `trace` is a scalar reply of `POST /api/graph` for `source` (made by the worker). */
function isTrace(trace, source) {
  return typeof trace === "object" && trace.source === source && Array.isArray(trace.nodes) && Array.isArray(trace.edges)
    && Array.isArray(trace.groups) && Array.isArray(trace.leaves) && typeof trace.steps === "object" && typeof trace.layout === "object";
}

/** The straight-line program of the sandbox's run of `s.source`, or null (not run, or stale). */
export function sandboxProgram(s) {
  const run = s.sandbox;
  return run && run.status === "done" && run.code === s.source ? run.result.program.source : null;
}

/**
 * The trace the worker made of the sandbox's run (a graph past the server's bound:
 * sandbox/local_trace.py) when `body` asks for it: the run's program with no option (its
 * `values` are the caller's to paint: main.js); else null (the server's to answer). A request of
 * that program with an option only the server's engine runs (expanded operations, another
 * target, forward mode) throws an ApiError that says why: the server would refuse a graph that
 * big.
 */
export function sandboxTrace(s, body) {
  const program = sandboxProgram(s);
  const trace = program === null ? null : s.sandbox.result.trace;
  if (!trace || body.source !== program) return null;
  if (Object.keys(body).every((key) => key === "source" || key === "values")) return trace;
  const limit = countText(sandboxBounds().maxNodes);
  throw new ApiError({ type: "TracedHere", message: t("ui.sandbox.error.traced_here", { limit }), line: null, column: null });
}

/**
 * `trace` as the page shows it: for the program of the sandbox's run, with the run's own notes
 * (an operand micrograd's set merged) and without the parser's notes on label lines
 * (`t1 = w1 * x1; t1.label = 'x1*w1'`), which the reader writes on purpose (the notebook's with_program too).
 */
export function withRun(trace, s) {
  const program = sandboxProgram(s);
  if (program === null || trace?.source !== program) return trace;
  const kept = (trace.warnings ?? []).filter((w) => w.type !== "skipped");
  return { ...trace, warnings: [...s.sandbox.result.program.warnings, ...kept] };
}

/** A time limit in seconds: the opening link's `param`, else `fallback`. */
function linkSeconds(param, fallback) {
  const asked = Number(new URLSearchParams(window.location.search).get(param));
  const seconds = Number.isFinite(asked) && asked > 0 ? asked : fallback;
  return () => seconds;
}

/** The time limit of the learner's code, and of reading its graph once it ran (in seconds):
 *  the opening link's `sandbox_limit` and `sandbox_read_limit`, else the defaults. */
const runLimitSeconds = linkSeconds("sandbox_limit", RUN_LIMIT_S);
const readLimitSeconds = linkSeconds("sandbox_read_limit", READ_LIMIT_S);

/**
 * Whether a message from the worker during `run` ({messages, since, started}) may be acted on:
 * null if so, else the error that ends the run. The count comes first and reads nothing, so a
 * flood is stopped before its messages are copied into the page (`message()` reads one).
 */
function refusal(run, message) {
  const now = performance.now();
  if (now - run.since >= 1000) Object.assign(run, { since: now, messages: 0 });
  run.messages += 1;
  if (run.messages > MESSAGES_PER_SECOND) return { type: "Flood", params: { limit: MESSAGES_PER_SECOND } };
  const data = message();
  const bad = { type: "BadMessage", params: { limit: replyMaxChars() } };
  if (data === null || typeof data !== "object" || !Object.hasOwn(SHAPES, data.type) || !only(data, SHAPES[data.type])) return bad;
  if (data.type === "line") return Number.isInteger(data.line) && data.line > 0 ? null : bad;
  if (data.type === "ran") return run.started && !run.ran ? null : bad; // once, after the start
  if (data.type === "started") { // the time limit starts once
    const timings = data.timings === null || (only(data.timings, ["pyodide", "python"]) && Object.values(data.timings).every(Number.isFinite));
    return run.started || !timings ? bad : null;
  }
  if (data.type === "result") return typeof data.result === "string" && data.result.length <= replyMaxChars() ? null : bad;
  return typeof data.message === "string" && data.message.length <= FAILED_MAX_CHARS ? null : bad; // failed
}

// The keys of each message the worker sends, and no others: only a reply may be long, so a flood
// of long messages ends at its first (one message is read before the page can weigh it).
const SHAPES = { line: ["type", "line"], started: ["type", "cold", "timings"], ran: ["type"], result: ["type", "result"], failed: ["type", "message"] };
const only = (data, keys) => typeof data === "object" && data !== null && Object.keys(data).every((key) => keys.includes(key));

/** The runner's reply in `text` (JSON), or a BadMessage error when it is not one (its shape:
 *  chainrule.sandbox.runner's, as far as the page reads it before it shows it). */
function parsedReply(text) {
  try {
    const reply = JSON.parse(text);
    const failed = reply?.ok === false && typeof reply.error?.type === "string";
    const ran = reply?.ok === true && typeof reply.program?.source === "string" && Array.isArray(reply.choices)
      && typeof reply.choice?.kind === "string" && (reply.trace == null || isTrace(reply.trace, reply.program.source));
    // A trace made here is read as the server's is (core/api.js postGraph): its steps' columns.
    if (ran && reply.trace) reply.trace = withStepObjects(reply.trace);
    if (failed || ran) return reply;
  } catch { /* not JSON: said below */ }
  return { ok: false, error: { type: "BadMessage", params: { limit: replyMaxChars() } } };
}

/**
 * The worker, made when first needed and made again after it was stopped: `request(message,
 * onEvent)` resolves with the runner's reply, or with {ok: false, error} when the code ran past
 * the limit (the worker is terminated: the line it was running is named), flooded the page or
 * sent it what it does not read, or Python failed. A new worker is first given the bytes of
 * Python's files (sandbox/files.js), which the page fetches: the worker may fetch nothing.
 */
function createWorkerClient() {
  let worker = null;
  let pending = null; // {resolve, onEvent, timer, line, since, messages, started, ran}

  function finish(reply) {
    const done = pending;
    pending = null;
    clearTimeout(done?.timer);
    done?.resolve(reply);
  }

  function stop(reply) {
    worker?.terminate();
    worker = null;
    finish(reply);
  }

  function limit(ms, reply) {
    clearTimeout(pending.timer);
    pending.timer = setTimeout(() => stop(reply()), ms);
  }

  function start() {
    worker = new Worker(WORKER_URL, { type: "module" });
    worker.onmessage = (event) => {
      if (!pending) { // between runs the worker has nothing to say: code left running there
        stop(null);
        return;
      }
      const refused = refusal(pending, () => event.data);
      if (refused) {
        stop({ ok: false, error: refused });
        return;
      }
      const { data } = event;
      if (data.type === "line") pending.line = data.line;
      if (data.type === "started") {
        pending.started = true;
        const seconds = runLimitSeconds();
        limit(seconds * 1000, () => ({ ok: false, error: { type: "Timeout", line: pending.line, params: { seconds } } }));
      }
      if (data.type === "ran") { // the code's limit ends: reading its graph has its own
        pending.ran = true;
        const seconds = readLimitSeconds();
        limit(seconds * 1000, () => ({ ok: false, error: { type: "ReadTimeout", params: { seconds } } }));
      }
      if (data.type === "result") finish(parsedReply(data.result));
      else if (data.type === "failed") stop({ ok: false, error: { type: "SandboxFailed", message: data.message } });
      else pending.onEvent(data);
    };
    worker.onerror = (event) => {
      event.preventDefault?.();
      stop({ ok: false, error: { type: "SandboxFailed", message: event.message || "" } });
    };
  }

  /** Post `message` to `sent` (a new worker first gets Python's files, transferred, and the
   *  page's language, in which it says the reader's warnings). */
  async function post(sent, message, fresh) {
    if (!fresh) {
      sent.postMessage(message);
      return;
    }
    try {
      const total = Number(document.body.dataset.sandboxBytes) || null;
      let said = 0;
      const files = await fetchSandboxFiles(document.body.dataset.sandboxPython, (loaded) => {
        const now = performance.now();
        if (now - said < PROGRESS_GAP_MS || worker !== sent) return;
        said = now;
        pending?.onEvent({ type: "download", loaded, total });
      });
      if (worker !== sent) return;
      pending?.onEvent({ type: "python" }); // the files are here: Python starts in the worker
      const { maxNodes, maxValueNodes } = sandboxBounds();
      sent.postMessage({ ...message, files, lang: lang(), maxNodes, maxValueNodes }, Object.values(files));
    } catch (err) {
      if (worker === sent) stop({ ok: false, error: { type: "SandboxFailed", message: String(err?.message ?? err) } });
    }
  }

  return {
    get warm() {
      return worker !== null;
    },
    /** Stop the run (and the worker, Python with it): the viewer pressed Cancel. */
    cancel() {
      if (pending) stop({ ok: false, error: { type: "Cancelled" } });
    },
    request(message, onEvent = () => {}) {
      const fresh = !worker;
      if (fresh) start();
      return new Promise((resolve) => {
        pending = { resolve, onEvent, timer: null, line: null, since: performance.now(), messages: 0, started: false, ran: false };
        limit(START_LIMIT_MS, () => ({ ok: false, error: { type: "SandboxFailed", message: "timeout" } }));
        post(worker, message, fresh);
      });
    },
  };
}

// Errors the runner names by type, as the page says them (Python's own words are `message`).
const REFUSED_MODULES = new Set(["micropip", "pyodide", "pyodide_js", "js"]);

/** A runner's error on `source` as the API's error shape, its words in the page's language. */
export function sandboxError(error, source = "") {
  const params = error.params ?? {};
  const says = {
    PythonError: () => t("ui.sandbox.error.python", { message: error.message }),
    MissingReflected: () => t("ui.sandbox.error.missing_reflected", { message: error.message, method: params.method, fix: params.fix }),
    PythonSyntaxError: () => t("ui.sandbox.error.syntax", { message: error.message }),
    Unavailable: () => (REFUSED_MODULES.has(params.module)
      ? t("ui.sandbox.error.refused", { module: params.module })
      : t("ui.sandbox.error.unavailable", { module: params.module })),
    NoValue: () => (params.name ? t("ui.sandbox.error.no_value_named", { name: params.name }) : t("ui.sandbox.error.no_value")),
    TooManyNodes: () => t("ui.sandbox.error.too_many", { limit: countText(params.limit) }),
    UnknownOp: () => t("ui.sandbox.error.unknown_op", { op: params.op, ops: params.ops }),
    NotAGraph: () => t("ui.sandbox.error.not_a_graph", { message: error.message }),
    ReadTimeout: () => t("ui.sandbox.error.read_timeout", { seconds: params.seconds }),
    Timeout: () => (error.line
      ? t("ui.sandbox.error.timeout_line", { seconds: params.seconds, line: error.line })
      : t("ui.sandbox.error.timeout", { seconds: params.seconds })),
    SandboxFailed: () => t("ui.sandbox.error.failed", { message: error.message }),
    Cancelled: () => t("ui.sandbox.error.cancelled"),
    Flood: () => t("ui.sandbox.error.flood", { limit: params.limit }),
    BadMessage: () => t("ui.sandbox.error.bad_message", { limit: params.limit }),
  };
  const message = (says[error.type] ?? (() => error.message))();
  const line = error.line ?? null;
  let { snippet = null, caret = null, column = null } = error;
  if (line && snippet === null) { // a timeout knows the line only: the whole line is marked
    snippet = source.split("\n")[line - 1] ?? null;
    const indent = snippet ? snippet.length - snippet.trimStart().length : 0;
    column = indent + 1;
    caret = snippet ? " ".repeat(indent) + "^".repeat(Math.max(1, snippet.trim().length)) : null;
  }
  return { type: error.type, message, line, column, snippet, caret };
}

/** The sentence that says which Value is the graph, and why. */
function choiceSentence(choice, program) {
  const name = choice.name ?? program.root;
  if (choice.kind === "backward") {
    return choice.line ? t("ui.sandbox.choice.backward_line", { name, line: choice.line }) : t("ui.sandbox.choice.backward", { name });
  }
  if (choice.kind === "draw_dot") return t("ui.sandbox.choice.draw_dot", { name });
  if (choice.kind === "last") return t("ui.sandbox.choice.last", { name });
  return t("ui.sandbox.choice.picked", { name });
}

function statusText(run) {
  if (run.status === "waiting") return t("ui.sandbox.waiting");
  if (run.status === "starting" && run.stage === "download") {
    const mb = (bytes) => compactText(Math.round(bytes / 1e5) / 10);
    return run.total
      ? t("ui.sandbox.stage.download", { loaded: mb(run.loaded), total: mb(run.total) })
      : t("ui.sandbox.stage.download_unknown", { loaded: mb(run.loaded) });
  }
  if (run.status === "starting" && run.stage === "python") return t("ui.sandbox.stage.python");
  if (run.status === "starting") return t("ui.sandbox.starting");
  if (run.status === "running" && run.stage === "reading") return t("ui.sandbox.stage.reading");
  if (run.status === "running") return run.line ? t("ui.sandbox.running_line", { line: run.line }) : t("ui.sandbox.running");
  if (run.status === "failed") return t("ui.sandbox.failed");
  // Hundredths of a second below one second, tenths above: as the page writes every number.
  const seconds = run.ms < 1000 ? Math.round(run.ms / 10) / 100 : Math.round(run.ms / 100) / 10;
  if (run.result?.trace) return t("ui.sandbox.ran_here", { seconds: compactText(seconds), limit: countText(sandboxBounds().maxNodes) });
  return t("ui.sandbox.ran", { seconds: compactText(seconds) });
}

/** The panel under the editor: status, which Value, the picker, notes, output, the program; or,
 *  for code waiting for the viewer, the sentence that says where it would run and Run. */
function renderPanel(panel, run, { onPick, onRun, onCancel }) {
  panel.hidden = !run;
  if (!run) {
    delete panel.dataset.status;
    panel.replaceChildren();
    return;
  }
  panel.dataset.status = run.status;
  if (run.timings) { // a cold start's parts, in ms, for benchmarks (bench/sandbox.py)
    panel.dataset.loadPyodideMs = Math.round(run.timings.pyodide);
    panel.dataset.loadPythonMs = Math.round(run.timings.python);
  }
  const parts = [h("p", { class: "sandbox-status", "data-testid": "sandbox-status", "data-stage": run.status === "starting" ? run.stage ?? "start" : (run.status === "running" && run.stage === "reading" ? "reading" : run.status), text: statusText(run) })];
  if (run.status === "starting" || run.status === "running") {
    // The same button while the run lasts, never taken out of the panel (drawn again at every
    // line the run reports, up to 20 a second: a button taken out and put back between a press
    // and its release gets no click, and Cancel never worked on a loop).
    parts.push(panel.querySelector("[data-testid=sandbox-cancel]")
      ?? h("button", { type: "button", class: "sandbox-cancel", "data-testid": "sandbox-cancel", text: t("ui.sandbox.cancel"), onclick: onCancel }));
  }
  if (run.status === "waiting") {
    parts.push(h("button", { type: "button", class: "sandbox-run primary", "data-testid": "sandbox-run", text: t("ui.sandbox.run"), onclick: onRun }));
    keepChildren(panel, parts);
    return;
  }
  const result = run.status === "done" ? run.result : null;
  if (result) {
    const { choice, choices, program } = result;
    parts.push(h("p", { class: "sandbox-choice", "data-testid": "sandbox-choice", "data-kind": choice.kind, text: choiceSentence(choice, program) }));
    if (choices.length > 1) {
      const select = h("select", { "data-testid": "sandbox-pick", "aria-label": t("ui.sandbox.pick.label"), onchange: (event) => onPick(event.target.value) },
        ...choices.map((c) => h("option", { value: c.name, text: c.name, selected: c.name === choice.name })));
      parts.push(h("label", { class: "sandbox-pick" }, h("span", { text: t("ui.sandbox.pick.label") }), select));
    }
    parts.push(h("p", { class: "sandbox-frozen", text: t("ui.sandbox.frozen") }));
  }
  for (const note of run.result?.notes ?? []) {
    parts.push(h("p", { class: "sandbox-note", text: t("ui.sandbox.magic", { line: note.line, text: note.text }) }));
  }
  parts.push(h("div", { class: "sandbox-check", "data-check-slot": "" }));
  if (run.result?.output) {
    parts.push(h("details", { class: "sandbox-output" }, h("summary", { text: t("ui.sandbox.output") }),
      h("pre", { "data-testid": "sandbox-output", text: run.result.output })));
  }
  if (result) {
    parts.push(h("details", { class: "sandbox-program" }, h("summary", { text: t("ui.sandbox.program") }),
      h("pre", { "data-testid": "sandbox-program", text: result.program.source })));
  }
  keepChildren(panel, parts);
}

/**
 * Run `message` in the runner's worker (`runner`: {scope, worker, send, latest, busy, waiting}):
 * one run at a time, the newest one asked for while another runs waits, older ones are dropped.
 */
async function execute(runner, message, meta) {
  const { state, update } = runner.scope.store;
  const id = ++runner.latest;
  if (runner.busy) {
    runner.waiting = { message, meta };
    return;
  }
  runner.busy = true;
  const began = performance.now();
  const code = state.source;
  // An error shown is an earlier program's (or this one's last run's): not this run's, whose
  // own comes with its reply; its marks would sit on this code's text where they mean nothing.
  update({ sandbox: { ...(state.sandbox ?? {}), code, status: runner.worker.warm ? "running" : "starting", line: null }, busy: true, error: null });
  const reply = await runner.worker.request(message, (event) => {
    if (id !== runner.latest || state.sandbox?.code !== code) return;
    if (event.type === "started") {
      update({ sandbox: { ...state.sandbox, status: "running", stage: null, cold: event.cold, timings: event.timings ?? state.sandbox?.timings } });
    }
    if (event.type === "line") update({ sandbox: { ...state.sandbox, line: event.line } });
    if (event.type === "ran") update({ sandbox: { ...state.sandbox, stage: "reading" } });
    if (event.type === "download") update({ sandbox: { ...state.sandbox, stage: "download", loaded: event.loaded, total: event.total } });
    if (event.type === "python") update({ sandbox: { ...state.sandbox, stage: "python" } });
  });
  runner.busy = false;
  if (runner.waiting) {
    const next = runner.waiting;
    runner.waiting = null;
    execute(runner, next.message, next.meta);
    return;
  }
  update({ busy: false });
  if (id !== runner.latest || state.source !== code) return; // the program changed while it ran
  showReply(runner, { code, ms: performance.now() - began, reply }, meta);
}

/** A finished run in the state: its error, or its result and the program's trace asked for. */
function showReply({ scope, send }, { code, ms, reply }, meta) {
  const { state, update, setError } = scope.store;
  if (!reply.ok) {
    update({ sandbox: { code, status: "failed", ms, result: reply } });
    setError(sandboxError(reply.error, code));
    return;
  }
  const timings = state.sandbox?.timings;
  update({ sandbox: { code, status: "done", ms, result: reply, timings }, values: {} });
  send(meta);
}

/**
 * Mount the sandbox on `panel` (under the editor), on `scope`'s store. `send(meta)` traces the
 * program (main.js: the graph channel with its request body). Returns the hooks main.js calls:
 * `intercept(source, meta)` takes `source` when it needs running (true: the sandbox took it),
 * `rescue(error)` the current program when the server says it needs running. Code runs at once
 * only when the viewer asked for it (`meta.asked`: they typed it or chose a preset) or clicked
 * Run on it; any other (a link's, a lesson's, a live class's) is shown, waiting for that click.
 */
export function mountSandbox({ panel, send }, scope) {
  const { state, subscribe, update } = scope.store;
  // latest: the newest run asked for (an older one's reply is dropped); waiting: the run asked
  // for while another runs.
  const runner = { scope, send, worker: createWorkerClient(), latest: 0, busy: false, waiting: null };

  const pick = (name) => execute(runner, { type: "pick", name }, { program: true });
  let asked = null; // the code the viewer typed, chose or clicked Run on: it runs without a click
  let waiting = null; // the meta of the run that waits for Run
  const run = () => {
    asked = state.source;
    execute(runner, { type: "run", code: state.source }, waiting ?? { program: true });
  };
  const take = (source, meta) => {
    if (source === asked) {
      execute(runner, { type: "run", code: source }, meta);
      return;
    }
    waiting = meta;
    update({ sandbox: { code: source, status: "waiting" }, error: null }); // (as `execute` says)
  };

  subscribe((s, changed) => {
    // An edit makes the run stale: its graph stays until the new program's trace arrives.
    if (changed.has("source") && s.sandbox && s.sandbox.code !== s.source && s.sandbox.status !== "running") {
      update({ sandbox: null });
      return;
    }
    if (!changed.has("sandbox")) return;
    const before = panel.dataset.status;
    renderPanel(panel, s.sandbox, { onPick: pick, onRun: run, onCancel: () => runner.worker.cancel() });
    // A long paste leaves the sidebar scrolled to its end: bring the result into view once.
    if (s.sandbox?.status === "done" && before !== "done") panel.scrollIntoView?.({ block: "nearest" });
  });

  return {
    intercept(source, meta = {}) {
      if (meta.asked) asked = source;
      if (!needsRunning(source)) return false;
      if (sandboxProgram(state) !== null) return false; // this code's program is read: trace it
      take(source, { program: true, step: meta.step ?? 0 });
      return true;
    },
    rescue(error) {
      if (!needsRunning("", error) || state.sandbox) return false;
      take(state.source, { program: true });
      return true;
    },
  };
}
