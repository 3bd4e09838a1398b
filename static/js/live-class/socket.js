// The class's WebSocket (docs/live-class.md): it says hello on every (re)connection, passes each
// message on, and reconnects by itself — within 0.25 s, then after about 0.5, 1 and 2 s (each
// spread at random, so that a room cut off at once does not knock at once) — so a reload, a lost
// Wi-Fi or a server that restarted costs a second, not the class. A refusal (no such
// class, not the teacher, class full) or the end of the class is final: no reconnecting.

import { apiUrl } from "../core/api.js";

const RETRY_MS = [250, 500, 1000, 2000]; // the first wait is 0–250 ms, later ones ±50 %
const FINAL_CLOSES = new Set([1000, 4403, 4404]);

/** `ws://host/…/api/class/<code>/live` for this page's origin (wss: under https:). */
export function socketUrl(code) {
  const url = new URL(apiUrl(`api/class/${encodeURIComponent(code)}/live`));
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  return url.href;
}

/**
 * Connect to class `code`. `hello()` is the hello message (read at every connection);
 * `onMessage(message)` gets every message; `onConnection(state)` hears "connecting", "open",
 * "retrying" and "closed" (final). Returns {send(message) → whether it went out, close()}.
 */
export function openClassSocket(code, { hello, onMessage, onConnection = () => {} }) {
  let socket = null;
  let attempt = 0;
  let closed = false;
  let timer = null;

  function connect() {
    onConnection(attempt === 0 ? "connecting" : "retrying");
    socket = new WebSocket(socketUrl(code));
    socket.addEventListener("open", () => {
      attempt = 0;
      socket.send(JSON.stringify(hello()));
      onConnection("open");
    });
    socket.addEventListener("message", (event) => {
      let message;
      try {
        message = JSON.parse(event.data);
      } catch {
        return;
      }
      onMessage(message);
    });
    socket.addEventListener("close", (event) => {
      if (closed) return;
      if (FINAL_CLOSES.has(event.code)) {
        closed = true;
        onConnection("closed");
        return;
      }
      const base = RETRY_MS[Math.min(attempt, RETRY_MS.length - 1)];
      const delay = attempt === 0 ? Math.random() * base : base * (0.5 + Math.random());
      attempt += 1;
      onConnection("retrying");
      timer = setTimeout(connect, delay);
    });
  }

  connect();
  return {
    send(message) {
      if (!socket || socket.readyState !== WebSocket.OPEN) return false;
      socket.send(JSON.stringify(message));
      return true;
    },
    close() {
      closed = true;
      clearTimeout(timer);
      socket?.close(1000);
    },
  };
}
