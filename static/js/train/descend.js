// Gradient descent in the page: engine/descend.py's `descend`, executed again on a compiled
// structure (compute/evaluator.js), so the Train lab steps without a round trip, and from file:// in a
// one-file page or an embedded player. The reply is POST /api/descend's, field for field:
// {parameters, roots, values, velocity, stopped}, its numbers as a reply writes them (non-finite
// ones as "NaN", "Infinity", "-Infinity"), its sentence in the page's language.
//
// The engine's order of work, so that the same IEEE operations give the same numbers: per step
// a forward pass at the current values and the root's backward pass (compute/evaluator.js forwardPass
// and correctGrads, the engine's Value.backward), then for every parameter in order
// `v ← μ·v + ∂root/∂p; p ← p − lr·v`. The stop rules are engine/descend.py's `_stop`, `_rose`
// and `_stopped`, with its messages (`descent.*` in locales/*.json, core/i18n.js) and numbers written
// by its `fmt` (core/narration.js). tests/engine/test_page_descend.py and
// tests/browser/test_descend_in_chromium.py run both executions on the same cases.
//
//   const structure = compileStructure(trace);   // once per structure (compute/instant-numbers.js pageStructure)
//   const reply = descend(structure, body);      // body: POST /api/descend's, or null: the server's

import { correctGrads, forwardPass, toJson } from "../compute/evaluator.js";
// What one reply may hold (engine/descend.py MAX_STEPS), and how long a name in a message may be.
import { DESCENT_MAX_STEPS as MAX_STEPS, QUOTE_MAX } from "../compute/op-functions.js";
import { t } from "../core/i18n.js";
import { fmt } from "../core/narration.js";

/** engine/errors.py `quoted`: a name for a message, at most QUOTE_MAX characters. */
const quoted = (text) => (text.length <= QUOTE_MAX ? text : `${text.slice(0, QUOTE_MAX - 1)}…`);

const isNumber = (x) => typeof x === "number";

/** CPython's math.isclose, its comparisons in its order (NaN is close to nothing). */
function isClose(a, b, relTol, absTol) {
  if (a === b) return true;
  if (Math.abs(a) === Infinity || Math.abs(b) === Infinity) return false;
  const diff = Math.abs(b - a);
  return diff <= Math.abs(relTol * b) || diff <= Math.abs(relTol * a) || diff <= absTol;
}

/** engine/descend.py `_rose`: higher than `before` by more than rounding. */
const rose = (root, before) => root > before && !isClose(root, before, 1e-9, 1e-300);

/** engine/descend.py `_stopped`: a run stopped at `step`; the sentence says `what` happened and
 *  suggests a rate ten times smaller. */
function stopped(step, reason, what, lr) {
  return { step, reason, message: t("descent.stopped", { step, what, lr: fmt(lr), smaller: fmt(lr / 10) }) };
}

/** engine/descend.py `_stop`: why descent stops at this call's `step` (numbered `number` in the
 *  whole run), or null; `previous` is the root one step before when every step must lower it. */
function stopAt(step, number, root, previous, start, lr) {
  if (number === 0 && !Number.isFinite(root)) {
    return { step: 0, reason: "nonfinite", message: t("descent.cannot_start", { root: fmt(root) }) };
  }
  if (!Number.isFinite(root)) return stopped(number, "nonfinite", t("descent.became", { root: fmt(root) }), lr);
  if (previous !== null && rose(root, previous)) {
    return stopped(number, "diverged", t("descent.rose", { before: fmt(previous), root: fmt(root) }), lr);
  }
  if (step > 0 && rose(root, start)) {
    return stopped(number, "diverged", t("descent.climbed", { root: fmt(root), start: fmt(start) }), lr);
  }
  return null;
}

/**
 * `body`'s settings when the engine would take them for structure `s` (engine/descend.py
 * check_settings, _check_batch, check_values, check_parameters, _velocity), else null: a body it
 * refuses is the server's to answer, in its words. Every leaf must have a value in `body.values`
 * (the engine's default for a missing one is the program's, which the structure does not hold).
 */
function settingsOf(s, body) {
  const { parameters, lr, steps, momentum = 0, velocity = null, baseline = null, first_step: firstStep = 0 } = body;
  const values = body.values ?? {};
  if (!isNumber(lr) || !Number.isFinite(lr) || !(lr > 0)) return null;
  if (!Number.isInteger(steps) || steps < 1 || steps > MAX_STEPS) return null;
  if (!isNumber(momentum) || !(momentum >= 0 && momentum < 1)) return null;
  if (!Number.isInteger(firstStep) || firstStep < 0) return null;
  if (baseline !== null && !isNumber(baseline)) return null;
  if (!Object.values(values).every((x) => isNumber(x) && Number.isFinite(x))) return null;
  const leaves = new Map(s.leaves.map((leaf) => [leaf.name, leaf.index]));
  if (![...leaves.keys()].every((name) => Object.hasOwn(values, name))) return null;
  if (!Array.isArray(parameters) || parameters.length === 0 || new Set(parameters).size !== parameters.length) return null;
  if (!parameters.every((name) => leaves.has(name))) return null;
  const carried = velocity !== null && Object.keys(velocity).length > 0; // Python: `if velocity`
  const speed = parameters.map((name) => (carried && Object.hasOwn(velocity, name) ? velocity[name] : 0));
  if (!speed.every((x) => isNumber(x) && Number.isFinite(x))) return null;
  // A prototype-less copy: a leaf may be named `__proto__` or `constructor`.
  const current = Object.assign(Object.create(null), values);
  return { parameters, lr, steps, momentum, baseline, firstStep, speed, leaves, current };
}

/**
 * engine/descend.py `_move`: one step on every parameter (`speed`, `current` updated in place)
 * with the root's gradients `grad`; the sentence of a parameter no longer finite, else null.
 */
function move(run, grad) {
  const { parameters, leaves, current, speed, lr, momentum } = run;
  parameters.forEach((name, j) => {
    speed[j] = momentum * speed[j] + grad[leaves.get(name)];
    current[name] = current[name] - lr * speed[j];
  });
  const bad = parameters.find((name) => !Number.isFinite(current[name]));
  return bad === undefined ? null : t("descent.not_finite", { name: quoted(bad) });
}

/**
 * `body.steps` steps of gradient descent (POST /api/descend's body: parameters, lr, steps,
 * momentum, velocity, baseline, first_step, values) on compiled structure `s`: the reply the
 * server gives for it, or null when the engine would refuse the body (see settingsOf).
 */
export function descend(s, body) {
  // The body as the request's JSON would carry it to the server: −0 as 0 (a leaf at −0 would
  // make 1/x −∞ here and ∞ there), a non-finite number as null (refused, as there).
  const run = settingsOf(s, JSON.parse(JSON.stringify(body)));
  if (run === null) return null;
  const { parameters, steps, momentum, firstStep, lr, current } = run;
  const roots = [];
  const values = [];
  let stop = null;
  let pass = forwardPass(s, current);
  const start = run.baseline ?? pass.data[s.root];
  for (let step = 0; step <= steps; step += 1) {
    const root = pass.data[s.root];
    roots.push(root);
    const previous = step > 0 && momentum === 0 ? roots.at(-2) : null;
    stop = stopAt(step, firstStep + step, root, previous, start, lr);
    if (stop || step === steps) break;
    const broken = move(run, correctGrads(s, pass.local));
    if (broken !== null) {
      stop = stopped(firstStep + step + 1, "nonfinite", broken, lr);
      break;
    }
    values.push(parameters.map((name) => current[name]));
    pass = forwardPass(s, current);
  }
  return {
    parameters: [...parameters],
    roots: roots.map(toJson),
    values: values.map((row) => row.map(toJson)),
    velocity: Object.fromEntries(parameters.map((name, j) => [name, toJson(run.speed[j])])),
    stopped: stop,
  };
}
