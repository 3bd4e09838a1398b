// The tests' side of the page's descent (not loaded by the page): static/js/train/descend.js run on the
// bodies the engine answered, each reply compared with the engine's. Run by Node next to a copy
// of the page's modules (tests/engine/test_page_descend.py) and by Chromium from the served page's
// module folder (tests/browser/test_descend_in_chromium.py).
//
// Two comparisons, both per case ({trace, ui, batches, singles}):
// - `batches`: the engine's run as the Train lab asks for it (batches chained from its own
//   replies: values, velocity, baseline, first_step); the page's reply to each body must be the
//   engine's, number for number and word for word (`same`), where `exact` says every number of the
//   program is IEEE arithmetic alone; else the steps that agree to the bit are counted.
// - `singles`: one step from each state of the engine's run. Step for step the page's numbers
//   must be within what compute/evaluator.js `tolerances` allows the gradients and the root at that state
//   (0 where no V8 Math function took part: then to the bit), carried through
//   v ← μ·v + g and p ← p − lr·v, and the stop the same.

import { compileStructure, evaluateNumbers, fromJson, MATCH_ULPS, tolerances } from "./compute/evaluator.js";
import { withStepObjects } from "./core/step-columns.js";
import { descend } from "./train/descend.js";
import { useCatalogue } from "./core/i18n.js";

/** The spacing of doubles at |x| (0 for a non-finite x). */
function ulp(x) {
  const size = Math.abs(x);
  if (!Number.isFinite(size)) return 0;
  if (size < 2 ** -1021) return 2 ** -1074;
  let power = 2 ** Math.floor(Math.log2(size));
  if (power > size) power /= 2;
  return power * 2 ** -52;
}

/** The same JSON value: numbers by Object.is (−0 is not 0), objects key by key. */
export function same(x, y) {
  if (typeof x === "number" || typeof y === "number") return Object.is(x, y);
  if (x === null || y === null || typeof x !== "object" || typeof y !== "object") return x === y;
  if (Array.isArray(x) !== Array.isArray(y)) return false;
  const keys = Object.keys(x);
  return keys.length === Object.keys(y).length && keys.every((k) => Object.hasOwn(y, k) && same(x[k], y[k]));
}

/** How many of the reply's steps agree to the bit (values rows, with their roots). */
function agreeingSteps(page, expected) {
  let k = 0;
  while (k < expected.values.length && same(page.values[k], expected.values[k]) && same(page.roots[k], expected.roots[k])) k += 1;
  return k;
}

/** Whether x and y (reply numbers) are within `allowed` (Infinity: anything; else non-finite ones equal). */
function within(x, y, allowed) {
  if (allowed === Infinity) return true;
  const [a, b] = [fromJson(x), fromJson(y)];
  if (!Number.isFinite(a) || !Number.isFinite(b)) return Object.is(a, b) || (a !== a && b !== b);
  return Math.abs(a - b) <= allowed;
}

/** The margin the evaluator gives a bound: twice it and MATCH_ULPS ulps, 0 for an exact number. */
const margin = (bound, x) => (bound === 0 ? 0 : 2 * bound + MATCH_ULPS * ulp(fromJson(x)));

/**
 * What may differ in the page's one step from `body` (the engine's state) against the engine's
 * `expected`: per parameter its velocity's and new value's bound, and the root's at the start.
 * The gradient's bound is tolerances().correct_grad at the leaf; v ← μ·v + g adds one rounding,
 * p ← p − lr·v the product's and the difference's.
 */
function stepBounds(s, body, expected) {
  const bound = tolerances(s, body.values);
  const leaves = new Map(s.leaves.map((leaf) => [leaf.name, leaf.index]));
  const params = body.parameters.map((name, j) => {
    const gradient = bound.correct_grad[leaves.get(name)];
    const v = fromJson(expected.velocity[name]);
    const ev = gradient === 0 ? 0 : gradient + ulp(v);
    const p = expected.values.length ? fromJson(expected.values[0][j]) : 0;
    const ep = ev === 0 ? 0 : body.lr * ev + ulp(body.lr * v) + ulp(p);
    return { velocity: Number.isFinite(ev) ? ev : Infinity, value: Number.isFinite(ep) ? ep : Infinity };
  });
  return { root: bound.data[s.root], params };
}

/**
 * Whether a stop the page and the engine disagree on, with every number of the step within its
 * bound, is the root's being finite or not at the new values: the page's evaluator at the
 * engine's new values finds the root as the engine's stop says. A value one rounding from a
 * function's edge lands on either side (`(q ** .5) ** 2` stepped from 0.5 by 0.5·grad: V8's
 * pow(0.5, −0.5) is an ulp under glibc's, q becomes 0 on the page and −1e−16 in the engine,
 * whose root is nan); the page's rule on the engine's own numbers is the engine's decision.
 */
function rootDecides(s, body, page, expected) {
  const nonfinite = (reply) => reply.stopped?.reason === "nonfinite";
  const [stopped, other] = nonfinite(page) ? [page, expected] : [expected, page];
  if (!nonfinite(stopped) || other.stopped || stopped.stopped.step !== body.first_step + 1) return false;
  if (!expected.values.length) return false;
  const moved = Object.fromEntries(body.parameters.map((name, j) => [name, expected.values[0][j]]));
  const root = evaluateNumbers(s, { ...body.values, ...moved }).data[s.root];
  return (expected.stopped?.reason === "nonfinite") === !Number.isFinite(root);
}

/** Where the page's one step differs from the engine's beyond `stepBounds` (a list, empty when none). */
function stepDifferences(s, body, page, expected) {
  const { root, params } = stepBounds(s, body, expected);
  const found = [];
  const check = (what, x, y, bound) => {
    if (!within(x, y, margin(bound, y))) found.push({ what, page: x, engine: y, bound });
  };
  check("roots[0]", page.roots[0], expected.roots[0], root);
  if (page.values.length !== expected.values.length) found.push({ what: "steps", page: page.values.length, engine: expected.values.length });
  body.parameters.forEach((name, j) => {
    check(`velocity.${name}`, page.velocity[name], expected.velocity[name], params[j].velocity);
    if (page.values.length && expected.values.length) check(`values[0].${name}`, page.values[0][j], expected.values[0][j], params[j].value);
  });
  const exact = root === 0 && params.every((p) => p.velocity === 0 && p.value === 0);
  if (exact && !same(page, expected)) found.push({ what: "reply", page, engine: expected });
  // The stop: where every number it reads was in reach, the same one (its sentence too when
  // every number agreed to the bit).
  const reachable = root !== Infinity && params.every((p) => p.value !== Infinity && p.velocity !== Infinity);
  const stop = (reply) => (reply.stopped ? [reply.stopped.reason, reply.stopped.step] : null);
  if (reachable && !same(stop(page), stop(expected)) && !(found.length === 0 && rootDecides(s, body, page, expected))) {
    found.push({ what: "stopped", page: page.stopped, engine: expected.stopped });
  }
  if (found.length === 0 && same(page.roots, expected.roots) && !same(page.stopped, expected.stopped)) {
    found.push({ what: "message", page: page.stopped, engine: expected.stopped });
  }
  return found;
}

/**
 * Each case's results: per batch {page (the page's reply), same, agreeing (steps equal to the
 * bit)}, per single step the differences found (empty lists when none).
 */
export function checkCases(cases) {
  return cases.map(({ trace, ui, batches, singles }) => {
    useCatalogue(ui);
    const s = compileStructure(withStepObjects(trace)); // an /api/graph reply: its steps as columns
    return {
      batches: batches.map(({ body, expected }) => {
        const page = descend(s, body);
        return { page, same: same(page, expected), agreeing: page ? agreeingSteps(page, expected) : -1 };
      }),
      singles: singles.map(({ body, expected }) => {
        const page = descend(s, body);
        return page === null ? [{ what: "refused", body }] : stepDifferences(s, body, page, expected);
      }),
    };
  });
}
