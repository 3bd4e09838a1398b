"""What a screen shows wrong, read in the page (issue 41): visible controls whose boxes overlap,
controls the page cannot scroll to, text cut off, and axe-core's violations.

`layout_problems(page)` returns a list of sentences (empty: the screen holds); `axe_violations(page)`
the violations axe-core finds. Both look into open shadow roots (the one-file
HTML's player lives in one)."""

from __future__ import annotations

from pathlib import Path

AXE = Path(__file__).resolve().parent / "vendor" / "axe-core" / "axe.min.js"

# A control: what a keyboard or a pointer acts on. The graph's own cards and edges are drawn in a
# pannable SVG (Fit and the pan reach them, not the page's scroll) and are checked as text instead
# (their size, in test_layout_sizes.py); the 3D canvas is the pane itself.
LAYOUT_PROBLEMS = r"""() => {
  const CONTROL = 'a[href], button, input:not([type=hidden]), select, textarea, summary, ' +
    '[role=button], [role=tab], [role=menuitem], [role=checkbox], [role=switch], [role=slider], [contenteditable=true]';
  const TEXT = '#narration, [data-testid=narration], .topbar .brand, .section-title';
  const all = (root, selector, out = []) => {
    out.push(...root.querySelectorAll(selector));
    for (const el of root.querySelectorAll('*')) if (el.shadowRoot) all(el.shadowRoot, selector, out);
    return out;
  };
  const parentOf = (el) => el.parentElement ?? el.getRootNode().host ?? null;
  const inGraph = (el) => Boolean(el.closest('svg[data-testid=graph], canvas, .graph-3d'));
  const shown = (el) => {
    if (!el.checkVisibility({ opacityProperty: true, visibilityProperty: true })) return false;
    const r = el.getBoundingClientRect();
    return r.width >= 1 && r.height >= 1;
  };
  const name = (el) => {
    const id = el.id ? '#' + el.id : '';
    const test = el.dataset?.testid ? `[data-testid=${el.dataset.testid}]` : '';
    const text = (el.getAttribute('aria-label') || el.textContent || el.value || '').trim().replace(/\s+/g, ' ').slice(0, 30);
    return `${el.tagName.toLowerCase()}${id}${test} "${text}"`;
  };
  // The part of `el`'s box that its clipping ancestors let show, and the scroll containers that
  // could bring the rest into view.
  const clipOf = (el) => {
    const r = el.getBoundingClientRect();
    let box = { left: r.left, top: r.top, right: r.right, bottom: r.bottom };
    const seen = { ...box }; // the part no ancestor clips
    let clippedBy = null;
    const fixed = getComputedStyle(el).position === 'fixed';
    for (let a = parentOf(el); a && a !== document.documentElement && a !== document.body; a = parentOf(a)) {
      const style = getComputedStyle(a);
      const ox = style.overflowX, oy = style.overflowY;
      if (ox === 'visible' && oy === 'visible') continue;
      const ar = a.getBoundingClientRect();
      seen.left = Math.max(seen.left, ar.left); seen.right = Math.min(seen.right, ar.right);
      seen.top = Math.max(seen.top, ar.top); seen.bottom = Math.min(seen.bottom, ar.bottom);
      const scrolls = (o) => o === 'auto' || o === 'scroll';
      // A scroll container scrolls to what is inside its scroll area: only clip by it when the
      // element is out of that area (left of its origin, or right of scrollWidth).
      if (scrolls(ox) || scrolls(oy)) {
        const left = ar.left + a.clientLeft - a.scrollLeft, top = ar.top + a.clientTop - a.scrollTop;
        if (box.left < left - 0.5 || box.top < top - 0.5 ||
            box.right > left + a.scrollWidth + 0.5 || box.bottom > top + a.scrollHeight + 0.5) {
          clippedBy = clippedBy ?? name(a);
        }
        // Scrolled into view, the element is where the container shows it.
        box = { left: ar.left, top: ar.top, right: ar.left + Math.min(r.width, ar.width),
                bottom: ar.top + Math.min(r.height, ar.height) };
        continue;
      }
      if (box.left < ar.left - 0.5 || box.right > ar.right + 0.5 || box.top < ar.top - 0.5 || box.bottom > ar.bottom + 0.5) {
        clippedBy = clippedBy ?? name(a);
      }
    }
    return { clippedBy, fixed, seen, reach: box };
  };
  const problems = [];
  const width = document.documentElement.clientWidth;
  const controls = all(document, CONTROL).filter((el) => !inGraph(el) && shown(el));
  const texts = all(document, TEXT).filter(shown);
  const y0 = window.scrollY, x0 = window.scrollX;
  for (const el of controls) {
    // Where the element is once its scroll containers show it (reach), then where the page is.
    const { clippedBy, fixed, reach } = clipOf(el);
    const r = { left: reach.left, top: reach.top, width: reach.right - reach.left, bottom: reach.bottom };
    if (clippedBy) problems.push(`${name(el)} is cut off by ${clippedBy}`);
    // The page scrolls down, never sideways, and never above its top.
    const top = fixed ? r.top : r.top + y0, left = fixed ? r.left : r.left + x0;
    if (left < -0.5 || left + r.width > width + 0.5 || top < -0.5 ||
        (fixed && r.bottom > window.innerHeight + 0.5)) {
      problems.push(`${name(el)} is outside the page (${Math.round(r.left)},${Math.round(r.top)} ` +
                    `${Math.round(r.width)}×${Math.round(r.bottom - r.top)}, viewport width ${width})`);
    }
  }
  // Two boxes overlap: more than a pixel each way, and neither holds the other (a label and its
  // own checkbox, a menu and its items).
  const boxes = [...controls, ...texts].map((el) => ({ el, r: clipOf(el).seen }));
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i], b = boxes[j];
      if (a.el.contains(b.el) || b.el.contains(a.el)) continue;
      const w = Math.min(a.r.right, b.r.right) - Math.max(a.r.left, b.r.left);
      const h = Math.min(a.r.bottom, b.r.bottom) - Math.max(a.r.top, b.r.top);
      if (w > 1 && h > 1) problems.push(`${name(a.el)} overlaps ${name(b.el)} (${Math.round(w)}×${Math.round(h)} px)`);
    }
  }
  // Text a reader needs, cut: the narration's lines past its box, a title past its width with no
  // ellipsis and no full text on hover.
  for (const el of texts) {
    const style = getComputedStyle(el);
    if (el.scrollHeight > el.clientHeight + 1) {
      problems.push(`${name(el)} hides ${el.scrollHeight - el.clientHeight} px of its text`);
    }
  }
  for (const el of all(document, 'select').filter((s) => shown(s) && !inGraph(s))) {
    // A closed menu shows its chosen option: the whole of it, or an ellipsis with a title.
    const option = el.selectedOptions[0];
    if (!option) continue;
    const probe = document.createElement('span');
    const style = getComputedStyle(el);
    probe.style.cssText = `position:absolute;visibility:hidden;white-space:pre;font:${style.font};letter-spacing:${style.letterSpacing}`;
    probe.textContent = option.textContent;
    document.body.append(probe);
    const need = probe.getBoundingClientRect().width;
    probe.remove();
    const room = el.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    if (need > room + 1 && el.title !== option.textContent) {
      problems.push(`${name(el)} cuts its choice "${option.textContent.slice(0, 40)}" (${Math.round(need)} px in ${Math.round(room)})`);
    }
  }
  return problems;
}"""


# What a projector must show without scrolling: the transport and the narration, whole.
FIRST_SCREEN = r"""() => {
  const find = (root, selector) => root.querySelector(selector) ??
    [...root.querySelectorAll('*')].map((el) => el.shadowRoot && find(el.shadowRoot, selector)).find(Boolean) ?? null;
  const problems = [];
  for (const selector of ['#transport', '[data-testid=narration]']) {
    const el = find(document, selector);
    if (!el) { problems.push(`${selector} is missing`); continue; }
    const r = el.getBoundingClientRect();
    if (r.top < 0 || r.bottom > window.innerHeight + 0.5 || r.left < 0 || r.right > window.innerWidth + 0.5) {
      problems.push(`${selector} is not on the first screen (${Math.round(r.top)}–${Math.round(r.bottom)} of ${window.innerHeight} px)`);
    }
  }
  return problems;
}"""


# The words of a card that must be read at the default zoom (Fit's): its name (whole, or alone far
# out), its op badge, the check's "yours · rule" pill. Their size on screen: font size × scale.
# 11 px on a screen read from afar (1024 px wide or more: a laptop, a projector), the page's
# reading size of 2/3 rem (9 px and up) on a phone or tablet, read at arm's length.
READING_PX = 11
NEAR_READING_PX = 9
FAR_SCREEN_PX = 1024
CARD_TEXT = r"""(least) => {
  const all = (root, selector, out = []) => {
    out.push(...root.querySelectorAll(selector));
    for (const el of root.querySelectorAll('*')) if (el.shadowRoot) all(el.shadowRoot, selector, out);
    return out;
  };
  const small = new Map();
  const texts = all(document, '.node .label, .node .label-compact, .node .op, .check-numbers text');
  for (const text of texts) {
    // Chromium's checkVisibility says true of SVG text inside a <g> that is display: none (the
    // check's pill far out): a text drawn has a box of some size.
    const box = text.getBoundingClientRect();
    if (!text.textContent.trim() || !text.checkVisibility({ visibilityProperty: true }) || !box.width || !box.height) continue;
    const px = parseFloat(getComputedStyle(text).fontSize) * text.getScreenCTM().a;
    const kind = text.getAttribute('class') ?? 'check-numbers';
    if (px < least - 0.05 && !(small.get(kind) <= px)) small.set(kind, px);
  }
  return [...small].map(([kind, px]) => `a card's ${kind} is drawn at ${px.toFixed(1)} px (under ${least})`);
}"""


def card_text_problems(page) -> list[str]:
    """The cards' names and badges drawn under the reading size at the view of the moment."""
    far = page.evaluate("window.innerWidth") >= FAR_SCREEN_PX
    return page.evaluate(CARD_TEXT, READING_PX if far else NEAR_READING_PX)


def first_screen_problems(page) -> list[str]:
    """What of the transport and the narration the window does not show, unscrolled."""
    return page.evaluate(FIRST_SCREEN)


def layout_problems(page) -> list[str]:
    """What the page at its current size shows wrong (see LAYOUT_PROBLEMS)."""
    return page.evaluate(LAYOUT_PROBLEMS)


def axe_violations(page) -> list[dict]:
    """axe-core's violations on the page, of every impact (into its open shadow roots), each
    {id, impact, help, nodes: the first three targets}."""
    if not page.evaluate("() => Boolean(window.axe)"):
        page.evaluate(AXE.read_text())
    violations = page.evaluate(
        """async () => (await axe.run(document, {resultTypes: ['violations']})).violations
             .map(v => ({id: v.id, impact: v.impact, help: v.help,
                         nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}))"""
    )
    return violations


SIZES = [(360, 640), (390, 844), (768, 1024), (1280, 720), (1366, 768), (1920, 1080)]
LANGS = ["en", "ru", "et"]
# axe-core (a second or two a run, the layout checks a tenth) at the projector's size in every
# language (the accessible names are the language's), and at the phone's too in English: what it
# checks (names, roles, contrast) does not change between sizes of the same layout.
AXE_SIZES = {"en": {(390, 844), (1280, 720)}, "ru": {(1280, 720)}, "et": {(1280, 720)}}
# A projector's: the transport and the narration on its first screen.
PROJECTOR = (1280, 720)
SETTLED = "() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"


def settle(page) -> None:
    """Two frames: the resize observed, the graph refitted and drawn."""
    page.evaluate(SETTLED)
    page.evaluate(SETTLED)


def walk_sizes(
    page, where: str, lang: str, found: dict, first_screen: bool = True, sizes=SIZES
) -> None:
    """Resize `page` (in `lang`) through `sizes`; record what is wrong at each under `where`
    (`first_screen`: the transport and narration on a projector's first screen too)."""
    for width, height in sizes:
        page.set_viewport_size({"width": width, "height": height})
        settle(page)
        problems = layout_problems(page) + card_text_problems(page)
        if first_screen and (width, height) == PROJECTOR:
            problems += first_screen_problems(page)
        if (width, height) in AXE_SIZES[lang]:
            problems += [
                f"axe {v['id']}: {v['help']} at {v['nodes']}" for v in axe_violations(page)
            ]
        if problems:
            found[f"{where} {width}x{height}"] = problems


def report(found: dict) -> str:
    """What walk_sizes found, a few problems a place."""
    lines = []
    for where, problems in found.items():
        lines.append(where)
        lines.extend(f"  {problem}" for problem in problems[:8])
        if len(problems) > 8:
            lines.append(f"  … and {len(problems) - 8} more")
    return "\n".join(lines)
