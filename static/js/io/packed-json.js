// JSON packed as zlib (deflate) bytes, read back: the notebook widget's trace (`trace_zlib`, a
// binary buffer) and a one-file HTML's data blocks (the same bytes as base64 text:
// app/export/onefile.py `packed_block`). Inflated with DecompressionStream, read whole, then
// parsed: on micrograd's demo (55 MB of JSON) Response.json took 1.6 s where this takes 1.2 s; its
// one-file HTML's block is 5.8 MB of base64 instead of 43 MB of JSON text, and the trace is ready
// about 0.35 s sooner, inflating included (docs/benchmarks.md).

/** The bytes base64 `text` holds (Uint8Array.fromBase64 where the browser has it). */
export function bytesOfBase64(text) {
  if (Uint8Array.fromBase64) return Uint8Array.fromBase64(text);
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/**
 * The value the zlib-compressed JSON `bytes` (a typed array, DataView or ArrayBuffer) holds. The
 * text is decoded a chunk at a time as it is inflated, and the chunks joined: micrograd's demo's
 * 44 MB of JSON, whose node texts (`…`) and names (`₂`) are not ASCII, were inflated whole, then
 * decoded whole into a two-byte string (124–154 ms in Chromium, 263–507 ms in JupyterLab's page);
 * its chunks decode as they come, most of them ASCII: inflated, decoded and parsed in 375–435 ms
 * where it took 451–539, and without a 44 MB buffer of bytes beside the text.
 */
export async function inflatedJson(bytes) {
  const inflated = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
  if (typeof TextDecoderStream !== "function") {
    return JSON.parse(new TextDecoder().decode(await new Response(inflated).arrayBuffer()));
  }
  const reader = inflated.pipeThrough(new TextDecoderStream()).getReader();
  const chunks = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
  }
  return JSON.parse(chunks.join(""));
}
