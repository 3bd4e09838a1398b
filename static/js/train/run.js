// The Train lab's run of gradient descent: the losses shown (root after 0, 1, … steps), the
// momentum carried between batches, the steps fetched but not shown yet, and the values the lab
// last gave the sliders. Requests go one at a time: a second waits for the first, then continues
// from its last step; a request whose run was replaced meanwhile (Reset, a new run) is dropped.

/** What a request answers when its run was replaced while it was in flight: nothing of it shows. */
export const SUPERSEDED = Symbol("superseded");

// path: the parameters' values after each step shown ({name: value}), for the landscape.
const freshRun = () => ({ losses: [], path: [], velocity: null, queue: [], applied: null });

/** The reply's steps, queued in `run` to be shown (the root that made descent stop comes with the last). */
function queueReply(run, reply) {
  if (run.losses.length === 0) run.losses = [reply.roots[0]];
  reply.values.forEach((row, k) => {
    run.queue.push({ values: Object.fromEntries(reply.parameters.map((name, j) => [name, row[j]])), root: reply.roots[k + 1] });
  });
  if (reply.stopped && reply.roots.length > reply.values.length + 1) run.queue.push({ values: null, root: reply.roots.at(-1) });
  run.velocity = reply.velocity;
}

/**
 * A descent on `descend(body)` (the server's POST /api/descend). `request()` gives what the next
 * request asks for ({source, values, parameters, lr, momentum, taken}) or throws.
 */
class Descent {
  constructor(descend, request) {
    Object.assign(this, { descend, request, run: freshRun(), inflight: null });
  }

  /** Ask for `count` steps after the queued ones, or from `from` ({values, taken}: a replay's start). */
  async requestSteps(count, from) {
    const asked = this.request();
    const { run } = this;
    const values = { ...asked.values, ...(from ? from.values : run.queue.at(-1)?.values ?? {}) };
    const body = {
      source: asked.source, values, parameters: asked.parameters, lr: asked.lr, steps: count, momentum: asked.momentum,
      first_step: from ? from.taken : asked.taken + run.queue.length,
    };
    if (run.velocity) body.velocity = run.velocity;
    if (run.losses.length) body.baseline = run.losses[0];
    let reply;
    try {
      reply = await this.descend(body);
    } catch (err) {
      if (this.run !== run) return SUPERSEDED;
      throw err;
    }
    if (this.run !== run) return SUPERSEDED;
    queueReply(run, reply);
    return reply.stopped;
  }

  /** Fetch `count` steps (one request at a time): resolves to the reply's `stopped`, or SUPERSEDED. */
  async fetch(count, from = null) {
    while (this.inflight) await this.inflight.catch(() => {});
    this.inflight = this.requestSteps(count, from);
    try {
      return await this.inflight;
    } finally {
      this.inflight = null;
    }
  }

  /** The next queued step, its root now on the curve (its values on the path); undefined when none is queued. */
  next() {
    const next = this.run.queue.shift();
    if (next) this.run.losses.push(next.root);
    if (next?.values) this.run.path.push(next.values);
    return next;
  }

  /** Start a new run (what is in flight for the old one is dropped). */
  forget() {
    this.run = freshRun();
  }

  /**
   * A link's run: `steps` steps from `start`, in batches of at most `batch`, every root on the
   * curve at once. Resolves to {taken, last (the values after them), stopped}, taken null when
   * superseded.
   */
  async replay(start, steps, batch) {
    this.forget();
    let [stopped, last, taken] = [null, { ...start }, 0];
    while (!stopped && taken < steps) {
      stopped = await this.fetch(Math.min(batch, steps - taken), { values: last, taken });
      if (stopped === SUPERSEDED) return { taken: null };
      const rows = this.run.queue.filter((next) => next.values);
      if (rows.length === 0) break;
      taken += rows.length;
      last = { ...last, ...rows.at(-1).values };
      this.run.losses.push(...this.run.queue.map((next) => next.root));
      this.run.path.push(...rows.map((next) => next.values));
      this.run.queue = [];
    }
    return { taken, last, stopped };
  }
}

export function createDescent(descend, request) {
  return new Descent(descend, request);
}
