// The book on a narrow screen: wide tables, plotly figures laid out for a phone, the search page over file://.
// Added to every page by book/_ext/book_page_assets.py (with gpucomm_layout.css). Runs offline: only plotly's
// own API (Plotly.relayout) and the DOM.
//
// Figures. Each figure is built for a desktop page (about 800 px): panels side by side, controls placed in
// plotly's paper coordinates, legends below the plot. Below NARROW_PX a figure is laid out again, once it is
// drawn, as one column read from top to bottom: title (wrapped to the width), each button row or dropdown on
// a row of its own, the panels stacked, the legend, then the slider. Positions are computed in pixels from
// what plotly drew (legend, axis labels, slider), so nothing overlaps whatever the texts' lengths. The
// figure's data, frames, buttons and slider steps are untouched; a title a control changes later is wrapped
// again after each redraw.
(function () {
  "use strict";

  const NARROW_PX = 600;       // figures narrower than this get the one-column layout
  const TITLE_FONT_PX = 15;
  const TITLE_LINE_PX = 20;
  const CHAR_PX = 0.56;        // average glyph width of plotly's sans-serif, in font sizes: for wrapping
  const MENU_ROW_PX = 32;      // one button row or closed dropdown
  const PANEL_PX = 250;        // height of each stacked panel
  const AXIS_BELOW_PX = 75;    // under a stacked panel: its x tick labels and axis title
  const SUBPLOT_FONT_PX = 14;
  const SUBPLOT_LINE_PX = 18;
  const GAP_PX = 10;

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
      while (tallestRow(table) > TALL_ROW_PX && width < MAX_TABLE_PX) {
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
    const marginL = Math.min(fl.margin.l, 60);
    const hasRightAxis = Object.keys(fl).some(k => /^yaxis\d*$/.test(k) && fl[k].side === "right");
    const marginR = hasRightAxis ? 55 : 15;
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
      const tooWide = m.type === "buttons" && drawn.width > width - 8;
      const row = (m.type === "buttons" && !tooWide) ? drawn.height + 6 : MENU_ROW_PX;
      // A dropdown sits at the top and opens downwards, over the plot: room for its whole list, no scrolling.
      const dropdown = m.type === "dropdown" || tooWide;
      return {menu: Object.assign({}, m, dropdown ? {type: "dropdown", direction: "down"} : {}), row};
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
    const subplotTitle = (a, p) => a.xref === "paper" && a.yref === "paper" && a.showarrow === false
      && Math.abs(a.x - (p.x[0] + p.x[1]) / 2) < 0.02 && Math.abs(a.y - p.y[1]) < 0.02;
    const titleOf = places.map(p => places.length > 1 ? annotations.find(a => subplotTitle(a, p)) : undefined);
    const headPx = titleOf.map(a => {
      if (!a) return 0;
      const lines = wrap(a.text, width - 20, SUBPLOT_FONT_PX);
      a.text = lines.join("<br>");
      return lines.length * SUBPLOT_LINE_PX + 6;
    });
    top += headPx[0] || GAP_PX;

    // Panels: one column; between two panels the x axis of the upper one and the title of the lower one.
    const plotPx0 = fl._size.h;
    const n = Math.max(1, places.length);
    const panelPx = n === 1 ? Math.max(220, Math.min(plotPx0, 320)) : PANEL_PX;
    const gaps = places.map((p, i) => i === 0 ? 0 : AXIS_BELOW_PX + headPx[i]);
    const plotPx = n * panelPx + gaps.reduce((a, b) => a + b, 0);
    if (places.length > 1) {
      let fromTop = 0;
      places.forEach((p, i) => {
        fromTop += gaps[i];
        const y = [1 - (fromTop + panelPx) / plotPx, 1 - fromTop / plotPx];
        if (titleOf[i]) Object.assign(titleOf[i], {x: 0.5, y: y[1], xanchor: "center", yanchor: "bottom"});
        for (const id of p.axes) update[axisKey(id) + ".domain"] = id.charAt(0) === "x" ? [0, 1] : y;
        fromTop += panelPx;
      });
      update.annotations = annotations;
    }
    const yFromTop = px => 1 + (top - px) / plotPx;  // paper y of a point px below the figure's top
    if (notes.length) {
      const all = update.annotations || annotations;
      notes.forEach(nt => Object.assign(all[nt.i], {text: nt.text, x: 0, xanchor: "left", y: yFromTop(nt.top),
                                                    yanchor: "top", align: "left"}));
      update.annotations = all;
    }
    menus.forEach((m, i) => Object.assign(m.menu, {x: 0, xanchor: "left", y: yFromTop(menuTops[i] || top),
                                                   yanchor: "top", pad: {t: 0, b: 0, l: 0, r: 0}}));
    if (menus.length) update.updatemenus = menus.map(m => m.menu);
    // plotly leaves a button row drawn when its menu becomes a dropdown: clear the menus first.
    if (menus.some(m => m.menu.type !== (gd.layout.updatemenus[menus.indexOf(m)] || {}).type))
      await window.Plotly.relayout(gd, {updatemenus: []});
    // Category labels side by side overlap at this width: let plotly turn them.
    for (const k of Object.keys(fl)) if (/^xaxis\d*$/.test(k) && fl[k].type === "category") update[k + ".tickangle"] = "auto";
    // Below the plot, provisionally: measured and moved in the second pass.
    const sliders = (gd.layout.sliders || []).map(s => Object.assign({}, s, {x: 0, len: 1, xanchor: "left",
                                                                             yanchor: "top", pad: {t: 10, b: 10, l: 12, r: 12}}));
    update.legend = Object.assign({}, gd.layout.legend || {}, {orientation: "h", x: 0, xanchor: "left",
                                                               yanchor: "top", y: -60 / plotPx});
    // Room enough below for the provisional legend (one row per entry at this width): were it to overflow, plotly
    // would grow the margin into the plot and the second pass would measure axis labels that moved.
    const entries = (gd.data || []).filter(t => t.showlegend !== false).length;
    const provisional = Math.max(400, 120 + 24 * entries);
    Object.assign(update, {"margin.t": top, "margin.l": marginL, "margin.r": marginR, "margin.b": provisional,
                           height: top + plotPx + provisional});
    setHeight(gd, top + plotPx + provisional);
    if (sliders.length) update.sliders = sliders;
    await window.Plotly.relayout(gd, update);

    // Second pass: what hangs below the plot area.
    const o2 = gd.getBoundingClientRect();
    const plotBottom = top + plotPx;
    let below = 0;
    for (const el of gd.querySelectorAll(".xtick text, .g-xtitle, [class^='g-x'][class$='title'], .xaxislayer-above text")) {
      const b = box(el, o2);
      if (b.height && b.top >= plotBottom - 4) below = Math.max(below, b.bottom - plotBottom);
    }
    below += GAP_PX;
    const legendEl = gd.querySelector("g.legend");
    const legendPx = legendEl && fl.showlegend !== false ? box(legendEl, o2).height + GAP_PX : 0;
    const second = {"legend.y": -below / plotPx};
    let bottom = below + legendPx;
    gd.querySelectorAll("g.slider-group").forEach((el, i) => {
      second[`sliders[${i}].y`] = -bottom / plotPx;
      bottom += box(el, o2).height + GAP_PX;
    });
    Object.assign(second, {"margin.b": bottom + GAP_PX, height: top + plotPx + bottom + GAP_PX});
    await window.Plotly.relayout(gd, second);
    setHeight(gd, gd._fullLayout.height);
  }

  // A wide figure keeps its own layout, except a slider drawn on the legend (a legend wraps into more rows
  // than its builder expected): the slider moves under the legend, the figure grows by as much.
  async function clearSliders(gd) {
    const legend = gd.querySelector("g.legend");
    const sliders = gd.querySelectorAll("g.slider-group");
    if (!legend || !sliders.length) return;
    const o = gd.getBoundingClientRect();
    const lb = box(legend, o);
    const fl = gd._fullLayout;
    if (!Array.from(sliders).some(el => { const b = box(el, o); return b.top < lb.bottom && lb.top < b.bottom; })) return;
    const plotBottom = fl._size.t + fl._size.h;
    let bottom = lb.bottom - plotBottom + GAP_PX;
    const update = {};
    sliders.forEach((el, i) => {
      Object.assign(update, {[`sliders[${i}].y`]: -bottom / fl._size.h, [`sliders[${i}].yanchor`]: "top"});
      bottom += box(el, o).height + GAP_PX;
    });
    Object.assign(update, {"margin.b": bottom + GAP_PX, height: plotBottom + bottom + GAP_PX});
    await window.Plotly.relayout(gd, update);
    setHeight(gd, gd._fullLayout.height);
  }

  // After a control changed the title (slider steps and buttons often do): wrap it again. A desktop title
  // with its own "<br><sup>subtitle</sup>" is wrapped as well; a title this script wrapped is left alone.
  function rewrapTitle(gd) {
    const title = titleText(gd.layout);
    if (!title || title === gd._gcTitle) return;
    const text = wrap(title, gd._fullLayout.width - 16, TITLE_FONT_PX).join("<br>");
    gd._gcTitle = text;
    if (text !== title) window.Plotly.relayout(gd, {"title.text": text});
  }

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

  function layoutFigure(gd) {
    if (!gd._fullLayout || !gd._fullLayout._size || gd._gcBusy) return;
    if (gd._gcLayout === gd.layout) {  // already laid out: only a title a control rewrote
      if (gd.dataset.gcLayout === "phone") rewrapTitle(gd);
      return;
    }
    const wide = gd._fullLayout.width >= NARROW_PX;
    gd._gcBusy = true;
    (wide ? clearSliders(gd) : compact(gd)).catch(err => console.warn("gpucomm_layout: figure left as built:", err)).finally(() => {
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
        gd.on("plotly_afterplot", () => setTimeout(() => layoutFigure(gd), 0));
      }
      layoutFigure(gd);
    }
  }

  function start() {
    wrapTables();
    widenTallTables();
    searchNote();
    watchFigures();
    // Figures drawn after load (a live calculator's first draw) are picked up on their first redraw.
    setTimeout(watchFigures, 500);
  }

  if (document.readyState === "complete") start();
  else window.addEventListener("load", start);
})();
