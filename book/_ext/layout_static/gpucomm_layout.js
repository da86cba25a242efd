// The book on a narrow screen: wide tables, plotly figures laid out for a phone, the search page over file://.
// Added to every page by book/_ext/book_page_assets.py (with gpucomm_layout.css). Runs offline: only plotly's
// own API (Plotly.relayout) and the DOM.
//
// Figures. Each figure is built for a desktop page (about 800 px): panels side by side, controls placed in
// plotly's paper coordinates, legends below the plot. Below NARROW_PX a figure is laid out again, once it is
// drawn, as one column read from top to bottom: title (wrapped to the width), each button row or dropdown on
// a row of its own, the panels stacked, the legend, then the slider. Positions are computed in pixels from
// what plotly drew (legend, axis labels, slider), so nothing overlaps whatever the texts' lengths. The
// figure's data, frames, buttons and slider steps are untouched (a legend name longer than the screen is wrapped);
// a title a control changes later is wrapped again after each redraw.
//
// At any width: a tap on a dropdown item picks it (plotly.js #6127), a title wider than its figure is wrapped, tick
// labels that would print over one another are thinned, a log axis showing one full number gets 1-2-5 ticks, a
// legend that wrapped onto the x axis moves under it, and a table whose rows would run hundreds of pixels tall is
// widened to scroll sideways in its box.
(function () {
  "use strict";

  const NARROW_PX = 600;       // figures narrower than this get the one-column layout
  const TITLE_FONT_PX = 15;
  const TITLE_LINE_PX = 20;
  const CHAR_PX = 0.56;        // average glyph width of plotly's sans-serif, in font sizes: for wrapping
  const MENU_ROW_PX = 32;      // one button row or closed dropdown
  const PANEL_PX = 250;        // height of each stacked panel
  const AXIS_BELOW_PX = 75;    // under a stacked panel: its x tick labels and axis title
  const SUBPLOT_FONT_PX = 16;
  const SUBPLOT_LINE_EM = 1.3;
  const GAP_PX = 10;

  // The page's main thread is let go between figures and before each relayout (a relayout that moves the legend or
  // changes the height redraws the whole figure: up to a few hundred ms for a figure of a hundred traces): laying out
  // every figure of a page in one go would hold it for seconds after the first paint, so that a scroll or a click
  // waits (static-book issue 26: no task over 200 ms).
  const nextTask = () => new Promise(resolve => setTimeout(resolve, 0));
  const AFTERPLOT_QUIET_MS = 60;
  async function relayoutAlone(gd, update) {
    await nextTask();
    const changed = changedOnly(gd, update);
    if (!Object.keys(changed).length) return gd;  // already laid out so: no redraw
    return window.Plotly.relayout(gd, drawnInTheRedraw(gd, changed));
  }

  // Sliders and menus a relayout moves are drawn by plotly at once, before the relayout redraws the figure (its
  // applyContainerArrayChanges waits for flags.replot/recalc, which a relayout never sets: it sets plot/calc;
  // plotly.js 4.1.1). A slider drawn so pushes the margin, and that push starts a whole-figure redraw of its own,
  // which the relayout then draws over: two redraws in one task (270-350 ms on the phone's mesh calculator), with
  // another tick-label angle than one redraw gives. So they are written into the figure's layout, which the
  // relayout's redraw reads, and a key that makes the relayout redraw the whole figure (a margin) is added if the
  // update has none. Returns the relayout's update without them.
  const DRAWN_AT_ONCE = /^(sliders|updatemenus)(\[\d+\])?(\.|$)/;
  const REDRAWS_ALL = /^(height|width|margin)(\.|$)/;
  function drawnInTheRedraw(gd, changed) {
    const keys = Object.keys(changed);
    if (!gd.layout || !keys.some(k => DRAWN_AT_ONCE.test(k))) return changed;
    const rest = {};
    for (const k of keys) {
      if (DRAWN_AT_ONCE.test(k)) setValueAt(gd.layout, k, changed[k]);
      else rest[k] = changed[k];
    }
    if (!Object.keys(rest).some(k => REDRAWS_ALL.test(k))) {
      const given = valueAt(gd.layout, "margin.b");
      rest["margin.b"] = given === undefined ? gd._fullLayout.margin.b : given;
    }
    return rest;
  }

  // The keys of a relayout whose value differs from the figure's (the value given, else the one plotly uses): a
  // relayout redraws the figure even where it changes nothing (up to a few hundred ms), so an update that
  // the figure already has is left out. An object value (a title) counts as changed if any of its leaves does.
  const pathKeys = path => path.replace(/\[(\d+)\]/g, ".$1").split(".");  // "sliders[0].y" -> sliders, 0, y
  const valueAt = (obj, path) => pathKeys(path).reduce((o, k) => o == null ? undefined : o[k], obj);
  function setValueAt(obj, path, value) {  // as plotly's relayout sets it in the figure's layout
    const keys = pathKeys(path);
    const last = keys.pop();
    const parent = keys.reduce((o, k, i) => {
      if (o[k] == null) o[k] = /^\d+$/.test(i + 1 < keys.length ? keys[i + 1] : last) ? [] : {};
      return o[k];
    }, obj);
    parent[last] = value;
  }
  const sameValue = (a, b) => typeof a === "number" && typeof b === "number"
    ? Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b)) : JSON.stringify(a) === JSON.stringify(b);
  function hasValue(gd, path, value) {
    if (value && typeof value === "object" && !Array.isArray(value))
      return Object.entries(value).every(([k, v]) => hasValue(gd, `${path}.${k}`, v));
    const given = valueAt(gd.layout, path);
    return sameValue(given === undefined ? valueAt(gd._fullLayout, path) : given, value);
  }
  function changedOnly(gd, update) {
    if (!gd.layout || !gd._fullLayout) return update;
    return Object.fromEntries(Object.entries(update).filter(([k, v]) => !hasValue(gd, k, v)));
  }

  // --- tables -----------------------------------------------------------------------------------------
  function scrollsSideways(el, stop) {
    for (let p = el.parentElement; p && p !== stop; p = p.parentElement) {
      const o = getComputedStyle(p).overflowX;
      if (o === "auto" || o === "scroll") return true;
    }
    return false;
  }

  function wrapTables() {
    const main = document.querySelector("main") || document.body;
    for (const table of main.querySelectorAll("table")) {
      if (table.closest(".gc-table-scroll") || scrollsSideways(table, main)) continue;
      const box = document.createElement("div");
      box.className = "gc-table-scroll";
      box.tabIndex = 0;  // scrollable with the keyboard
      box.setAttribute("role", "region");
      box.setAttribute("aria-label", "table (scrolls sideways)");
      table.parentNode.insertBefore(box, table);
      box.appendChild(table);
    }
  }

  // A table squeezed into a narrow box wraps its long-text column into rows hundreds of pixels tall, mostly blank
  // (a 500-character note in a 13em column). Such a table is widened, a step at a time, until its tallest row
  // is at most TALL_ROW_PX or it is MAX_TABLE_PX wide: it scrolls sideways in its box instead.
  const TALL_ROW_PX = 240;
  const MAX_TABLE_PX = 1200;
  const WIDEN_STEP = 1.25;

  function tallestRow(table) {
    let tallest = 0;
    for (const row of table.rows) tallest = Math.max(tallest, row.getBoundingClientRect().height);
    return tallest;
  }

  function widenTallTables() {
    const main = document.querySelector("main") || document.body;
    for (const table of main.querySelectorAll("table")) {  // each in a box that scrolls sideways (wrapTables)
      if (!table.rows.length || !scrollsSideways(table, main)) continue;
      let width = table.getBoundingClientRect().width;
      // A few steps at most (1.25^10 is 9x), and none for a table not laid out (0 px wide).
      for (let step = 0; step < 10 && width > 0 && width < MAX_TABLE_PX && tallestRow(table) > TALL_ROW_PX; step++) {
        width = Math.min(MAX_TABLE_PX, Math.ceil(width * WIDEN_STEP));
        table.style.minWidth = width + "px";
        table.style.width = width + "px";
        table.dataset.gcWidened = "1";
      }
    }
  }

  // --- search page opened from a file -------------------------------------------------------------------
  function searchNote() {
    if (location.protocol !== "file:" || !document.getElementById("search-results")
        && !/\/search\.html$/.test(location.pathname)) return;
    const form = document.querySelector("main form, #search-documentation ~ form, main h1");
    const note = document.createElement("p");
    note.className = "gc-search-file-note";
    // The browser refuses to read the pages over file://, so Sphinx's search cannot show excerpts.
    note.textContent = "From a file, search shows titles only: serve the book over http for excerpts.";
    const anchor = form || document.querySelector("main") || document.body.firstChild;
    anchor.parentNode.insertBefore(note, anchor.nextSibling);
  }

  // --- plotly figures on a phone -------------------------------------------------------------------------
  // A title's line breaks and super/subscript tags go: a tag left open on one wrapped line would raise the lines
  // after it onto the ones above (a "<br><sup>subtitle</sup>" desktop title).
  function plain(text) {
    return String(text || "").replace(/<br\s*\/?>/gi, " ").replace(/<\/?(sup|sub)>/gi, "")
      .replace(/\s+/g, " ").trim();
  }

  // Break `text` at spaces into lines of at most `widthPx` at `fontPx`.
  function wrap(text, widthPx, fontPx) {
    const max = Math.max(12, Math.floor(widthPx / (CHAR_PX * fontPx)));
    const visible = s => s.replace(/<[^>]+>/g, "").length;
    const lines = [];
    let line = "";
    for (const word of plain(text).split(" ")) {
      if (line && visible(line) + 1 + visible(word) > max) {
        lines.push(line);
        line = word;
      } else {
        line = line ? line + " " + word : word;
      }
    }
    if (line) lines.push(line);
    return lines;
  }

  function titleText(layout) {
    const t = layout.title;
    return typeof t === "string" ? t : (t && t.text) || "";
  }

  // Every title a control of the figure may show: the longest sets the room kept for the title.
  function allTitles(gd) {
    const titles = [titleText(gd.layout)];
    const scan = args => (args || []).forEach(a => {
      if (a && typeof a === "object" && !Array.isArray(a)) {
        if (typeof a["title.text"] === "string") titles.push(a["title.text"]);
        if (typeof a.title === "string") titles.push(a.title);
        if (a.title && typeof a.title.text === "string") titles.push(a.title.text);
      }
    });
    (gd.layout.sliders || []).forEach(s => (s.steps || []).forEach(st => scan(st.args)));
    (gd.layout.updatemenus || []).forEach(m => (m.buttons || []).forEach(b => scan(b.args)));
    return titles.filter(Boolean);
  }

  function axisKey(id) {  // "x2" -> "xaxis2"
    return id.charAt(0) + "axis" + id.slice(1);
  }

  // The figure's panels (subplots with their own place), top to bottom then left to right.
  function panels(gd) {
    const fl = gd._fullLayout;
    const byPlace = new Map();
    for (const id of (fl._subplots && fl._subplots.cartesian) || []) {
      const m = id.match(/^(x\d*)(y\d*)$/);
      if (!m) continue;
      const xa = fl[axisKey(m[1])], ya = fl[axisKey(m[2])];
      if (!xa || !ya) continue;
      const xs = xa.overlaying ? [] : [m[1]], ys = ya.overlaying ? [] : [m[2]];
      const key = xa.domain.join() + "|" + ya.domain.join();
      const p = byPlace.get(key) || {x: xa.domain.slice(), y: ya.domain.slice(), axes: new Set()};
      xs.concat(ys).forEach(a => p.axes.add(a));
      byPlace.set(key, p);
    }
    return Array.from(byPlace.values()).sort((a, b) => (b.y[1] - a.y[1]) || (a.x[0] - b.x[0]));
  }

  function box(el, origin) {
    const r = el.getBoundingClientRect();
    return {top: r.top - origin.top, bottom: r.bottom - origin.top, left: r.left - origin.left,
            right: r.right - origin.left, width: r.width, height: r.height};
  }

  // plotly.io.to_html gives the figure's div (or the div around it, plotly 6) a fixed height: make room.
  function setHeight(gd, px) {
    gd.style.height = px + "px";
    const outer = gd.parentElement;
    if (outer && outer.style.height && outer.children.length <= 2) outer.style.height = px + "px";
  }

  // The one-column layout, in two passes: place everything, then measure what plotly drew below the plot
  // (tick labels, axis titles, legend, slider) and move the legend and slider under it.
  async function compact(gd) {
    const fl = gd._fullLayout;
    const width = fl.width;
    // Side margins as narrow as the phone wants, but no narrower than the axes' tick labels pushed them when drawn
    // (plotly's automargin): a margin under what an axis pushes is widened at the end of the draw, and plotly then
    // draws the whole figure a second time (its doAutoMargin), which doubled the cost of this script's relayouts.
    const pushed = side => Math.ceil(Math.max(0, ...Object.entries(fl._pushmargin || {})
      .filter(([id, p]) => /^[xy]\d*\.automargin$/.test(id) && p[side] && p[side].val === (side === "l" ? 0 : 1))
      .map(([, p]) => p[side].size)));
    const marginL = Math.max(Math.min(fl.margin.l, 60), Math.min(pushed("l"), fl.margin.l));
    const hasRightAxis = Object.keys(fl).some(k => /^yaxis\d*$/.test(k) && fl[k].side === "right");
    const marginR = hasRightAxis ? 55 : Math.max(15, Math.min(pushed("r"), fl.margin.r));
    // Controls and notes start 8 px from the figure's left edge, not at the plot's: paper x of that edge.
    const leftX = -(marginL - 8) / Math.max(1, width - marginL - marginR);
    const update = {};

    // Title: wrapped to the width, pinned to the top.
    const titleWidth = width - 16;
    const titleLines = Math.max(0, ...allTitles(gd).map(t => wrap(t, titleWidth, TITLE_FONT_PX).length));
    const title = titleText(gd.layout);
    if (title) {
      update.title = {text: wrap(title, titleWidth, TITLE_FONT_PX).join("<br>"), x: 0, xref: "container",
                       xanchor: "left", y: 1, yref: "container", yanchor: "top", pad: {t: 14, l: 8},
                       font: Object.assign({}, (gd.layout.title && gd.layout.title.font) || {}, {size: TITLE_FONT_PX})};
    }
    let top = (titleLines ? titleLines * TITLE_LINE_PX + 20 : 8);

    // Notes pinned above the plot (paper annotations at y >= 1 that are not subplot titles): a row each.
    const notes = [];
    (gd.layout.annotations || []).forEach((a, i) => {
      if (a.xref === "paper" && a.yref === "paper" && a.y >= 1 && a.showarrow === false
          && !(fl._subplots && (fl._subplots.cartesian || []).length > 1 && Math.abs(a.y - 1) < 0.02)) {
        const lines = wrap(a.text, width - 16, (a.font && a.font.size) || 12);
        notes.push({i, top, text: lines.join("<br>")});
        top += lines.length * 16 + 6;
      }
    });
    // Controls above the plot, a row each: a button row wider than the figure becomes a dropdown.
    const origin = gd.getBoundingClientRect();
    const headers = gd.querySelectorAll("g.updatemenu-header-group");
    const menus = (gd.layout.updatemenus || []).map((m, i) => {
      const drawn = headers[i] ? box(headers[i], origin) : {width: 0, height: MENU_ROW_PX - 6};
      const tooWide = m.type === "buttons" && drawn.width > width - 16;
      // a dropdown's header as drawn (33 px at plotly's default font), a row of buttons that became one as guessed
      const row = tooWide ? MENU_ROW_PX + 2 : Math.max(drawn.height, MENU_ROW_PX - 6) + 6;
      // A dropdown sits at the top and opens downwards, over the plot: room for its whole list, no scrolling.
      const dropdown = m.type === "dropdown" || tooWide;
      const menu = Object.assign({}, m, dropdown ? {type: "dropdown", direction: "down"} : {});
      // A dropdown as wide as its longest item: wider than the screen, its items are written smaller.
      const roomPx = width - 40;  // from 8 px in, with plotly's own offset of the header and the arrow's room
      // (a row of buttons turned into one: as wide as its longest label, at about 7 px a character, and the arrow)
      const longest = Math.max(0, ...(m.buttons || []).map(b => plain(b.label).length));
      const dropPx = m.type === "dropdown" ? drawn.width : 40 + 7 * longest * (((m.font && m.font.size) || 12) / 12);
      if (dropdown && dropPx > roomPx) {
        const size = ((m.font && m.font.size) || 12) * roomPx / dropPx;
        menu.font = Object.assign({}, m.font || {}, {size: Math.max(8, Math.floor(size * 10) / 10)});
      }
      return {menu, row};
    });
    const menuTops = [];
    for (const m of menus) {
      if (m.menu.visible === false) continue;
      menuTops.push(top);
      top += m.row;
    }
    // Subplot titles (make_subplots' annotations sit just above their panel), wrapped to the width.
    const places = panels(gd);
    const annotations = (gd.layout.annotations || []).map(a => Object.assign({}, a));
    // make_subplots centres each title over its panel; a builder that later narrows the panels leaves it off
    // centre, but still over the panel: the title over a panel's top, nearest its centre, is that panel's.
    const subplotTitle = (a, p) => a.xref === "paper" && a.yref === "paper" && a.showarrow === false
      && a.x >= p.x[0] - 0.02 && a.x <= p.x[1] + 0.02 && Math.abs(a.y - p.y[1]) < 0.02;
    const centre = p => (p.x[0] + p.x[1]) / 2;
    const titleOf = places.map(p => places.length > 1 ? annotations.filter(a => subplotTitle(a, p))
      .sort((a, b) => Math.abs(a.x - centre(p)) - Math.abs(b.x - centre(p)))[0] : undefined);
    const headPx = titleOf.map(a => {
      if (!a) return 0;
      // make_subplots writes its titles at 16 px unless told otherwise
      const fontPx = (a.font && a.font.size) || SUBPLOT_FONT_PX;
      const lines = wrap(a.text, width - 20, fontPx);
      a.text = lines.join("<br>");
      return Math.ceil(lines.length * fontPx * SUBPLOT_LINE_EM) + 6;
    });
    top += headPx[0] || GAP_PX;
    // Any other note written across the plot, longer than the plot is wide, is wrapped to it.
    annotations.forEach((a, i) => {
      if (titleOf.includes(a) || notes.some(nt => nt.i === i) || typeof a.text !== "string") return;
      const lines = wrap(a.text, width - marginL - marginR, (a.font && a.font.size) || 12);
      if (lines.length > 1) a.text = lines.join("<br>");
    });

    // Panels: one column; between two panels the x axis of the upper one (axisBelow[i] px under panel i: first
    // guessed, then measured) and the title of the lower one. Returns the layout keys that depend on it.
    const plotPx0 = fl._size.h;
    const n = Math.max(1, places.length);
    const panelPx = n === 1 ? Math.max(220, Math.min(plotPx0, 320)) : PANEL_PX;
    const domains = [];
    function arrange(axisBelow) {
      const part = {};
      const gaps = places.map((p, i) => i === 0 ? 0 : axisBelow[i - 1] + headPx[i]);
      const plotPx = n * panelPx + gaps.reduce((a, b) => a + b, 0);
      if (places.length > 1) {
        let fromTop = 0;
        places.forEach((p, i) => {
          fromTop += gaps[i];
          const y = [1 - (fromTop + panelPx) / plotPx, 1 - fromTop / plotPx];
          domains[i] = y;
          if (titleOf[i]) Object.assign(titleOf[i], {x: 0.5, y: y[1], xanchor: "center", yanchor: "bottom"});
          for (const id of p.axes) part[axisKey(id) + ".domain"] = id.charAt(0) === "x" ? [0, 1] : y;
          fromTop += panelPx;
        });
        part.annotations = annotations;
      }
      if (annotations.length) part.annotations = annotations;  // wrapped notes, placed titles
      const yFromTop = px => 1 + (top - px) / plotPx;  // paper y of a point px below the figure's top
      if (notes.length) {
        notes.forEach(nt => Object.assign(annotations[nt.i], {text: nt.text, x: leftX, xanchor: "left", y: yFromTop(nt.top),
                                                              yanchor: "top", align: "left"}));
        part.annotations = annotations;
      }
      menus.forEach((m, i) => Object.assign(m.menu, {x: leftX, xanchor: "left", y: yFromTop(menuTops[i] || top),
                                                     yanchor: "top", pad: {t: 0, b: 0, l: 0, r: 0}}));
      if (menus.length) part.updatemenus = menus.map(m => m.menu);
      return {part, plotPx};
    }
    const guess = places.map(() => AXIS_BELOW_PX);
    const {part, plotPx} = arrange(guess);
    Object.assign(update, part);
    // plotly leaves a button row drawn when its menu becomes a dropdown: clear the menus first.
    if (menus.some(m => m.menu.type !== (gd.layout.updatemenus[menus.indexOf(m)] || {}).type))
      await relayoutAlone(gd, {updatemenus: []});
    // An axis title longer than its axis is wrapped (a y title runs along the plot's height).
    for (const k of Object.keys(fl)) {
      const ax = fl[k];
      if (!/^[xy]axis\d*$/.test(k) || !ax.title || !ax.title.text) continue;
      // an axis with no title has plotly's placeholder ("Click to enter X axis title"), shown only to an editor
      if (Object.values(fl._dfltTitle || {}).includes(ax.title.text)) continue;
      const along = k.charAt(0) === "x" ? width - marginL - marginR : (places.length > 1 ? PANEL_PX : 300);
      const lines = wrap(ax.title.text, along, (ax.title.font && ax.title.font.size) || 14);
      if (lines.length > 1) update[k + ".title.text"] = lines.join("<br>");
    }
    // Legend entries longer than the screen are wrapped: plotly cuts a legend wider than the figure. Only traces with
    // an entry (hidden ones too: a control may show them): a restyle of the names redraws the whole figure.
    const names = (gd.data || []).map(t => t.showlegend === false ? null : t.name);
    const wrapped = names.map(nm => typeof nm === "string" ? wrap(nm, width - 60, 12) : [nm]);
    const renamed = wrapped.map((lines, i) => lines.length > 1 ? i : -1).filter(i => i >= 0);
    if (renamed.length) await window.Plotly.restyle(gd, {name: renamed.map(i => wrapped[i].join("<br>"))}, renamed);
    // Category labels side by side overlap at this width: let plotly turn them.
    for (const k of Object.keys(fl)) if (/^xaxis\d*$/.test(k) && fl[k].type === "category") update[k + ".tickangle"] = "auto";
    // Below the plot, provisionally, within the provisional margin (a slider left at its desktop y, in paper units of
    // a taller plot, would push the margin and shrink the plot under the panels' plan): measured and moved in the
    // second pass.
    const sliders = (gd.layout.sliders || []).map(s => Object.assign({}, s, {x: 0, len: 1, xanchor: "left", y: -60 / plotPx,
                                                                             yanchor: "top", pad: {t: 10, b: 10, l: 12, r: 12}}));
    // The legend starts where the controls do, at the figure's left edge: a legend as wide as the figure allows
    // (entries are wrapped to that), started at the plot's left edge, would push plotly's right margin and, with a
    // menu placed left of the plot, narrow the plot (mesh: 193 px of 274).
    update.legend = Object.assign({}, gd.layout.legend || {}, {orientation: "h", x: leftX, xanchor: "left",
                                                               yanchor: "top", y: -60 / plotPx});  // moved below
    // Room enough below for the provisional legend (one row per entry at this width): were it to overflow, plotly
    // would grow the margin into the plot and the second pass would measure axis labels that moved.
    const entries = (gd.data || []).filter(t => t.showlegend !== false).length;
    const provisional = Math.max(400, 120 + 24 * entries);
    Object.assign(update, {"margin.t": top, "margin.l": marginL, "margin.r": marginR, "margin.b": provisional,
                           height: top + plotPx + provisional});
    setHeight(gd, top + plotPx + provisional);
    if (sliders.length) update.sliders = sliders;
    await relayoutAlone(gd, update);

    // The x axis under each upper panel (tick labels turned upright, its title) may need more room than guessed.
    if (places.length > 1) {
      const o = gd.getBoundingClientRect();
      const fl1 = gd._fullLayout;
      const needed = places.map((p, i) => {
        if (i === n - 1) return 0;
        const panelBottom = fl1._size.t + (1 - domains[i][0]) * fl1._size.h;
        let depth = 0;
        for (const id of p.axes) {
          if (id.charAt(0) !== "x") continue;
          for (const el of gd.querySelectorAll(`.xaxislayer-above .${id}tick text, .g-${id}title text`)) {
            const b = box(el, o);
            if (b.height) depth = Math.max(depth, b.bottom - panelBottom);
          }
        }
        return Math.max(AXIS_BELOW_PX, Math.ceil(depth) + GAP_PX);
      });
      if (needed.some((px, i) => px > guess[i] + 2)) {
        const again = arrange(needed);
        const height = top + again.plotPx + provisional;
        setHeight(gd, height);
        await relayoutAlone(gd, Object.assign(again.part, {height, "legend.y": -60 / again.plotPx}));
      }
    }

    // Second pass: what hangs below the plot area, measured where plotly drew the plot (its margins may have
    // grown for rotated tick labels); once more if the legend still meets an axis label.
    for (let pass = 0; pass < 3 && await placeBelow(gd); pass++);
    setHeight(gd, gd._fullLayout.height);
  }

  // The x axes' tick labels and titles under the plot area, the legend, the sliders: true when it moved them.
  const AXIS_TEXT = ".xaxislayer-above text, [class^='g-x'][class$='title'] text";
  // A slider or a height this close to its place stays (each move is a full redraw of the figure).
  const SETTLED_PX = 4;
  async function placeBelow(gd) {
    const fl = gd._fullLayout;
    const o = gd.getBoundingClientRect();
    const plotTop = fl._size.t, plotPx = fl._size.h, plotBottom = plotTop + plotPx;
    let below = 0;
    for (const el of gd.querySelectorAll(AXIS_TEXT)) {
      const b = box(el, o);
      if (b.height && b.top >= plotBottom - 4) below = Math.max(below, b.bottom - plotBottom);
    }
    below += GAP_PX;
    const legendEl = gd.querySelector("g.legend");
    const shown = legendEl && fl.showlegend !== false;
    const legendBox = shown ? box(legendEl.querySelector("rect.bg") || legendEl, o) : null;
    const sliderEls = Array.from(gd.querySelectorAll("g.slider-group"));
    const update = {};
    let bottom = below;
    if (shown) {
      if (Math.abs(legendBox.top - (plotBottom + below)) > 2) update["legend.y"] = -below / plotPx;
      bottom += legendBox.height + GAP_PX;
    }
    sliderEls.forEach((el, i) => {
      const b = box(el, o);
      // plotly draws the slider's box a few px off the y it is given (its padding): that offset, measured on the
      // slider as drawn, is taken off, so that the box lands where it should in one pass
      const given = fl.sliders && fl.sliders[i] ? plotBottom - fl.sliders[i].y * plotPx : b.top;
      const offset = Number.isFinite(given) ? b.top - given : 0;
      if (Math.abs(b.top - (plotBottom + bottom)) > SETTLED_PX) update[`sliders[${i}].y`] = -(bottom - offset) / plotPx;
      bottom += b.height + GAP_PX;
    });
    const height = plotBottom + bottom + GAP_PX;
    if (!Object.keys(update).length && Math.abs(fl.height - height) <= SETTLED_PX) return false;
    Object.assign(update, {"margin.b": bottom + GAP_PX, height});
    await relayoutAlone(gd, update);
    setHeight(gd, gd._fullLayout.height);
    return true;
  }

  // A wide figure keeps its own layout, except a slider drawn on the legend (a legend wraps into more rows
  // than its builder expected): the slider moves under the legend, the figure grows by as much.
  async function clearSliders(gd) {
    const legend = gd.querySelector("g.legend");
    const sliders = gd.querySelectorAll("g.slider-group");
    if (!legend) return;
    const o = gd.getBoundingClientRect();
    const lb = box(legend, o);
    const fl = gd._fullLayout;
    const meets = b => b.width && b.top < lb.bottom && lb.top < b.bottom && b.left < lb.right && lb.left < b.right;
    // A legend under the plot that wrapped onto the x axis' labels or title: the legend and slider go under them.
    if (lb.top >= fl._size.t + fl._size.h - 4 && Array.from(gd.querySelectorAll(AXIS_TEXT)).some(el => meets(box(el, o)))) {
      for (let pass = 0; pass < 3 && await placeBelow(gd); pass++);
      return;
    }
    if (!sliders.length) return;
    if (!Array.from(sliders).some(el => { const b = box(el, o); return b.top < lb.bottom && lb.top < b.bottom; })) return;
    const plotBottom = fl._size.t + fl._size.h;
    let bottom = lb.bottom - plotBottom + GAP_PX;
    const update = {};
    sliders.forEach((el, i) => {
      Object.assign(update, {[`sliders[${i}].y`]: -bottom / fl._size.h, [`sliders[${i}].yanchor`]: "top"});
      bottom += box(el, o).height + GAP_PX;
    });
    Object.assign(update, {"margin.b": bottom + GAP_PX, height: plotBottom + bottom + GAP_PX});
    await relayoutAlone(gd, update);
    setHeight(gd, gd._fullLayout.height);
  }

  // After a control changed the title (slider steps and buttons often do): wrap it again. A desktop title
  // with its own "<br><sup>subtitle</sup>" is wrapped as well; a title this script wrapped is left alone.
  // Waited for before the ticks are tidied: drawn in slices (gpucomm_draw_slices.js), the relayout may still be drawing.
  async function rewrapTitle(gd) {
    const title = titleText(gd.layout);
    if (!title || title === gd._gcTitle) return;
    const text = wrap(title, gd._fullLayout.width - 16, TITLE_FONT_PX).join("<br>");
    gd._gcTitle = text;
    if (text !== title) await window.Plotly.relayout(gd, {"title.text": text});
  }

  // A title as this script shows it in figure ``gd``: on a figure laid out for a phone, wrapped to its width (what
  // rewrapTitle would relayout it to); else as given. gpucomm_live.js asks before it writes a live update's title, so
  // that the title goes in once, in its final form, and rewrapTitle finds nothing to do.
  window.gpucommLayout = Object.assign(window.gpucommLayout || {}, {
    title(gd, text) {
      if (gd.dataset.gcLayout !== "phone" || !gd._fullLayout || typeof text !== "string" || !text) return text;
      const shown = wrap(text, gd._fullLayout.width - 16, TITLE_FONT_PX).join("<br>");
      gd._gcTitle = shown;
      return shown;
    },
  });

  // --- dropdowns chosen by a tap ----------------------------------------------------------------------
  // plotly.js lets a long dropdown list scroll by dragging; its drag handler cancels the touchstart, so the
  // browser never turns a tap on an item into a click and the item does nothing (plotly.js issue #6127). A
  // tap (a touch that ends where it started, on the same item) is turned into a click on the item here, which
  // runs plotly's own handler (the item's method and args, the menu's active index, plotly_buttonclicked).
  // The browser's own click, when it would come, is cancelled: each tap gives exactly one click.
  const TAP_SLOP_PX = 10;
  const TAP_MS = 600;

  function tapThroughDropdowns(gd) {
    if (gd._gcTap) return;
    gd._gcTap = true;
    let start = null;
    const itemAt = target => target && target.closest ? target.closest("g.updatemenu-dropdown-button") : null;
    gd.addEventListener("touchstart", e => {
      const item = e.touches.length === 1 ? itemAt(e.target) : null;
      start = item ? {item, x: e.touches[0].clientX, y: e.touches[0].clientY, t: Date.now()} : null;
    }, {capture: true, passive: true});
    gd.addEventListener("touchend", e => {
      const s = start;
      start = null;
      if (!s || e.changedTouches.length !== 1) return;
      const t = e.changedTouches[0];
      if (Math.hypot(t.clientX - s.x, t.clientY - s.y) > TAP_SLOP_PX || Date.now() - s.t > TAP_MS) return;
      if (itemAt(document.elementFromPoint(t.clientX, t.clientY)) !== s.item) return;
      e.preventDefault();
      s.item.dispatchEvent(new MouseEvent("click", {bubbles: true, cancelable: true, view: window}));
    }, {capture: true, passive: false});
  }

  // --- every figure, any width: titles, tick labels, log axes ------------------------------------------
  // A title wider than its figure (a long case name, a subtitle, a title a control set) is wrapped line by line
  // (a "<sup>" subtitle stays one), at the width its own glyphs take, and the figure grows by the lines added.
  async function fitTitle(gd) {
    const svg = gd.querySelector("svg.main-svg");
    const title = titleText(gd.layout);
    if (!gd.querySelector(".gtitle") || !svg || !title) return;
    const f = svg.getBoundingClientRect();
    const fl = gd._fullLayout;
    let t = gd.querySelector(".gtitle").getBoundingClientRect();
    if ((t.right > f.right - 2 || t.left < f.left - 1) && (gd._gcTitleWraps || 0) < 3) {
      gd._gcTitleWraps = (gd._gcTitleWraps || 0) + 1;  // a title that will not fit is not wrapped forever
      const parts = title.split(/<br\s*\/?>/i);
      const visible = s => s.replace(/<[^>]+>/g, "").length;
      const pxPerChar = t.width / Math.max(1, ...parts.map(visible));
      const maxChars = Math.max(12, Math.floor((f.right - Math.max(t.left, f.left) - 8) / pxPerChar));
      const lines = [];
      for (const part of parts) {
        const sup = /^\s*<sup>(.*)<\/sup>\s*$/i.exec(part);
        const words = (sup ? sup[1] : part).trim().split(/\s+/);
        const limit = sup ? Math.floor(maxChars / 0.7) : maxChars;  // plotly draws <sup> at 70 %
        let line = "";
        const out = [];
        for (const w of words) {
          if (line && visible(line) + 1 + visible(w) > limit) { out.push(line); line = w; } else line = line ? line + " " + w : w;
        }
        if (line) out.push(line);
        lines.push(...out.map(l => sup ? "<sup>" + l + "</sup>" : l));
      }
      if (lines.length > parts.length) {
        const fontPx = (fl.title.font && fl.title.font.size) || 17;
        const added = Math.ceil((lines.length - parts.length) * fontPx * 1.25);
        await relayoutAlone(gd, {"title.text": lines.join("<br>"), "margin.t": fl.margin.t + added,
                                          height: fl.height + added, "title.yref": "container", "title.y": 1,
                                          "title.yanchor": "top", "title.pad.t": 8});
        setHeight(gd, gd._fullLayout.height);
        t = gd.querySelector(".gtitle").getBoundingClientRect();
      }
    }
    // Lines above the figure's top (plotly anchors a title of several lines by its first line's box): pinned to the
    // top and padded by what still sticks out, a couple of times at most.
    if (t.top < f.top + 1 && (gd._gcTitlePins || 0) < 2) {
      gd._gcTitlePins = (gd._gcTitlePins || 0) + 1;
      const pad = (gd._fullLayout.title.yanchor === "top" && gd._fullLayout.title.pad.t) || 0;
      await relayoutAlone(gd, {"title.yref": "container", "title.y": 1, "title.yanchor": "top",
                                        "title.pad.t": pad + Math.ceil(f.top + 4 - t.top)});
    }
  }

  // A log axis' tick value (log10 of the number) at a power of ten.
  const atDecade = x => Number.isFinite(x) && Math.abs(x - Math.round(x)) < 1e-9;

  // Tick labels that would print over one another ("8 B" against "16 B" at the small end of a log axis): the later of
  // two is hidden, but a log axis' full numbers (its decades, "100" and "1000", drawn bigger than the digits between
  // them) are kept first: hiding "100" under the "9" just below it left an axis of single digits (rack_scale).
  // Upright labels only: plotly turns labels it sees colliding, and spaces those.
  function hideCrowdedTicks(gd) {
    const fl = gd._fullLayout;
    const isDecade = tx => {  // a label of a log axis ("x2tick" labels are xaxis2's) at a power of ten
      const id = (/^([xy])(\d*)tick$/.exec(tx.parentNode.getAttribute("class") || ""));
      const ax = id && fl[id[1] + "axis" + id[2]];
      return !!(ax && ax.type === "log" && tx.__data__ && atDecade(tx.__data__.x));
    };
    for (const layer of gd.querySelectorAll("g.xaxislayer-above, g.yaxislayer-above")) {
      const vertical = layer.classList.contains("yaxislayer-above");
      const labels = Array.from(layer.querySelectorAll("text"))
        .filter(tx => !/rotate\((?!0)/.test(tx.getAttribute("transform") || ""))
        .map(tx => { tx.style.visibility = ""; return {tx, b: tx.getBoundingClientRect(), first: isDecade(tx)}; })
        .filter(l => l.b.width);
      labels.sort((a, b) => (b.first - a.first) || (vertical ? b.b.top - a.b.top : a.b.left - b.b.left));
      const gap = 3;
      const meets = (b, k) => vertical ? b.bottom > k.top - gap + 1 && b.top < k.bottom + gap - 1
                                       : b.left < k.right + gap - 1 && b.right > k.left - gap + 1;
      const kept = [];
      for (const {tx, b} of labels) {
        if (kept.some(k => meets(b, k))) {
          tx.style.visibility = "hidden";
          tx.dataset.gcHidden = "1";
        } else {
          kept.push(b);
          delete tx.dataset.gcHidden;
        }
      }
    }
  }

  // A log axis whose automatic ticks show one full number and single digits around it ("5  1000  2": 500 or
  // 5000?) gets ticks at 1, 2 and 5 of each decade in its range, each written in full.
  function fullNumber(v) {
    const abs = Math.abs(v);
    for (const [scale, suffix] of [[1e9, "G"], [1e6, "M"], [1e3, "k"]])
      if (abs >= 10 * scale) return String(+(v / scale).toPrecision(3)) + suffix;
    return String(+v.toPrecision(3));
  }

  async function spellLogTicks(gd) {
    const fl = gd._fullLayout;
    const update = {};
    for (const k of Object.keys(fl)) {
      const ax = fl[k];
      if (!/^[xy]axis\d*$/.test(k) || ax.type !== "log" || !ax.range) continue;
      const mine = (gd._gcLogTicks || {})[k];
      const range = ax.range.map(r => +r.toFixed(3)).join();
      if (mine ? mine === range : ax.tickmode === "array") continue;  // ticks of the builder's, or ours still right
      const majors = (ax._vals || []).filter(v => v.text && atDecade(v.x)).length;
      if (!mine && majors >= 2) continue;
      const [lo, hi] = ax.range[0] < ax.range[1] ? ax.range : [ax.range[1], ax.range[0]];
      const vals = [];
      for (let d = Math.floor(lo); d <= Math.ceil(hi); d++)
        for (const m of [1, 2, 5]) { const v = m * Math.pow(10, d); if (Math.log10(v) >= lo && Math.log10(v) <= hi) vals.push(v); }
      if (vals.length < 2) continue;
      Object.assign(update, {[k + ".tickmode"]: "array", [k + ".tickvals"]: vals, [k + ".ticktext"]: vals.map(fullNumber)});
      (gd._gcLogTicks = gd._gcLogTicks || {})[k] = range;
    }
    if (Object.keys(update).length) await relayoutAlone(gd, update);
  }

  async function tidy(gd, wide) {
    await spellLogTicks(gd);
    if (wide) { await nextTask(); await fitTitle(gd); }
    await nextTask();
    hideCrowdedTicks(gd);
  }

  function layoutFigure(gd) {
    if (!gd._fullLayout || !gd._fullLayout._size || gd._gcBusy) return;
    if (gd._gcLayout === gd.layout) {  // already laid out: only a title a control rewrote, ticks redrawn
      gd._gcBusy = true;
      const wide = gd.dataset.gcLayout === "wide";
      (wide ? Promise.resolve() : rewrapTitle(gd)).then(() => tidy(gd, wide))
        .catch(err => console.warn("gpucomm_layout:", err)).finally(() => { gd._gcBusy = false; });
      return;
    }
    const wide = gd._fullLayout.width >= NARROW_PX;
    gd._gcBusy = true;
    (wide ? clearSliders(gd) : compact(gd)).then(nextTask).then(() => tidy(gd, wide))
      .catch(err => console.warn("gpucomm_layout: figure left as built:", err)).finally(() => {
        gd._gcBusy = false;
        gd._gcLayout = gd.layout;  // Plotly.react (a live calculator's redraw) replaces it: laid out again
        gd.dataset.gcLayout = wide ? "wide" : "phone";
      });
  }

  function watchFigures() {
    if (!window.Plotly) return;
    for (const gd of document.querySelectorAll(".js-plotly-plot")) {
      tapThroughDropdowns(gd);
      if (!gd._gcWatched && gd.on) {
        gd._gcWatched = true;
        // After a redraw (a control of the figure's, a live calculator's update): once the redraws stop for
        // AFTERPLOT_QUIET_MS, so that a slider dragged or a live update's title and curves (drawn a frame apart) are
        // laid out once, after they are on screen, not between them.
        gd.on("plotly_afterplot", () => {
          clearTimeout(gd._gcAfterplot);
          gd._gcAfterplot = setTimeout(() => layoutFigure(gd), AFTERPLOT_QUIET_MS);
        });
      }
      setTimeout(() => layoutFigure(gd), 0);  // one task per figure
    }
  }

  function start() {
    wrapTables();
    widenTallTables();
    searchNote();
    // The page's own figures are drawn in slices, one after another, and may still be drawing at load
    // (gpucomm_draw_slices.js): they are laid out once all are drawn.
    const drawn = window.gpucommFiguresDrawn ? window.gpucommFiguresDrawn() : Promise.resolve();
    drawn.then(() => {
      watchFigures();
      // Figures drawn after load (a live calculator's first draw) are picked up on their first redraw.
      setTimeout(watchFigures, 500);
    });
  }

  if (document.readyState === "complete") start();
  else window.addEventListener("load", start);
})();
