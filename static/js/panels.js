// The panel area under the transport: tabs registered by panel modules (tables, labs, ...).
//
// A panel module exports a function that calls registerPanel once:
//   import { registerPanel } from "./panels.js";
//   import { state, subscribe, setStep } from "./state.js";
//   registerPanel({ id: "propagation", title: "Propagation", mount(body) {
//     subscribe((s, changed) => { if (changed.has("trace") || changed.has("step")) draw(body, s); });
//   } });
// `body` is the panel's own <div role="tabpanel">; the panel draws into it with DOM calls
// (textContent and createElement only, never HTML strings) and reads the trace and step from the state it is given.

/**
 * A panel area: tabs and their bodies. The page has one (mountPanelArea, registerPanel below); an
 * embedded player (embed.js) makes its own. Returns {mount(elements), register(panel)}.
 */
export function createPanelArea() {
  let area = null;
  const panels = [];

  function select(id) {
    for (const panel of panels) {
      const active = panel.id === id;
      panel.tab.setAttribute("aria-selected", String(active));
      panel.tab.tabIndex = active ? 0 : -1;
      panel.body.hidden = !active;
    }
  }

  function attach(panel) {
    const tab = document.createElement("button");
    tab.type = "button";
    tab.id = `tab-${panel.id}`;
    tab.setAttribute("role", "tab");
    tab.setAttribute("aria-controls", `panel-${panel.id}`);
    tab.textContent = panel.title;
    tab.addEventListener("click", () => select(panel.id));
    const body = document.createElement("div");
    body.id = `panel-${panel.id}`;
    body.className = "panel";
    body.setAttribute("role", "tabpanel");
    body.setAttribute("aria-labelledby", tab.id);
    area.tabs.append(tab);
    area.bodies.append(body);
    area.section.hidden = false;
    Object.assign(panel, { tab, body });
    panel.mount(body);
    select(panels[0].id);
  }

  return {
    /** Called once with the {section, tabs, bodies} elements of the layout. */
    mount(elements) {
      area = elements;
      area.tabs.setAttribute("role", "tablist");
      // The ARIA tabs pattern: ←/→ (wrapping), Home/End move to a tab and show it; the keys stop
      // here, so the timeline's keys (keys.js) never see them.
      area.tabs.addEventListener("keydown", (event) => {
        if (event.ctrlKey || event.metaKey || event.altKey) return;
        const i = panels.findIndex((panel) => panel.tab === event.target);
        if (i === -1) return;
        const n = panels.length;
        const moves = { ArrowRight: (i + 1) % n, ArrowLeft: (i - 1 + n) % n, Home: 0, End: n - 1 };
        if (!(event.key in moves)) return;
        event.preventDefault();
        const next = panels[moves[event.key]];
        select(next.id);
        next.tab.focus();
      });
      for (const panel of panels) attach(panel);
    },
    /** Add a tab `{id, title, mount(body)}`; the first registered panel is shown first. */
    register(panel) {
      panels.push(panel);
      if (area) attach(panel);
    },
  };
}

/** The page's panel area. */
export const pagePanels = createPanelArea();

/** Called once by main.js with the {section, tabs, bodies} elements of the layout. */
export const mountPanelArea = pagePanels.mount;

/** Add a tab to the page's panel area (see createPanelArea). */
export const registerPanel = pagePanels.register;
