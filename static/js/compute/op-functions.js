// Generated from engine/ops.py (javascript_module, by make bundle): do not edit.
const pow = (x, y) => (x === 1 || (x === -1 && Math.abs(y) === Infinity) ? 1 : Math.pow(x, y));
const divWarning = (x, y) => (y === 0 ? "division_by_zero" : null);
const powWarning = (x, y) => {
  if (!Number.isFinite(x) || !Number.isFinite(y)) return null;
  const r = pow(x, y);
  if (Number.isFinite(r)) return null;
  return x === 0 ? "division_by_zero" : r !== r ? "domain" : "overflow";
};
const expWarning = (x) => (Number.isFinite(x) && Math.exp(x) === Infinity ? "overflow" : null);
const logWarning = (x) => (x === 0 ? "division_by_zero" : x < 0 ? "domain" : null);
export const OPS = {
  '+': {
    arity: 2,
    exact: true,
    forward: (a, b, k) => a + b,
    locals: (a, b, k, out) => [1, 1],
    warning: (a, b, k) => null,
    gate: false,
    saturation: null,
  },
  '*': {
    arity: 2,
    exact: true,
    forward: (a, b, k) => a * b,
    locals: (a, b, k, out) => [b, a],
    warning: (a, b, k) => null,
    gate: false,
    saturation: null,
  },
  '**k': {
    arity: 1,
    exact: false,
    forward: (a, b, k) => pow(a, k),
    locals: (a, b, k, out) => [k === 0 ? 0 : k * pow(a, k - 1)],
    warning: (a, b, k) => powWarning(a, k),
    gate: false,
    saturation: null,
  },
  '**': {
    arity: 2,
    exact: false,
    forward: (a, b, k) => pow(a, b),
    locals: (a, b, k, out) => [b === 0 ? 0 : b * pow(a, b - 1), a > 0 ? out * Math.log(a) : (a === 0 && b >= 0 ? 0 : NaN)],
    warning: (a, b, k) => powWarning(a, b),
    gate: false,
    saturation: null,
  },
  '-': {
    arity: 2,
    exact: true,
    forward: (a, b, k) => a + b * -1,
    locals: (a, b, k, out) => [1, -1],
    warning: (a, b, k) => null,
    gate: false,
    saturation: null,
  },
  '/': {
    arity: 2,
    exact: false,
    forward: (a, b, k) => a * pow(b, -1),
    locals: (a, b, k, out) => [pow(b, -1), a * (-1 * pow(b, -2))],
    warning: (a, b, k) => powWarning(b, -1),
    gate: false,
    saturation: null,
  },
  'neg': {
    arity: 1,
    exact: true,
    forward: (a, b, k) => a * -1,
    locals: (a, b, k, out) => [-1],
    warning: (a, b, k) => null,
    gate: false,
    saturation: null,
  },
  'relu': {
    arity: 1,
    exact: true,
    forward: (a, b, k) => a <= 0 ? 0 : a,
    locals: (a, b, k, out) => [a > 0 ? 1 : 0],
    warning: (a, b, k) => null,
    gate: true,
    saturation: null,
  },
  'tanh': {
    arity: 1,
    exact: false,
    forward: (a, b, k) => Math.tanh(a),
    locals: (a, b, k, out) => [1 - out * out],
    warning: (a, b, k) => null,
    gate: true,
    saturation: (a, b, k, out) => out,
  },
  'exp': {
    arity: 1,
    exact: false,
    forward: (a, b, k) => Math.exp(a),
    locals: (a, b, k, out) => [out],
    warning: (a, b, k) => expWarning(a),
    gate: false,
    saturation: null,
  },
  'log': {
    arity: 1,
    exact: false,
    forward: (a, b, k) => Math.log(a),
    locals: (a, b, k, out) => [1 / a],
    warning: (a, b, k) => logWarning(a),
    gate: false,
    saturation: null,
  },
  'sigmoid': {
    arity: 1,
    exact: false,
    forward: (a, b, k) => a >= 0 ? 1 / (1 + Math.exp(-a)) : Math.exp(a) / (1 + Math.exp(a)),
    locals: (a, b, k, out) => [out * (1 - out)],
    warning: (a, b, k) => (a >= 0 ? expWarning(-a) ?? divWarning(1, 1 + Math.exp(-a)) : expWarning(a) ?? expWarning(a) ?? divWarning(Math.exp(a), 1 + Math.exp(a))),
    gate: true,
    saturation: (a, b, k, out) => 2 * out - 1,
  },
  'sin': {
    arity: 1,
    exact: false,
    forward: (a, b, k) => Math.sin(a),
    locals: (a, b, k, out) => [Math.cos(a)],
    warning: (a, b, k) => null,
    gate: false,
    saturation: null,
  },
  'copy': {
    arity: 1,
    exact: true,
    forward: (a, b, k) => a,
    locals: (a, b, k, out) => [1],
    warning: (a, b, k) => null,
    gate: false,
    saturation: null,
  },
};
/** The table's key of a node of a reply: its op, or `**k` for `**` with a constant exponent. */
export const opKey = (node) => (node.op === "**" && node.exponent !== null && node.exponent !== undefined ? "**k" : node.op);
/** Node `i`'s data written to `data[i]` and its local derivatives to `local` from `edge` on (engine/ops.py javascript_forward_into). */
export function forwardInto(code, data, i, left, right, exponents, local, edge) {
  const a = data[left];
  const b = right < 0 ? 0 : data[right];
  const k = exponents[i];
  switch (code) {
    case 0: { const out = a + b; data[i] = out; local[edge] = 1; local[edge + 1] = 1; return; }
    case 1: { const out = a * b; data[i] = out; local[edge] = b; local[edge + 1] = a; return; }
    case 2: { const out = pow(a, k); data[i] = out; local[edge] = k === 0 ? 0 : k * pow(a, k - 1); return; }
    case 3: { const out = pow(a, b); data[i] = out; local[edge] = b === 0 ? 0 : b * pow(a, b - 1); local[edge + 1] = a > 0 ? out * Math.log(a) : (a === 0 && b >= 0 ? 0 : NaN); return; }
    case 4: { const out = a + b * -1; data[i] = out; local[edge] = 1; local[edge + 1] = -1; return; }
    case 5: { const out = a * pow(b, -1); data[i] = out; local[edge] = pow(b, -1); local[edge + 1] = a * (-1 * pow(b, -2)); return; }
    case 6: { const out = a * -1; data[i] = out; local[edge] = -1; return; }
    case 7: { const out = a <= 0 ? 0 : a; data[i] = out; local[edge] = a > 0 ? 1 : 0; return; }
    case 8: { const out = Math.tanh(a); data[i] = out; local[edge] = 1 - out * out; return; }
    case 9: { const out = Math.exp(a); data[i] = out; local[edge] = out; return; }
    case 10: { const out = Math.log(a); data[i] = out; local[edge] = 1 / a; return; }
    case 11: { const out = a >= 0 ? 1 / (1 + Math.exp(-a)) : Math.exp(a) / (1 + Math.exp(a)); data[i] = out; local[edge] = out * (1 - out); return; }
    case 12: { const out = Math.sin(a); data[i] = out; local[edge] = Math.cos(a); return; }
    case 13: { const out = a; data[i] = out; local[edge] = 1; return; }
    default: throw new Error(`no row at ${code}`);
  }
}
// The engine's constants the page computes with (engine/page_module.py).
export const GRADCHECK_MAX_LEAVES = 64;
export const GRADCHECK_MAX_NODES = 5000;
export const GRADCHECK_EPS_RULE = "1e-6·max(1,|x|)";
export const GRADCHECK_ROUNDING = 8.881784197001252e-16;
export const FLAG_VANISHING = 1e-06;
export const FLAG_EXPLODING = 1000000.0;
export const FLAG_SATURATED = 0.999;
export const DESCENT_MAX_STEPS = 200;
export const QUOTE_MAX = 40;
export const SCRIPT_NAMES = ["vpow", "tanh", "exp", "log", "sigmoid", "sin", "_div", "_pow", "_exp", "_log", "_sin", "_cos"];
export const REQUEST_OPTIONS = {"expand_derived": false, "mode": "correct", "order": null, "target": null, "pass": "reverse", "wrt": null};
export const TENSOR_PROGRAM = "tensor\\s*\\(\\s*\\[(?!\\s*[-+]?(?:\\d+\\.?\\d*|\\.\\d+)(?:[eE][-+]?\\d+)?\\s*\\])|\\b(?:randn|randint|zeros|ones|arange|one_hot|softmax|cross_entropy|Generator)\\s*\\(|[\\w)\\]][ \\t]*@(?!=)";
export const TENSOR_GRAPH_LEAF = -1;
export const TENSOR_GRAPH_CONSTANT = -2;
