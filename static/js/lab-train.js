// The Train lab: gradient descent on the leaves the learner ticks. One step is
// p ← p − lr · ∂root/∂p for every parameter, computed by the server (POST /api/descend); the lab
// moves the sliders to each step's values (the graph's numbers follow, the pulse step is kept) and
// draws the loss curve. Play asks for batches of steps and shows them one at a time.
//
// `state.train` ({lr, momentum, params, steps, start}, null while the lab is off) is what a share
// link carries: opening one replays `steps` steps from the `start` values, exactly.

import { ApiError, postDescend } from "./api.js";
import { compactText } from "./format.js";
import { t } from "./i18n.js";
import { h, toggleSwitch } from "./lab-dom.js";
import { mountLossChart } from "./loss-chart.js";
import { state, subscribe, update } from "./state.js";

const BATCH = 10;           // steps per request while playing
const PLAY_STEP_MS = 160;   // one shown step per tick
const PLAY_MAX_STEPS = 1000; // a play stops here, whatever the loss does
const DEFAULT_LR = 0.01;
// What a request answers when Reset (or a new run) came while it was in flight: its steps belong
// to a run that is gone, so nothing of it is shown.
const SUPERSEDED = Symbol("superseded");

/** Leaves trained by default: every leaf whose name does not start with x or y (the data). */
export function defaultParams(trace) {
  return trace.leaves.map((l) => l.name).filter((name) => !/^[xy]/i.test(name));
}

/** The leaf values the graph shows: the program's, overridden by the sliders. */
function leafValues(trace) {
  const values = Object.fromEntries(trace.leaves.map((l) => [l.name, l.value]));
  for (const [name, value] of Object.entries(state.values)) if (name in values) values[name] = value;
  return values;
}

export function trainSection({ setLab, setValues }) {
  const toggle = toggleSwitch({
    off: t("ui.lab.off"), on: t("ui.train.on"), label: t("ui.train.label"),
    testId: "lab-train", onChange: (on) => setLab(on ? "train" : null),
  });
  const params = h("fieldset", { class: "train-params" }, h("legend", { text: t("ui.train.parameters") }));
  const lr = h("input", {
    type: "number", step: "any", min: "0", value: String(DEFAULT_LR), "data-testid": "train-lr",
    id: "train-lr", class: "train-number", inputmode: "decimal",
  });
  const momentum = h("input", {
    type: "number", step: "0.1", min: "0", max: "0.99", value: "0", "data-testid": "train-momentum",
    id: "train-momentum", class: "train-number", inputmode: "decimal",
  });
  const stepButton = h("button", { type: "button", text: t("ui.train.step"), "data-testid": "train-step" });
  const playButton = h("button", { type: "button", text: t("ui.transport.play"), class: "primary", "data-testid": "train-play", "aria-pressed": "false" });
  const resetButton = h("button", { type: "button", text: t("ui.train.reset"), "data-testid": "train-reset" });
  const logScale = h("input", { type: "checkbox", "data-testid": "train-log" });
  const status = h("p", { class: "train-status", "data-testid": "train-status", "aria-live": "polite" });
  const message = h("p", { class: "train-message", "data-testid": "train-message", role: "status" });
  const chartBox = h("div", { class: "train-chart" });
  const body = h("div", { class: "train-body" },
    params,
    h("div", { class: "train-settings" },
      h("label", { for: "train-lr", text: t("ui.train.lr") }), lr,
      h("label", { for: "train-momentum", text: t("ui.train.momentum") }), momentum),
    h("div", { class: "train-buttons" }, stepButton, playButton, resetButton),
    status, message, chartBox,
    h("label", { class: "toggle train-log" }, logScale, ` ${t("ui.train.log")}`));
  const section = h("section", { class: "lab-card lab-train", "aria-labelledby": "lab-train-title" },
    h("h3", { id: "lab-train-title", text: t("ui.train.title") }),
    h("p", { class: "lab-hint", text: t("ui.train.hint") }),
    toggle.element, body);
  const drawChart = mountLossChart(chartBox);

  // The run shown: losses (root after 0, 1, … steps), the momentum carried between batches,
  // steps fetched but not shown yet, and the values this lab last gave the sliders.
  let run = { losses: [], velocity: null, queue: [], applied: null };
  let playing = false;
  let busy = false;
  let replaying = false;

  const settings = () => state.train ?? { lr: DEFAULT_LR, momentum: 0, params: null, steps: 0, start: {} };
  const chosen = (trace) => settings().params ?? defaultParams(trace);

  function say(text) {
    message.textContent = text;
    message.hidden = !text;
  }

  function redraw() {
    const { steps } = settings();
    const loss = run.losses.at(-1);
    status.textContent = run.losses.length ? t("ui.train.status", { step: steps, root: compactText(loss) }) : t("ui.train.status_start");
    drawChart(run.losses, { log: logScale.checked });
    playButton.textContent = t(playing ? "ui.transport.pause" : "ui.transport.play");
    playButton.setAttribute("aria-pressed", String(playing));
    const off = state.lab !== "train" || !state.trace;
    for (const el of [stepButton, resetButton, lr, momentum]) el.disabled = off || replaying;
    stepButton.disabled ||= playing || busy;
    playButton.disabled = off || replaying;
  }

  function forget({ keepStart = false } = {}) {
    run = { losses: [], velocity: null, queue: [], applied: null };
    const trace = state.trace;
    const start = keepStart ? settings().start : trace ? leafValues(trace) : {};
    update({ train: { ...settings(), steps: 0, start } });
  }

  // One request at a time: a second waits for the first, then continues from its last step.
  let inflight = null;
  async function fetchSteps(count, from = null) {
    while (inflight) await inflight.catch(() => {});
    inflight = requestSteps(count, from);
    try {
      return await inflight;
    } finally {
      inflight = null;
    }
  }

  /**
   * Ask the server for `count` steps from the values shown (after the queued ones), or from
   * `from` ({values, taken}: a replay's start). Resolves to the reply's `stopped`, or to
   * SUPERSEDED when the run it was asked for was replaced meanwhile (its reply is dropped).
   */
  async function requestSteps(count, from) {
    const trace = state.trace;
    const rate = Number(lr.value);
    const mu = Number(momentum.value || 0);
    if (!(rate > 0) || !Number.isFinite(rate)) throw new ApiError({ type: "BadTraining", message: t("ui.train.bad_lr") });
    if (!(mu >= 0 && mu < 1)) throw new ApiError({ type: "BadTraining", message: t("ui.train.bad_momentum") });
    const parameters = chosen(trace);
    if (parameters.length === 0) throw new ApiError({ type: "BadTraining", message: t("ui.train.no_params") });
    const values = { ...leafValues(trace), ...(from ? from.values : run.queue.at(-1)?.values ?? {}) };
    const taken = from ? from.taken : settings().steps + run.queue.length;
    const body = {
      source: state.source, values, parameters, lr: rate, steps: count, momentum: mu, first_step: taken,
    };
    if (run.velocity) body.velocity = run.velocity;
    if (run.losses.length) body.baseline = run.losses[0];
    const asked = run;
    let reply;
    try {
      reply = await postDescend(body);
    } catch (err) {
      if (run !== asked) return SUPERSEDED;
      throw err;
    }
    if (run !== asked) return SUPERSEDED;
    if (run.losses.length === 0) run.losses = [reply.roots[0]];
    reply.values.forEach((row, k) => {
      run.queue.push({ values: Object.fromEntries(reply.parameters.map((name, j) => [name, row[j]])), root: reply.roots[k + 1] });
    });
    if (reply.stopped && reply.roots.length > reply.values.length + 1) {
      // The root that made descent stop (no step of values came with it): shown with the last step.
      run.queue.push({ values: null, root: reply.roots.at(-1) });
    }
    run.velocity = reply.velocity;
    return reply.stopped;
  }

  /** Show the next queued step: the sliders move, the curve grows. */
  function showNext() {
    const next = run.queue.shift();
    if (!next) return;
    run.losses.push(next.root);
    if (next.values) {
      run.applied = { ...state.values, ...next.values };
      update({ train: { ...settings(), steps: settings().steps + 1 } });
      setValues(run.applied);
    }
    redraw();
  }

  async function step() {
    if (busy || playing) return;
    busy = true;
    say("");
    redraw();
    try {
      const stopped = await fetchSteps(1);
      if (stopped === SUPERSEDED) return;
      while (run.queue.length) showNext();
      if (stopped) say(stopped.message);
    } catch (err) {
      say(err.detail?.message ?? String(err));
    } finally {
      busy = false;
      redraw();
    }
  }

  let playToken = 0; // a newer Play (or Pause, Reset) retires an older play loop
  async function play() {
    playToken += 1;
    if (playing) {
      playing = false;
      redraw();
      return;
    }
    const token = playToken;
    const current = () => token === playToken && playing;
    playing = true;
    say("");
    redraw();
    let stopped = null;
    let shown = 0;
    try {
      while (current() && shown < PLAY_MAX_STEPS) {
        if (run.queue.length === 0) {
          if (stopped) break;
          stopped = await fetchSteps(BATCH);
          if (stopped === SUPERSEDED) return;
          if (run.queue.length === 0) break;
        }
        if (!current()) return;
        showNext();
        shown += 1;
        await new Promise((resolve) => setTimeout(resolve, PLAY_STEP_MS));
      }
    } catch (err) {
      if (token === playToken) say(err.detail?.message ?? String(err));
    }
    if (token !== playToken) return;
    if (stopped && run.queue.length === 0) say(stopped.message);
    playing = false;
    redraw();
  }

  function reset() {
    playing = false;
    playToken += 1;
    const { start } = settings();
    say("");
    run = { losses: [], velocity: null, queue: [], applied: null };
    update({ train: { ...settings(), steps: 0 } });
    if (Object.keys(start).length) {
      run.applied = { ...state.values, ...start };
      setValues(run.applied);
    }
    redraw();
  }

  /** A shared link's run: `steps` steps from `start`, fetched in batches and shown at once. */
  async function replay(steps) {
    replaying = true;
    redraw();
    run = { losses: [], velocity: null, queue: [], applied: null };
    const start = settings().start;
    try {
      let stopped = null;
      let last = { ...start };
      let taken = 0;
      while (!stopped && taken < steps) {
        stopped = await fetchSteps(Math.min(BATCH * 20, steps - taken), { values: last, taken });
        if (stopped === SUPERSEDED) return;
        const rows = run.queue.filter((next) => next.values);
        if (rows.length === 0) break;
        taken += rows.length;
        last = { ...last, ...rows.at(-1).values };
        run.losses.push(...run.queue.map((next) => next.root));
        run.queue = [];
      }
      update({ train: { ...settings(), steps: taken } });
      run.applied = { ...state.values, ...last };
      setValues(run.applied);
      if (stopped) say(stopped.message);
    } catch (err) {
      say(err.detail?.message ?? String(err));
    } finally {
      replaying = false;
      redraw();
    }
  }

  stepButton.addEventListener("click", step);
  playButton.addEventListener("click", play);
  resetButton.addEventListener("click", reset);
  logScale.addEventListener("change", redraw);
  lr.addEventListener("change", () => update({ train: { ...settings(), lr: Number(lr.value) } }));
  momentum.addEventListener("change", () => update({ train: { ...settings(), momentum: Number(momentum.value || 0) } }));
  params.addEventListener("change", () => {
    const names = [...params.querySelectorAll("input:checked")].map((box) => box.dataset.name);
    update({ train: { ...settings(), params: names } });
  });

  let drawnLeaves = "";
  let pendingReplay = null;
  subscribe((s, changed) => {
    const on = s.lab === "train";
    toggle.set(on);
    section.classList.toggle("active", on);
    body.hidden = !on;
    document.body.classList.toggle("training", on); // presentation mode keeps the Train card on screen
    if (changed.has("lab")) {
      if (on && !s.train) update({ train: { ...settings(), start: s.trace ? leafValues(s.trace) : {} } });
      if (!on) {
        playing = false;
        if (s.train) update({ train: null });
        run = { losses: [], velocity: null, queue: [], applied: null };
        say("");
      }
    }
    // A link's Train lab (state.train set from the URL) opens the lab.
    if (changed.has("train") && s.train && !on && !changed.has("lab")) {
      setLab("train");
      return;
    }
    if ((changed.has("train") || changed.has("lab")) && s.train) {
      if (String(s.train.lr) !== lr.value && document.activeElement !== lr) lr.value = String(s.train.lr);
      if (String(s.train.momentum) !== momentum.value && document.activeElement !== momentum) momentum.value = String(s.train.momentum);
    }
    // A new program: a new run (the parameters that still exist stay ticked).
    if (changed.has("source") && !changed.has("train")) {
      playing = false;
      if (s.train) {
        run = { losses: [], velocity: null, queue: [], applied: null };
        pendingReplay = null;
        update({ train: { ...s.train, steps: 0, start: {} } });
      }
    }
    // Values moved by hand (a slider, a preset): the run starts again from them.
    if (changed.has("values") && on && run.applied && s.values !== run.applied && !replaying) {
      playing = false;
      forget();
      say("");
    }
    if (changed.has("trace") && s.trace) {
      const names = s.trace.leaves.map((l) => `${l.name}:${l.label ?? ""}`).join(",");
      if (names !== drawnLeaves) {
        drawnLeaves = names;
        const ticked = new Set(chosen(s.trace));
        params.replaceChildren(h("legend", { text: t("ui.train.parameters") }), ...s.trace.leaves.map((leaf) => h("label", { class: "train-param" },
          h("input", { type: "checkbox", "data-testid": `train-param-${leaf.name}`, "data-name": leaf.name, checked: ticked.has(leaf.name) }),
          ` ${leaf.label || leaf.name}`)));
      }
      if (on && s.train && Object.keys(s.train.start).length === 0 && !replaying) {
        update({ train: { ...s.train, start: leafValues(s.trace) } });
      }
      // A shared link's run, once its program is on the page.
      if (on && pendingReplay === null && s.train?.steps > 0 && run.losses.length === 0 && !replaying) {
        pendingReplay = s.train.steps;
        replay(pendingReplay);
      }
    }
    redraw();
  });
  return section;
}
