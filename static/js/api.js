// Talking to the server: one error shape for every failure, and a graph channel that keeps at
// most one request in flight where the latest request wins.

/** A failure with the API's error object: {type, message, line?, column?, snippet?, caret?}. */
export class ApiError extends Error {
  constructor(detail) {
    super(detail.message);
    this.detail = detail;
  }
}

async function readJson(response) {
  try {
    return await response.json();
  } catch {
    throw new ApiError({
      type: "BadResponse",
      message: `The server sent a reply that is not JSON (HTTP ${response.status}).`,
    });
  }
}

async function request(url, options) {
  let response;
  try {
    response = await fetch(url, options);
  } catch (err) {
    throw new ApiError({ type: "Network", message: `Could not reach the server: ${err.message || err}` });
  }
  const payload = await readJson(response);
  if (!response.ok) {
    const error = payload && typeof payload.error === "object" ? payload.error : null;
    throw new ApiError({
      type: error?.type ?? `HTTP ${response.status}`,
      message: error?.message ?? `The server answered ${response.status} ${response.statusText}.`,
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

export async function fetchPresets() {
  const presets = await request("/api/presets", { headers: { accept: "application/json" } });
  if (!Array.isArray(presets)) throw new ApiError({ type: "BadResponse", message: "The presets list is malformed." });
  return presets;
}

export async function postGraph(body) {
  const trace = await request("/api/graph", {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify(body),
  });
  if (!trace || !Array.isArray(trace.nodes) || !Array.isArray(trace.steps)) {
    throw new ApiError({ type: "BadResponse", message: "The server's graph reply is malformed." });
  }
  return trace;
}

/**
 * `send(body, meta)` posts to /api/graph with at most one request in flight: a body sent while
 * one is in flight waits, and a newer one replaces it (intermediate ones are dropped).
 * `onResult(trace, meta)` gets every reply; `onError(apiError, meta)` only when nothing newer waits.
 */
export function createGraphChannel({ onResult, onError, onBusy = () => {} }) {
  let inFlight = false;
  let waiting = null;

  async function run(body, meta) {
    inFlight = true;
    onBusy(true);
    try {
      onResult(await postGraph(body), meta);
    } catch (err) {
      const error = err instanceof ApiError ? err : new ApiError({ type: "Error", message: String(err) });
      if (!waiting) onError(error, meta);
    } finally {
      inFlight = false;
      if (waiting) {
        const next = waiting;
        waiting = null;
        run(next.body, next.meta);
      } else {
        onBusy(false);
      }
    }
  }

  return {
    send(body, meta = {}) {
      // A replaced request's flags still apply (a program change must still refit the view).
      if (inFlight) waiting = { body, meta: { ...meta, program: Boolean(meta.program || waiting?.meta.program) } };
      else run(body, meta);
    },
  };
}
