// What a link carries (share links, the language menu, a teacher's link): which state keys go
// into the URL, under which name and in which notation, and back. No DOM.

// What goes into the URL (share links): name → type. Everything else is derived or transient.
export const URL_FIELDS = {
  preset: { key: "presetId", type: "string" },
  source: { key: "source", type: "string" },
  values: { key: "values", type: "numbers" },
  step: { key: "step", type: "int" },
  expand: { key: "expandDerived", type: "bool" },
  final: { key: "finalGrads", type: "bool" },
  fold: { key: "foldConstants", type: "bool" },
  gradmap: { key: "gradMap", type: "bool" },
  target: { key: "target", type: "string" },
  pass: { key: "pass", type: "pass" },
  wrt: { key: "wrt", type: "string" },
  train: { key: "train", type: "train" },
  lesson: { key: "lessonId", type: "string" },
  stop: { key: "lessonStop", type: "int", when: (s) => Boolean(s.lessonId) },
  hide: { key: "hide", type: "hide" },
  present: { key: "presenting", type: "bool" },
  "3d": { key: "view3d", type: "bool" },
  lang: { key: "lang", type: "lang" },
};

// A link's query, at most (characters): a server reads a request line of 64 KiB (uvicorn; the
// proxy of deploy/nginx.conf too), and a program past it made a reload "Invalid HTTP request".
export const LINK_MAX_CHARS = 32_000;

/** The languages of the page (engine/i18n.py LANGS); another `?lang=` is left out of links. */
const LANGS = ["en", "ru", "et"];

/** The parts of the page a teacher's link can hide (`hide=editor,sliders`), in menu order. */
export const HIDE_KEYS = ["editor", "sliders", "toggles", "labs", "tables", "narration"];

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
// A pair of `values`: a leaf's name, or a tensor leaf's element (`W[1,2]`, docs/tensors.md; a
// hand-written `W[1, 2]` too), its number.
const PAIR = /(?:^|,)([A-Za-z_][A-Za-z0-9_]*(?:\[ *\d+(?: *, *\d+)* *\])?):([^,:]*)(?=,|$)/g;

/** `name:number,…` (`W[1,2]:0.5,b:1`) → {name: number}, leaving out malformed pairs. */
function decodeNumbers(s) {
  const out = {};
  for (const [, name, text] of s.matchAll(PAIR)) {
    const x = Number(text);
    if (text !== "" && Number.isFinite(x)) out[name.replaceAll(" ", "")] = x;
  }
  return out;
}

const encodeNumbers = (v) => Object.entries(v).map(([k, x]) => `${k}:${x}`).join(",");

/**
 * The Train lab in a link: `lr=0.01;m=0;n=20;p=w,b;from=w:0,b:0` (learning rate, momentum,
 * steps taken, parameters (left out: the default ones), the values at step 0).
 */
const trainCodec = {
  encode: (t) => [`lr=${t.lr}`, `m=${t.momentum}`, `n=${t.steps}`, ...(t.params ? [`p=${t.params.join(",")}`] : []),
    `from=${encodeNumbers(t.start ?? {})}`].join(";"),
  decode: (s) => {
    const fields = Object.fromEntries(s.split(";").map((part) => [part.slice(0, part.indexOf("=")), part.slice(part.indexOf("=") + 1)]));
    const lr = Number(fields.lr);
    const momentum = Number(fields.m ?? 0);
    const steps = /^\d+$/.test(fields.n ?? "") ? Number(fields.n) : 0;
    if (!(lr > 0 && Number.isFinite(lr)) || !(momentum >= 0 && momentum < 1)) return undefined;
    const params = fields.p === undefined ? null : fields.p.split(",").filter((name) => NAME.test(name));
    return { lr, momentum, steps, params, start: decodeNumbers(fields.from ?? "") };
  },
};

const codecs = {
  string: { encode: (v) => v, decode: (s) => s },
  int: { encode: (v) => String(v), decode: (s) => (/^\d+$/.test(s) ? Number(s) : undefined) },
  bool: { encode: (v) => (v ? "1" : "0"), decode: (s) => s === "1" },
  numbers: { encode: encodeNumbers, decode: decodeNumbers },
  lang: { encode: (v) => v, decode: (s) => (LANGS.includes(s) ? s : undefined) },
  // Reverse mode is the default: only forward mode goes into a link.
  pass: { encode: (v) => (v === "forward" ? v : ""), decode: (s) => (s === "forward" ? s : undefined) },
  train: trainCodec,
  hide: {
    encode: (keys) => keys.join(","),
    decode: (s) => HIDE_KEYS.filter((key) => s.split(",").includes(key)),
  },
};

/** The URL query parameters describing `s` (only non-default fields). */
export function toUrlParams(s) {
  const params = new URLSearchParams();
  for (const [name, { key, type, when = () => true }] of Object.entries(URL_FIELDS)) {
    const value = s[key];
    if (value === "" || value === false || value == null || !when(s)) continue;
    if (type === "numbers" && Object.keys(value).length === 0) continue;
    if (type === "hide" && value.length === 0) continue;
    const text = codecs[type].encode(value);
    if (text !== "") params.set(name, text); // reverse mode, the default, is no `pass=`
  }
  return params;
}

/**
 * The query of the page's own URL for `s`: its link, or, past LINK_MAX_CHARS, the link without
 * its program (`preset`, `source`, `values`) and with `kept=1`: the program kept in the tab
 * (io/share.js). `kept` says which.
 */
export function pageQuery(s) {
  const params = toUrlParams(s);
  const query = params.toString();
  if (query.length <= LINK_MAX_CHARS) return { query, kept: false };
  for (const name of ["preset", "source", "values"]) params.delete(name);
  params.set("kept", "1");
  return { query: params.toString(), kept: true };
}

/** A state patch read from URL query parameters; unknown or malformed fields are ignored. */
export function fromUrlParams(params) {
  const patch = {};
  for (const [name, { key, type }] of Object.entries(URL_FIELDS)) {
    if (!params.has(name)) continue;
    const value = codecs[type].decode(params.get(name));
    if (value !== undefined) patch[key] = value;
  }
  return patch;
}

/** The pairs of a `values` text that decodeNumbers leaves out (`x:abc`, `:3`), as written. */
function unreadPairs(s) {
  let rest = "";
  let at = 0;
  for (const match of s.matchAll(PAIR)) {
    const text = match[2];
    if (text === "" || !Number.isFinite(Number(text))) continue;
    rest += `${s.slice(at, match.index)},`;
    at = match.index + match[0].length;
  }
  return `${rest}${s.slice(at)}`.split(/,(?![^[]*\])/).filter(Boolean); // not at an element's commas
}

/**
 * What a link has that fromUrlParams leaves out, as `name=value` texts, for the page to say so: a
 * value its field cannot read (`step=two`, `gradmap=yes`), a pair of `values` that is no name and
 * number, a part `hide` does not know, a field named again after its first. Parameters that are
 * no field of ours (`utm_source`) are not ours to judge.
 */
export function unreadUrlParams(params) {
  const unread = [];
  for (const [name, { type }] of Object.entries(URL_FIELDS)) {
    if (!params.has(name)) continue;
    const [text, ...again] = params.getAll(name); // a field named twice: the first is read
    unread.push(...again.map((value) => `${name}=${value}`));
    if (type === "numbers") unread.push(...unreadPairs(text).map((pair) => `${name}=${pair}`));
    else if (type === "hide") unread.push(...text.split(",").filter((key) => key && !HIDE_KEYS.includes(key)).map((key) => `${name}=${key}`));
    else if (!readable(type, text)) unread.push(`${name}=${text}`);
  }
  return unread;
}

/** Whether a field of `type` reads `text` as written (a bool's other texts read as false; the
 *  pass's `reverse` is the default, which links leave out). */
function readable(type, text) {
  if (type === "bool") return text === "0" || text === "1";
  if (type === "pass") return text === "reverse" || text === "forward";
  return codecs[type].decode(text) !== undefined;
}
