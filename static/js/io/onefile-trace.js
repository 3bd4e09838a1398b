// The trace a one-file HTML holds (app/export/onefile.py `compact_trace`) written back as the
// POST /api/graph reply it was made from, equal to it to the last bit: the file leaves out the
// edges but their local derivatives (edge k is the k-th input of the nodes in order) and the
// program's second copy of its source, so that a big graph (micrograd's demo: 55 MB of JSON to
// 44 MB) is read and parsed sooner. What the file left out it says in `onefile`.

/** The edges of `nodes` in (target, index) order, each with its local derivative from `localGrads`. */
function expandEdges(nodes, localGrads) {
  const edges = [];
  for (const node of nodes) {
    node.inputs.forEach((source, index) => {
      const k = edges.length;
      edges.push({ id: `e${k}`, source, target: node.id, index, local_grad: localGrads[k] });
    });
  }
  return edges;
}

/** `trace` as a one-file HTML holds it, written back as its reply; any other trace as it is. */
export function expandTrace(trace) {
  const compact = trace?.onefile;
  if (!compact) return trace;
  const reply = {};
  for (const [key, value] of Object.entries(trace)) {
    if (key === "onefile") continue;
    if (key === "edges" && compact.edges === "local_grad") reply.edges = expandEdges(trace.nodes, value);
    else if (key === "program" && compact.program_source !== undefined) {
      const entries = Object.entries(value);
      entries.splice(compact.program_source, 0, ["source", trace.source]);
      reply.program = Object.fromEntries(entries);
    } else reply[key] = value;
  }
  return reply;
}
