// The panel area under the transport: tabs registered by panel modules (tables, labs, ...). Which
// tab is shown is state (`state.panel`): a click on a tab, the keyboard, a teacher's link hiding
// a part, all go through the store, and a panel learns it is shown from its subscription.
//
// A panel module registers on its scope's area:
//   scope.panels.register({ id: "propagation", title: "Propagation", hideKey: "tables", mount(body) {
//     scope.store.subscribe((s, changed) => { if (s.panel === "propagation") draw(body, s); });
//   } });
// `body` is the panel's own <div role="tabpanel">; the panel draws into it with DOM calls
// (textContent and createElement only, never HTML strings). `hideKey`: the part of a teacher's
// link (core/links.js HIDE_KEYS) that hides the panel.

import { setAttr, setHidden, setProps } from "./dom.js";

/** A tab button and its panel body for `panel` ({id, title}). */
function tabAndBody(panel, select) {
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
  return { tab, body };
}

/** Whether `panel` has something to show for what the page shows: a tensor program is read
 *  by the panels that say so (`tensor: true`: the labs), a scalar trace by every one. */
const available = (panel, s) => !(s.tensor && !s.trace) || Boolean(panel.tensor);

/** The panel `state.panel` names if it is shown, else the first one a link does not hide. */
function shownPanel(panels, s) {
  const visible = panels.filter((panel) => !s.hide.includes(panel.hideKey) && available(panel, s));
  return visible.find((panel) => panel.id === s.panel) ?? visible[0] ?? panels[0];
}

/**
 * The ARIA tabs pattern on `tabs`: ←/→ (wrapping), Home/End move to a tab and show it; the keys
 * stop here, so the timeline's keys (core/keys.js) never see them.
 */
function tabKeys(tabs, panels, select) {
  tabs.addEventListener("keydown", (event) => {
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
}

/**
 * A panel area on `store`: tabs and their bodies. The page has one and each embedded player one
 * (core/scope.js). Returns {mount(elements), register(panel), select(id)}.
 */
export function createPanelArea(store) {
  let area = null;
  const panels = [];
  const select = (id) => store.update({ panel: id });

  function show(s) {
    const attached = panels.filter((panel) => panel.tab);
    const active = shownPanel(attached, s);
    for (const panel of attached) {
      const on = panel === active;
      // Written only when changed (core/dom.js): this runs on every slider move, and a write of
      // the same `hidden` restyled the open tab's table, 80 ms a move with 600 rows.
      setHidden(panel.tab, !available(panel, s));
      setAttr(panel.tab, "aria-selected", String(on));
      setProps(panel.tab, { tabIndex: on ? 0 : -1 });
      setHidden(panel.body, !on);
    }
    // A hidden or unknown tab: the shown one. While a tensor program is shown the learner's tab
    // is kept, to come back with the next scalar program.
    if (active && active.id !== s.panel && !(s.tensor && !s.trace)) select(active.id);
  }

  function attach(panel) {
    Object.assign(panel, tabAndBody(panel, select));
    area.tabs.append(panel.tab);
    area.bodies.append(panel.body);
    area.section.hidden = false;
    panel.mount(panel.body);
    show(store.state);
  }

  return {
    /** Called once with the {section, tabs, bodies} elements of the layout. */
    mount(elements) {
      area = elements;
      area.tabs.setAttribute("role", "tablist");
      tabKeys(area.tabs, panels, select);
      // Before the panels' own subscriptions: a panel told it is shown finds its body shown.
      store.subscribe((s, changed) => {
        if (["panel", "hide", "tensor", "trace"].some((key) => changed.has(key))) show(s);
      });
      for (const panel of panels) attach(panel);
    },
    /** Add a tab `{id, title, hideKey?, mount(body)}`; the first registered panel is shown first. */
    register(panel) {
      panels.push(panel);
      if (area) attach(panel);
    },
    select,
  };
}
