// Talking to the server: one error shape for every failure, and a graph channel that keeps at
// most one request in flight where the latest request wins. New values of the graph the page
// has ask only for numbers (/api/values), merged into that graph (compute/merge-numbers.js).

import { ApiError } from "./api-error.js";
import { lang, t } from "./i18n.js";
import { mergeNumbers } from "../compute/merge-numbers.js";
import { withStepObjects } from "./step-columns.js";

async function readJson(response) {
  try {
    return await response.json();
  } catch {
    throw new ApiError({
      type: "BadResponse",
      message: t("ui.api.not_json", { status: response.status }),
    });
  }
}

async function request(url, options) {
  let response;
  try {
    response = await fetch(url, options);
  } catch (err) {
    throw new ApiError({ type: "Network", message: t("ui.api.unreachable", { message: err.message || err }) });
  }
  const payload = await readJson(response);
  if (!response.ok) {
    const error = payload && typeof payload.error === "object" ? payload.error : null;
    throw new ApiError({
      type: error?.type ?? `HTTP ${response.status}`,
      message: error?.message ?? t("ui.api.status", { status: `${response.status} ${response.statusText}`.trim() }),
      line: error?.line ?? null,
      column: error?.column ?? null,
      end_line: error?.end_line ?? null,
      end_column: error?.end_column ?? null,
      snippet: error?.snippet ?? null,
      caret: error?.caret ?? null,
    });
  }
  return payload;
}

/**
 * The URL of API path `path` ("api/graph"), relative to where this module is served
 * (four folders below the root: static, its version, js, core), so the page keeps working behind a
 * proxy's root path.
 */
export function apiUrl(path) {
  return new URL(`../../../../${path}`, import.meta.url).href;
}

// Every request names the page's language (core/i18n.js), so the replies' words (narration, warnings,
// messages, titles) are in it whatever the browser's Accept-Language says: `lang` in the body of
// a POST (the URL stays the endpoint's own), `?lang=` on a GET.

/** The body of a POST: `body` with the page's language. */
export const withLang = (body) => ({ ...body, lang: lang() });

/** The list at `path`; `malformed`: the catalogue key of what to say when it is no list. */
async function fetchList(path, malformed) {
  const url = new URL(apiUrl(path));
  url.searchParams.set("lang", lang());
  const list = await request(url.href, { headers: { accept: "application/json" } });
  if (!Array.isArray(list)) throw new ApiError({ type: "BadResponse", message: t(malformed) });
  return list;
}

export const fetchPresets = () => fetchList("api/presets", "ui.api.presets_malformed");

/** The guided lessons (GET /api/lessons): {id, title, summary, source, values, stops}. */
export const fetchLessons = () => fetchList("api/lessons", "ui.api.lessons_malformed");

function postJson(path, body) {
  return request(apiUrl(path), {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify(withLang(body)),
  });
}

/** The trace of `body` (POST /api/graph), its steps read from the reply's columns (core/step-columns.js). */
export async function postGraph(body) {
  const reply = await postJson("api/graph", body);
  // A tensor program's reply (docs/api.md, Tensor programs) is drawn as it comes (tensor/view.js).
  if (reply?.kind === "tensor") {
    if (!Array.isArray(reply.nodes) || !Array.isArray(reply.steps)) throw new ApiError({ type: "BadResponse", message: t("ui.api.graph_malformed") });
    return reply;
  }
  try {
    if (!reply || !Array.isArray(reply.nodes) || !Array.isArray(reply.edges)) throw new Error("no nodes or edges");
    return withStepObjects(reply);
  } catch {
    throw new ApiError({ type: "BadResponse", message: t("ui.api.graph_malformed") });
  }
}

/** The terms of one tensor element's gradient (POST /api/fan-in; docs/api.md): {tensor, index, grad, contributions, sum}. */
export async function postFanIn(body) {
  const reply = await postJson("api/fan-in", body);
  if (!reply || !Array.isArray(reply.contributions)) {
    throw new ApiError({ type: "BadResponse", message: t("ui.api.fan_in_malformed") });
  }
  return reply;
}

/** One tensor op's scalar graph, laid out to be drawn as a scalar graph is (POST /api/expand with `graph`; docs/api.md). */
export async function postExpand(body) {
  const reply = await postJson("api/expand", { ...body, graph: true });
  if (!Array.isArray(reply?.graph?.nodes) || !Array.isArray(reply.graph.edges)) {
    throw new ApiError({ type: "BadResponse", message: t("ui.api.expand_malformed") });
  }
  return reply;
}

/** A tensor program's scalar graph, compact (POST /api/tensor-graph; docs/api.md): what the page's own passes run over. */
export async function postTensorGraph(body) {
  const reply = await postJson("api/tensor-graph", body);
  if (reply?.kind !== "tensor-graph" || !Array.isArray(reply.op) || !Array.isArray(reply.inputs)) {
    throw new ApiError({ type: "BadResponse", message: t("ui.api.tensor_graph_malformed") });
  }
  return reply;
}

/** Every path of the chain rule from one node to the target (POST /api/paths; docs/api.md). */
export async function postPaths(body) {
  const reply = await postJson("api/paths", body);
  if (!reply || !Array.isArray(reply.paths)) {
    throw new ApiError({ type: "BadResponse", message: t("ui.api.paths_malformed") });
  }
  return reply;
}

/** Steps of gradient descent (POST /api/descend; docs/api.md): {parameters, roots, values, velocity, stopped}. */
export async function postDescend(body) {
  const reply = await postJson("api/descend", body);
  if (!reply || !Array.isArray(reply.roots) || !Array.isArray(reply.values)) {
    throw new ApiError({ type: "BadResponse", message: t("ui.api.descent_malformed") });
  }
  return reply;
}

/** The root over a grid of two leaves (POST /api/landscape; docs/api.md): {parameters, xs, ys, losses}. */
export async function postLandscape(body) {
  const reply = await postJson("api/landscape", body);
  if (!reply || !Array.isArray(reply.xs) || !Array.isArray(reply.ys) || !Array.isArray(reply.losses)) {
    throw new ApiError({ type: "BadResponse", message: t("ui.api.landscape_malformed") });
  }
  return reply;
}

/**
 * `trace` with the numbers of `body`'s values, from a numbers-only reply (POST /api/values with
 * the trace's structure id); `body` must be the request of `trace` but for its values. A stale
 * structure (409 StaleStructure: the server's graph for this body is another) asks /api/graph.
 */
export async function postValues(body, trace) {
  let reply;
  try {
    reply = await postJson("api/values", { ...body, structure: trace.structure });
  } catch (err) {
    if (err instanceof ApiError && err.detail.type === "StaleStructure") return postGraph(body);
    throw err;
  }
  try {
    return mergeNumbers(trace, reply);
  } catch (err) {
    throw new ApiError({ type: "BadResponse", message: t("ui.api.numbers_misfit", { message: err.message }) });
  }
}

/**
 * `send(body, meta)` posts to /api/graph with at most one request in flight. Each send gets a
 * request id; only the latest id's reply (or error) is applied: a reply that a newer send has
 * superseded is dropped on arrival, and a body waiting behind the one in flight is replaced by a
 * newer one. `meta.program` (a new program) sticks until a reply is applied, so a program change
 * superseded by a value change still starts the new program at its first step.
 * `meta.values` marks a change of the leaf values alone: while every send since the last applied
 * reply is one, and `current()` (the trace shown) has a structure id, only numbers are asked for
 * (postValues) and merged into it.
 * `onResult(trace, meta)` / `onError(apiError, meta)` get the latest reply only. `local(body)`
 * gives the reply of a body the page holds already (the sandbox's trace of a graph too big to
 * send: sandbox/sandbox.js sandboxTrace), else null: the server is asked.
 */
export function createGraphChannel({ onResult, onError, onBusy = () => {}, current = () => null, local = () => null }) {
  let latest = 0;         // id of the newest send
  let inFlight = false;
  let waiting = null;     // {id, body} sent while one was in flight
  let pendingMeta = null; // the merged meta of every send since the last applied reply

  async function run(id, body) {
    inFlight = true;
    onBusy(true);
    let outcome;
    try {
      // pendingMeta covers every send since the trace shown was applied: values alone changed
      // since then only if each of them says so.
      const shown = pendingMeta?.values ? current() : null;
      const held = local(body);
      outcome = { trace: held ?? await (shown?.structure ? postValues(body, shown) : postGraph(body)) };
    } catch (err) {
      outcome = { error: err instanceof ApiError ? err : new ApiError({ type: "Error", message: String(err) }) };
    }
    inFlight = false;
    if (id === latest) {
      const meta = pendingMeta ?? {};
      pendingMeta = null;
      onBusy(false);
      if (outcome.error) onError(outcome.error, meta);
      else onResult(outcome.trace, meta);
    } else if (waiting) {
      const next = waiting;
      waiting = null;
      run(next.id, next.body);
    }
  }

  return {
    send(body, meta = {}) {
      latest += 1;
      pendingMeta = pendingMeta
        ? {
          ...pendingMeta, ...meta,
          program: Boolean(pendingMeta.program || meta.program),
          values: Boolean(pendingMeta.values && meta.values),
        }
        : { ...meta };
      if (inFlight) waiting = { id: latest, body };
      else run(latest, body);
    },
  };
}
