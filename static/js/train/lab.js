// The Train lab: gradient descent on the leaves the learner ticks. One step is
// p ← p − lr · ∂root/∂p for every parameter, computed by the scope's server.descend (the page's
// own train/descend.js on the graph shown where it can, else POST /api/descend: the same reply); the
// lab moves the sliders to each step's values (the graph's numbers follow, the pulse step is
// kept) and draws the loss curve. Play asks for batches of steps and shows them one at a time.
//
// `state.train` ({lr, momentum, params, steps, start}, null while the lab is off) is what a share
// link carries: opening one replays `steps` steps from the `start` values, exactly.
//
// Before the first step the lab is guessing (train/guess.js): each point the learner moves the
// parameters to is a try, and Step or Play starts descent from the best one (`start` becomes
// it). The chart shows the tries before the steps; with two parameters ticked, the loss
// landscape (train/landscape-range.js, given by a player whose server draws grids: the page's) shows
// both on the contours of the function.

import { ApiError } from "../core/api-error.js";
import { compactText } from "../core/format.js";
import { t } from "../core/i18n.js";
import { h, setHidden, toggleSwitch } from "../core/dom.js";
import { mountLossChart } from "./loss-chart.js";
import { leafName } from "../core/names.js";
import { createDescent, SUPERSEDED } from "./run.js";
import { bestIndex, freshTrail, guessBlock, recordTry, sameValues } from "./guess.js";

const BATCH = 10;           // steps per request while playing
const PLAY_STEP_MS = 160;   // one shown step per tick
const PLAY_MAX_STEPS = 1000; // a play stops here, whatever the loss does
const DEFAULT_LR = 0.01;

/** Leaves trained by default: every leaf whose name does not start with x or y (the data). */
export function defaultParams(trace) {
  return trace.leaves.map((l) => l.name).filter((name) => !/^[xy]/i.test(name));
}

/** The leaf values the graph shows: the program's, overridden by the sliders' `values`. */
export function leafValues(trace, values) {
  const shown = Object.fromEntries(trace.leaves.map((l) => [l.name, l.value]));
  for (const [name, value] of Object.entries(values)) if (name in shown) shown[name] = value;
  return shown;
}

function numberInput(testid, props) {
  return h("input", { type: "number", "data-testid": testid, id: testid, class: "train-number", inputmode: "decimal", ...props });
}

/** The lab card's elements; `guess` and `landscape`: the guessing block's and the landscape's. */
function trainCard(setLab, { guess, landscape }) {
  const p = {
    toggle: toggleSwitch({
      off: t("ui.lab.off"), on: t("ui.train.on"), label: t("ui.train.label"),
      testId: "lab-train", onChange: (on) => setLab(on ? "train" : null),
    }),
    params: h("fieldset", { class: "train-params" }, h("legend", { text: t("ui.train.parameters") })),
    lr: numberInput("train-lr", { step: "any", min: "0", value: String(DEFAULT_LR) }),
    momentum: numberInput("train-momentum", { step: "0.1", min: "0", max: "0.99", value: "0" }),
    step: h("button", { type: "button", text: t("ui.train.step"), "data-testid": "train-step" }),
    play: h("button", { type: "button", text: t("ui.transport.play"), class: "primary", "data-testid": "train-play", "aria-pressed": "false" }),
    reset: h("button", { type: "button", text: t("ui.train.reset"), "data-testid": "train-reset" }),
    log: h("input", { type: "checkbox", "data-testid": "train-log" }),
    status: h("p", { class: "train-status", "data-testid": "train-status", "aria-live": "polite" }),
    message: h("p", { class: "train-message", "data-testid": "train-message", role: "status" }),
    chart: h("div", { class: "train-chart" }),
  };
  p.body = h("div", { class: "train-body" }, h("div", { class: "train-controls" }, p.params, guess,
    h("div", { class: "train-settings" },
      h("label", { for: "train-lr", text: t("ui.train.lr") }), p.lr,
      h("label", { for: "train-momentum", text: t("ui.train.momentum") }), p.momentum),
    h("div", { class: "train-buttons" }, p.step, p.play, p.reset), p.status, p.message),
    h("div", { class: "train-plots" },
      h("div", { class: "train-curve" }, p.chart, h("label", { class: "toggle train-log" }, p.log, ` ${t("ui.train.log")}`)),
      landscape));
  p.section = h("section", { class: "lab-card lab-train", "aria-labelledby": "lab-train-title" },
    h("h3", { id: "lab-train-title", text: t("ui.train.title") }),
    h("p", { class: "lab-hint", text: t("ui.train.hint") }), p.toggle.element, p.body);
  return p;
}

/** One tick box per leaf, the chosen ones ticked. */
function paramBoxes(p, trace, chosen) {
  const ticked = new Set(chosen);
  p.params.replaceChildren(h("legend", { text: t("ui.train.parameters") }), ...trace.leaves.map((leaf) => h("label", { class: "train-param" },
    h("input", { type: "checkbox", "data-testid": `train-param-${leaf.name}`, "data-name": leaf.name, checked: ticked.has(leaf.name) }),
    ` ${leafName(leaf)}`)));
}

/** The root's value in `trace` (the loss), as the API sends it. */
const rootLoss = (trace) => trace.nodes.find((node) => node.id === trace.root)?.data;

/** The lab's settings (state.train), or a fresh run's while the lab is off. */
const settingsOf = (state) => state.train ?? { lr: DEFAULT_LR, momentum: 0, params: null, steps: 0, start: {} };

/** The leaves trained on `trace`: the ticked ones, else the default ones. */
const chosenOf = (state, trace) => settingsOf(state).params ?? defaultParams(trace);

/** What the next request asks for, or throws a BadTraining ApiError the lab says. */
function descentRequest(state, p) {
  const rate = Number(p.lr.value);
  const mu = Number(p.momentum.value || 0);
  if (!(rate > 0) || !Number.isFinite(rate)) throw new ApiError({ type: "BadTraining", message: t("ui.train.bad_lr") });
  if (!(mu >= 0 && mu < 1)) throw new ApiError({ type: "BadTraining", message: t("ui.train.bad_momentum") });
  const parameters = chosenOf(state, state.trace);
  if (parameters.length === 0) throw new ApiError({ type: "BadTraining", message: t("ui.train.no_params") });
  return { source: state.source, values: leafValues(state.trace, state.values), parameters, lr: rate, momentum: mu, taken: settingsOf(state).steps };
}

/**
 * The lab's controller on `scope`: the settings (state.train), the run shown (train/run.js),
 * the tries (train/guess.js), Step, Play, Reset and a link's replay. `setValues(values)` moves
 * the sliders; `guess` and `landscape` are the guessing block and the landscape to show.
 */
function createTrainer(scope, p, { setValues, guess, landscape }) {
  const { state, update } = scope.store;
  const descent = createDescent(scope.server.descend, () => descentRequest(state, p));
  const trail = freshTrail();
  const drawChart = mountLossChart(p.chart);
  const trainer = {
    state, update, p, guess, landscape, descent, trail, setValues,
    flags: { playing: false, busy: false, replaying: false, playToken: 0 },
    settings: () => settingsOf(state),
    chosen: (trace) => chosenOf(state, trace),
    // Guessing until the first step is shown: every point the graph shows is a try.
    phase: () => (trainer.settings().steps === 0 && descent.run.losses.length === 0 ? "guess" : "descent"),
    bestTry: () => trail.tries[bestIndex(trail)] ?? null,
    say(text) {
      p.message.textContent = text;
      p.message.hidden = !text;
    },
    redraw: () => redrawCard(trainer, drawChart),
    /** A trace shown while guessing: its point is a try. */
    recordTrace(trace) {
      const { flags } = trainer;
      if (trainer.phase() !== "guess" || flags.busy || flags.playing || flags.replaying) return;
      recordTry(trail, leafValues(trace, {}), rootLoss(trace), trainer.chosen(trace));
    },
    /** The learner moved leaves (`moved`: {name: value}) by hand: the sliders, the landscape's point. */
    moveByHand: (moved) => setValues({ ...state.values, ...moved }),
    /** Back to the best guess (a move by hand, to a point tried already). */
    toBest: () => trainer.bestTry() && trainer.moveByHand(trainer.bestTry().values),
    /** The landscape's point moved to (x, y): the two parameters it is drawn over. */
    moveTo({ x, y }) {
      const [px, py] = trainer.chosen(state.trace);
      trainer.moveByHand({ [px]: x, [py]: y });
    },
    forgetTries() {
      trail.tries = [];
    },
  };
  return trainer;
}

/** The card's status, curve, buttons, guessing block and landscape, from the trainer's run. */
function redrawCard(trainer, drawChart) {
  const { p, state, flags, descent, trail } = trainer;
  const { losses } = descent.run;
  p.status.textContent = losses.length ? t("ui.train.status", { step: trainer.settings().steps, root: compactText(losses.at(-1)) }) : t("ui.train.status_start");
  drawChart(losses, { log: p.log.checked, tries: trail.tries.map((tried) => tried.loss), best: trainer.bestTry()?.loss ?? null });
  p.play.textContent = t(flags.playing ? "ui.transport.pause" : "ui.transport.play");
  p.play.setAttribute("aria-pressed", String(flags.playing));
  const off = state.lab !== "train" || !state.trace;
  for (const el of [p.step, p.reset, p.lr, p.momentum]) el.disabled = off || flags.replaying;
  p.step.disabled ||= flags.playing || flags.busy;
  p.play.disabled = off || flags.replaying;
  showGuesses(trainer, off);
}

/** The guessing block and the landscape: the tries, the best guess, the path from it. */
function showGuesses(trainer, off) {
  const { state, guess, landscape, descent, trail } = trainer;
  if (off) return landscape.show({ on: false, params: [] });
  const params = trainer.chosen(state.trace);
  const values = leafValues(state.trace, state.values);
  const pair = (v) => [v[params[0]], v[params[1]]];
  const loss = rootLoss(state.trace);
  guess.show({ phase: trainer.phase(), leaves: state.trace.leaves.filter((l) => params.includes(l.name)), state, loss, trail, params });
  const { start } = trainer.settings();
  const best = trainer.bestTry();
  const leafOf = (name) => state.trace.leaves.find((l) => l.name === name);
  landscape.show({
    on: true, params, source: state.source, values, nodeCount: state.trace.nodes.length, loss,
    names: params.map((name) => leafName(leafOf(name) ?? { name })),
    current: pair(values), best: best && pair(best.values), tries: trail.tries.map((tried) => pair(tried.values)),
    path: descent.run.losses.length ? [start, ...descent.run.path].map((row) => pair({ ...start, ...row })) : [],
  });
}

/** Descent is about to start: from the best try, the sliders moved there (the run's `start`). */
function startAtBest(trainer) {
  const { state, descent } = trainer;
  if (trainer.phase() !== "guess" || !state.trace) return;
  const here = leafValues(state.trace, state.values);
  const best = trainer.bestTry();
  const start = best && !sameValues(best.values, here) ? best.values : here;
  trainer.update({ train: { ...trainer.settings(), start } });
  if (start === here) return;
  descent.run.applied = { ...state.values, ...start };
  trainer.setValues(descent.run.applied);
}

/** Show the next fetched step: the sliders move, the curve grows. */
function showNext(trainer) {
  const { state, descent } = trainer;
  const next = descent.next();
  if (!next) return;
  if (next.values) {
    descent.run.applied = { ...state.values, ...next.values };
    trainer.update({ train: { ...trainer.settings(), steps: trainer.settings().steps + 1 } });
    trainer.setValues(descent.run.applied);
  }
  trainer.redraw();
}

/** Step: one step of descent, fetched and shown. */
async function stepOnce(trainer) {
  const { flags, descent, say, redraw } = trainer;
  if (flags.busy || flags.playing) return;
  flags.busy = true;
  say("");
  startAtBest(trainer);
  redraw();
  try {
    const stopped = await descent.fetch(1);
    if (stopped === SUPERSEDED) return;
    while (descent.run.queue.length) showNext(trainer);
    if (stopped) say(stopped.message);
  } catch (err) {
    say(err.detail?.message ?? String(err));
  } finally {
    flags.busy = false;
    redraw();
  }
}

/** Play (or pause): batches of steps fetched and shown one per tick, until the loss stops. */
async function playOrPause(trainer) {
  const { flags, descent, say, redraw } = trainer;
  flags.playToken += 1;
  if (flags.playing) {
    flags.playing = false;
    redraw();
    return;
  }
  const token = flags.playToken;
  const current = () => token === flags.playToken && flags.playing;
  flags.playing = true;
  say("");
  startAtBest(trainer);
  redraw();
  let stopped = null;
  try {
    for (let shown = 0; current() && shown < PLAY_MAX_STEPS; shown += 1) {
      if (descent.run.queue.length === 0) {
        if (stopped) break;
        stopped = await descent.fetch(BATCH);
        if (stopped === SUPERSEDED) return;
        if (descent.run.queue.length === 0) break;
      }
      if (!current()) return;
      showNext(trainer);
      await new Promise((resolve) => setTimeout(resolve, PLAY_STEP_MS));
    }
  } catch (err) {
    if (token === flags.playToken) say(err.detail?.message ?? String(err));
  }
  if (token !== flags.playToken) return;
  if (stopped && descent.run.queue.length === 0) say(stopped.message);
  flags.playing = false;
  redraw();
}

/** Reset: back to the values the run started from. */
function resetRun(trainer, store) {
  const { flags, descent, settings, say, redraw, setValues } = trainer;
  flags.playing = false;
  flags.playToken += 1;
  const { start } = settings();
  say("");
  descent.forget();
  store.update({ train: { ...settings(), steps: 0 } });
  if (Object.keys(start).length) {
    descent.run.applied = { ...store.state.values, ...start };
    setValues(descent.run.applied);
  }
  redraw();
}

/** A shared link's run: `steps` steps from `start`, fetched in batches and shown at once. */
async function replay(trainer, store, steps) {
  const { flags, descent, settings, say, redraw, setValues } = trainer;
  flags.replaying = true;
  redraw();
  try {
    const { taken, last, stopped } = await descent.replay(settings().start, steps, BATCH * 20);
    if (taken === null) return; // superseded
    store.update({ train: { ...settings(), steps: taken } });
    descent.run.applied = { ...store.state.values, ...last };
    setValues(descent.run.applied);
    if (stopped) say(stopped.message);
  } catch (err) {
    say(err.detail?.message ?? String(err));
  } finally {
    flags.replaying = false;
    redraw();
  }
}

/** The settings' fields write state.train; the buttons run the trainer. */
function listenToCard(p, trainer, store) {
  const { settings } = trainer;
  const { update } = store;
  p.step.addEventListener("click", () => stepOnce(trainer));
  p.play.addEventListener("click", () => playOrPause(trainer));
  p.reset.addEventListener("click", () => resetRun(trainer, store));
  p.log.addEventListener("change", trainer.redraw);
  p.lr.addEventListener("change", () => update({ train: { ...settings(), lr: Number(p.lr.value) } }));
  p.momentum.addEventListener("change", () => update({ train: { ...settings(), momentum: Number(p.momentum.value || 0) } }));
  p.params.addEventListener("change", () => {
    const names = [...p.params.querySelectorAll("input:checked")].map((box) => box.dataset.name);
    update({ train: { ...settings(), params: names } });
  });
}

/** The lab opened or closed: a fresh run's settings, or none. */
function onLab(trainer, store, s, on) {
  const { settings, flags, descent, say } = trainer;
  if (on && !s.train) store.update({ train: { ...settings(), start: s.trace ? leafValues(s.trace, s.values) : {} } });
  if (!on) {
    flags.playing = false;
    if (s.train) store.update({ train: null });
    descent.forget();
    trainer.forgetTries();
    say("");
  }
}

/** A new trace: the parameters' boxes, the run's start, and a link's replay once its program is on. */
function onTrace(trainer, p, store, s, on) {
  const { chosen, flags, descent } = trainer;
  const names = s.trace.leaves.map((l) => `${l.name}:${l.label ?? ""}`).join(",");
  if (names !== trainer.drawnLeaves) {
    trainer.drawnLeaves = names;
    paramBoxes(p, s.trace, chosen(s.trace));
  }
  if (on && s.train && Object.keys(s.train.start).length === 0 && !flags.replaying) {
    store.update({ train: { ...s.train, start: leafValues(s.trace, s.values) } });
  }
  if (on && trainer.pendingReplay === null && s.train?.steps > 0 && descent.run.losses.length === 0 && !flags.replaying) {
    trainer.pendingReplay = s.train.steps;
    replay(trainer, store, trainer.pendingReplay);
  }
}

// A player without the landscape (an embedded player: its grids are the server's).
const noLandscape = () => ({ element: null, show() {} });

/**
 * The Train lab's card on `scope`; `setLab(lab)` makes a lab the active one, `setValues(values)`
 * moves the sliders. `landscape`: train/landscape-range.js landscapeSection where the player has one.
 */
export function trainSection(scope, setLab, { setValues, landscape: landscapeOf = noLandscape }) {
  let trainer = null;
  const guess = guessBlock({ onValue: (name, value) => trainer.moveByHand({ [name]: value }), onBest: () => trainer.toBest() }, scope.store);
  const landscape = landscapeOf(scope, { onMove: (point) => trainer.moveTo(point) });
  const p = trainCard(setLab, { guess: guess.element, landscape: landscape.element });
  trainer = Object.assign(createTrainer(scope, p, { setValues, guess, landscape }), { drawnLeaves: "", pendingReplay: null });
  const { store } = scope;
  listenToCard(p, trainer, store);
  store.subscribe((s, changed) => {
    const on = s.lab === "train";
    p.toggle.set(on);
    p.section.classList.toggle("active", on);
    setHidden(p.body, !on);
    if (changed.has("lab")) onLab(trainer, store, s, on);
    // A link's Train lab (state.train set from the URL) opens the lab.
    if (changed.has("train") && s.train && !on && !changed.has("lab")) {
      setLab("train");
      return;
    }
    if ((changed.has("train") || changed.has("lab")) && s.train) {
      if (String(s.train.lr) !== p.lr.value && document.activeElement !== p.lr) p.lr.value = String(s.train.lr);
      if (String(s.train.momentum) !== p.momentum.value && document.activeElement !== p.momentum) p.momentum.value = String(s.train.momentum);
    }
    // A new program: a new run (the parameters that still exist stay ticked).
    if (changed.has("source") && !changed.has("train")) {
      trainer.flags.playing = false;
      trainer.forgetTries();
      if (s.train) {
        trainer.descent.forget();
        trainer.pendingReplay = null;
        store.update({ train: { ...s.train, steps: 0, start: {} } });
      }
    }
    // Values moved by hand (a slider, a preset): the run starts again from them.
    // After descent, guessing begins again from them (the earlier tries were another run's).
    if (changed.has("values") && on && trainer.descent.run.applied && s.values !== trainer.descent.run.applied && !trainer.flags.replaying) {
      if (trainer.descent.run.losses.length) trainer.forgetTries();
      trainer.flags.playing = false;
      trainer.descent.forget();
      store.update({ train: { ...trainer.settings(), steps: 0, start: s.trace ? leafValues(s.trace, s.values) : {} } });
      trainer.say("");
    }
    if (changed.has("trace") && s.trace) onTrace(trainer, p, store, s, on);
    // The point shown when the lab opens is the first try; each new one another.
    if ((changed.has("trace") || changed.has("lab")) && s.trace && on) trainer.recordTrace(s.trace);
    // A closed lab's card is hidden: drawn again when it opens, not on every slider move.
    if (on || changed.has("lab")) trainer.redraw();
  });
  return p.section;
}
