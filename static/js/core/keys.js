// A player's keyboard: one keydown listener, one rule for "is this text entry?", and a registry
// of bindings. Transport, presentation mode, the explanation popover and the help all bind on
// their scope's keyboard (core/scope.js); a widget's own keys (the editor's Ctrl+Enter, the tabs'
// arrows, a menu's arrows) stay on the widget and win by calling preventDefault before the event
// reaches the keyboard's target.
//
//   scope.keys.bindKeys({ " ": () => store.togglePlay(), ArrowRight: () => store.stepBy(1) });
//   scope.keys.bindKeys({ Escape: () => close() }, { when: () => isOpen() });
//
// A handler may return false to say "not mine": the next binding of that key gets the event.
// Bindings are tried in the order they were made. Letters match either case ("f" and "F").
// The page's keyboard listens on the document; an embedded player's (embed.js) on its shadow
// root: its keys act only while the focus is inside it, and go no further (a notebook keeps its own).

// Input types that take typed text (and their own arrow keys): everything but these.
const NOT_TEXT_INPUTS = new Set(["button", "checkbox", "color", "file", "hidden", "image", "radio", "range", "reset", "submit"]);

/** Is `target` a place where keys type text (textarea, text-like or number input, contenteditable)? */
export function isTextEntry(target) {
  if (!target || target.nodeType !== Node.ELEMENT_NODE) return false;
  if (target.isContentEditable) return true;
  if (target.tagName === "TEXTAREA") return !target.disabled;
  if (target.tagName === "INPUT") return !NOT_TEXT_INPUTS.has(target.type) && !target.disabled;
  return false;
}

/** Controls that Space (and Enter) activate natively: they keep those keys. */
function isPressable(target) {
  if (!target || target.nodeType !== Node.ELEMENT_NODE) return false;
  if (target.tagName === "BUTTON" || target.tagName === "SUMMARY") return true;
  if (target.tagName === "INPUT") return ["button", "checkbox", "color", "file", "image", "radio", "reset", "submit"].includes(target.type);
  return ["button", "checkbox", "switch", "tab", "menuitem", "radio"].includes(target.getAttribute("role"));
}

/**
 * The open layer that owns the keyboard, or null: a modal dialog, an open menu, or anything
 * marked aria-modal, in `root` (the document, or an embedded player's shadow root). Nothing
 * behind it (the timeline) takes keys while it is open.
 */
export function openLayer(root = document) {
  return root.querySelector("dialog[open], [role=menu]:not([hidden]), [aria-modal=true]:not([hidden])");
}

/**
 * A new modal dialog in `host` (the page's body, an embedded player's root): `<dialog id class
 * aria-labelledby>` with its heading, and a `status` line (role=status) for what an action did.
 * Returns {dialog, title, status}.
 */
export function createDialog(id, heading, className, host) {
  const dialog = document.createElement("dialog");
  dialog.id = id;
  dialog.className = className;
  dialog.setAttribute("aria-labelledby", `${id}-title`);
  const title = document.createElement("h2");
  title.id = `${id}-title`;
  title.textContent = heading;
  const status = document.createElement("p");
  status.className = "dialog-status";
  status.setAttribute("role", "status");
  dialog.append(title);
  host.append(dialog);
  return { dialog, title, status };
}

/**
 * Show `dialog` as a modal; when it closes (Escape, its Close button, dialog.close()), focus goes
 * back to what had it before.
 */
export function showModal(dialog) {
  if (dialog.open) return;
  const opener = dialog.getRootNode().activeElement; // the document's, or a shadow root's
  dialog.addEventListener("close", () => {
    if (opener?.isConnected && typeof opener.focus === "function") opener.focus({ preventScroll: true });
  }, { once: true });
  dialog.showModal();
}

function normalize(key) {
  return key.length === 1 ? key.toLowerCase() : key;
}

/**
 * A keyboard: one keydown listener on `target` (the document, or an embedded player's shadow
 * root: then only keys pressed while the focus is inside reach it) and its bindings. `contain`:
 * a key it handles goes no further up (a notebook around an embedded player does not see it).
 * Returns {bindKeys, close}; close() removes the listener and every binding.
 */
export function createKeyboard(target, { contain = false } = {}) {
  const bindings = [];
  let listening = false;

  function onKeyDown(event) {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey || event.isComposing) return;
    const element = event.target;
    if (isTextEntry(element) || openLayer(target)) return;
    const key = normalize(event.key);
    if ((key === " " || key === "Enter") && isPressable(element)) return; // Space on a button presses it
    for (const binding of bindings) {
      const handler = binding.keys.get(key);
      if (!handler || !binding.when(event)) continue;
      if (key === " " && event.repeat) { // holding Space must not flicker play/pause
        event.preventDefault();
        return;
      }
      if (handler(event) === false) continue;
      event.preventDefault(); // a select does not open, a range does not move, the page does not scroll
      if (contain) event.stopPropagation();
      return;
    }
  }

  return {
    /**
     * Bind `{key: handler(event)}` (KeyboardEvent.key names; " " is Space). `when(event)`: the
     * bindings apply only while it returns true. Returns an unbind function.
     */
    bindKeys(keyMap, { when = () => true } = {}) {
      if (!listening) target.addEventListener("keydown", onKeyDown);
      listening = true;
      const binding = { keys: new Map(Object.entries(keyMap).map(([k, fn]) => [normalize(k), fn])), when };
      bindings.push(binding);
      return () => {
        const i = bindings.indexOf(binding);
        if (i >= 0) bindings.splice(i, 1);
      };
    },
    close() {
      target.removeEventListener("keydown", onKeyDown);
      listening = false;
      bindings.length = 0;
    },
  };
}
