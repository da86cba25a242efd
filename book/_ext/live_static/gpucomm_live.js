// The book's live calculators: controls drawn from the calculator's field metadata, every change
// recomputed by the gpucomm model in Pyodide (Python compiled to WebAssembly) in a Web Worker
// (gpucomm_live_worker.mjs), and the figure redrawn with the traces that changed. Added by
// book/_ext/book_page_assets.py to pages holding a live panel, which the package writes
// (gpucomm.viz.calculators.live.LivePanel):
//
//   <div class="gpucomm-live" data-gpucomm-live="NAME">
//     <script type="application/json" class="gpucomm-live-controls">{rows, fields}</script>
//     <p class="gpucomm-live-summary">...</p>
//     <div class="gpucomm-live-figure">(the figure precomputed at build time)</div>
//   </div>
//
// Nothing heavy loads with the page: Pyodide (from _static/pyodide/) and the package (the zip named
// by this script's data-package attribute) are fetched, from this site only, when a panel scrolls
// into view or the reader first touches a control, and start in a worker: the page never waits for
// them (a progress line says how far they are). Over file:// browsers refuse WebAssembly and module
// workers: the panel says so and keeps the static view.
//
// Drawing: a change that moves the data of the same traces (what a slider or a typed number does) is drawn directly
// (fastDraw): the new arrays into the traces, plotly's own calc of the traces of the subplots concerned and the plot
// of every trace, at once, with no supplyDefaults pass over the figure and no wait for an animation frame. A title
// whose markup stays (only its words change) is written into its SVG text (setTitleText); other titles and a range the
// model sets go by one
// relayout, which also re-ranges an axis that plotly ranges itself where the new data leaves its range or fills less
// than a quarter of it, and then draws axes and data together. Anything else (traces shown or hidden, names, other
// layout changes) goes through Plotly.react or Plotly.update. Changes arriving while one is computed are coalesced:
// at most one recompute per animation frame, with the latest values.
//
// window.gpucommLive (read by tests/book and benchmarks/): updates (one record per recompute:
// {calculator, field, first, ok, ms, computeMs, pythonMs, drawMs, fast, way, coalesced, message, messageField}),
// firstInteraction, startedAt (loading began), loadMs, firstResult, phases, call(fn, ...args).
(function () {
  "use strict";

  const script = document.currentScript;
  const STATIC = script.src.split("?")[0].replace(/[^/]*$/, "");  // .../_static/
  const PYODIDE_URL = STATIC + "pyodide/";
  const PACKAGE_URL = STATIC + script.dataset.package;
  const WORKER_URL = STATIC + "gpucomm_live_worker.mjs";
  const LOOSE_FRACTION = 0.25;  // re-range an autoranged axis when the data spans less than this share of it

  const live = window.gpucommLive = window.gpucommLive ||
    {updates: [], firstInteraction: null, startedAt: null, loadMs: null, firstResult: null, phases: {},
     progress: null, state: "idle"};

  // --- the Python runtime: one worker per page, started once -----------------------------------------------
  const listeners = new Set();  // (progress) => void, one per panel: its progress line
  let worker = null, ready = null, nextId = 1;
  const waiting = new Map();  // call id -> {resolve, reject}

  function progressText(p) {
    if (p.phase === "failed") return `Could not start Python in this browser (${p.message}).`;
    if (p.phase === "ready") return "Python ready.";
    const secs = ((performance.now() - live.startedAt) / 1000).toFixed(1);
    if (p.phase === "package") return `Starting the gpucomm model in Python... (${secs} s)`;
    const mb = p.totalBytes ? ` ${(p.loadedBytes / 1e6).toFixed(1)} of ${(p.totalBytes / 1e6).toFixed(1)} MB,` : "";
    return `Loading Python (Pyodide, from this site, in the background):${mb} ${secs} s`;
  }

  function broadcast(p) {
    live.progress = p;
    for (const listener of listeners) listener(p, progressText(p));
  }

  function startPython() {
    if (ready) return ready;
    live.startedAt = performance.now();
    live.state = "loading";
    ready = new Promise((resolve, reject) => {
      worker = new Worker(WORKER_URL, {type: "module", name: "gpucomm-python"});
      worker.onmessage = event => {
        const m = event.data;
        if (m.type === "progress") {
          live.phases[m.phase] = m.ms;
          broadcast(m);
        } else if (m.type === "ready") {
          live.loadMs = performance.now() - (live.firstInteraction === null ? live.startedAt : live.firstInteraction);
          live.state = "ready";
          broadcast({phase: "ready"});
          resolve();
        } else if (m.type === "failed") {
          live.state = "failed";
          broadcast({phase: "failed", message: m.message});
          reject(new Error(m.message));
        } else if (m.type === "result") {
          const call = waiting.get(m.id);
          waiting.delete(m.id);
          if (call) (m.ok ? call.resolve : call.reject)(m.ok ? {value: m.value, pythonMs: m.pythonMs} : new Error(m.message));
        }
      };
      worker.onerror = event => {
        const message = event.message || "the worker script could not run";
        live.state = "failed";
        broadcast({phase: "failed", message});
        reject(new Error(message));
      };
      worker.postMessage({type: "init", pyodide: PYODIDE_URL, package: PACKAGE_URL});
    });
    ready.catch(() => {});  // reported through the progress line and by each call
    return ready;
  }

  // call(fn, ...args) -> Promise of {value: the JSON string Python returned, pythonMs}; starts Python if needed.
  async function call(fn, ...args) {
    await startPython();
    return new Promise((resolve, reject) => {
      const id = nextId++;
      waiting.set(id, {resolve, reject});
      worker.postMessage({type: "call", id, fn, args});
    });
  }
  live.call = call;
  live.start = startPython;
  live.onProgress = listener => { listeners.add(listener); if (live.progress) listener(live.progress, progressText(live.progress)); };

  // --- small helpers ------------------------------------------------------------------------------------
  function el(tag, attrs, children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "text") node.textContent = v; else node.setAttribute(k, v === true ? "" : v);
    }
    for (const child of children || []) node.appendChild(child);
    return node;
  }
  live.el = el;

  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

  // A size as the model's parser reads it ("64MiB"), for a slider position 2**k.
  const SIZE_UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  function formatPow2(k) {
    const unit = Math.min(Math.floor(k / 10), SIZE_UNITS.length - 1);
    return `${2 ** (k - 10 * unit)}${SIZE_UNITS[unit]}`;
  }
  function sizeExponent(text) {  // "64MiB" -> 26, for placing the slider; NaN when not a power of two in these units
    const m = /^\s*(\d+)\s*([KMGTP]i)?B?\s*$/i.exec(String(text));
    if (!m) return NaN;
    const unit = m[2] ? SIZE_UNITS.findIndex(u => u.toLowerCase() === (m[2] + "b").toLowerCase()) : 0;
    return Math.log2(Number(m[1])) + 10 * unit;
  }

  // A slider for a number or a size with a range, next to its text box (the text stays what the model reads).
  // Sizes and wide integer ranges move in powers of two; other numbers linearly. Returns null where none fits.
  function makeSlider(f, text) {
    if (!["size", "int", "float"].includes(f.kind) || f.min === null || f.max === null) return null;
    let toText, fromText, attrs;
    if (f.kind === "size" || (f.kind === "int" && f.max / Math.max(f.min, 1) > 64)) {
      const lo = Math.ceil(Math.log2(Math.max(f.min, 1))), hi = Math.floor(Math.log2(f.max));
      attrs = {min: lo, max: hi, step: 1};
      toText = k => f.kind === "size" ? formatPow2(Number(k)) : String(2 ** Number(k));
      fromText = t => f.kind === "size" ? sizeExponent(t) : Math.log2(Number(t));
    } else {
      const step = f.kind === "int" ? 1 : (f.max - f.min) / 100;
      attrs = {min: f.min, max: f.max, step};
      toText = v => f.kind === "int" ? String(Math.round(Number(v))) : String(Number(Number(v).toFixed(6)));
      fromText = t => Number(t);
    }
    const slider = el("input", {type: "range", class: "gpucomm-live-slider", tabindex: "-1", "aria-hidden": "true", ...attrs});
    const place = () => {
      const v = fromText(text.value);
      slider.disabled = !Number.isFinite(v) || text.disabled;
      if (Number.isFinite(v)) slider.value = String(Math.min(attrs.max, Math.max(attrs.min, v)));
    };
    place();
    return {slider, toText, place};
  }

  // One control for one field, by the kind param() gave it. Returns {node, inputs, read(), msg, slider}.
  function makeControl(panelId, name, f) {
    const id = `${panelId}-${name}`;
    const unit = f.unit && f.kind !== "size" && f.unit !== f.label ? ` (${f.unit})` : "";
    const msg = el("span", {class: "gpucomm-live-msg", role: "alert", id: id + "-msg"});
    let inputs, read, slider = null;
    if (f.kind === "choice") {
      const select = el("select", {id, name, "aria-describedby": id + "-msg"},
        f.choices.map(([label, value], i) => el("option", {value: String(i), selected: same(value, f.value), text: label})));
      inputs = [select];
      read = () => f.choices[select.selectedIndex][1];
    } else if (f.kind === "multi") {
      const boxes = f.choices.map(([label, value]) => el("input", {type: "checkbox", value: JSON.stringify(value),
        checked: f.value.some(v => same(v, value))}));
      inputs = boxes;
      read = () => boxes.filter(b => b.checked).map(b => JSON.parse(b.value));
      const group = el("fieldset", {class: "gpucomm-live-field gpucomm-live-multi", "data-field": name, title: f.help}, [
        el("legend", {text: f.label + unit}),
        el("div", {class: "gpucomm-live-options"},
          boxes.map((b, i) => el("label", {}, [b, document.createTextNode(" " + f.choices[i][0])]))),
        msg]);
      return {node: group, inputs, read, msg, slider};
    } else if (f.kind === "bool") {
      const box = el("input", {type: "checkbox", id, name, checked: !!f.value, "aria-describedby": id + "-msg"});
      inputs = [box];
      read = () => box.checked;
    } else {  // size, int, float: text, so that what the reader typed reaches the model's check as typed
      const text = el("input", {type: "text", id, name, value: String(f.value), size: 9, autocomplete: "off",
        inputmode: f.kind === "size" ? "text" : (f.kind === "int" ? "numeric" : "decimal"),
        "aria-describedby": id + "-msg"});
      inputs = [text];
      read = () => text.value;
      slider = makeSlider(f, text);
    }
    const parts = [el("label", {for: id, text: f.label + unit}), inputs[0]];
    if (slider) parts.push(slider.slider);
    parts.push(msg);
    const node = el("div", {class: "gpucomm-live-field", "data-field": name, title: f.help}, parts);
    return {node, inputs, read, msg, slider};
  }

  // --- drawing ---------------------------------------------------------------------------------------------
  const FAST_KEYS = new Set(["x", "y", "text"]);  // what Plotly.animate redraws without a layout pass
  const RANGE_KEY = /^([xy]axis\d*)\.range$/;
  const AUTORANGE_KEY = /^[xy]axis\d*\.autorange$/;

  const plain = v => ArrayBuffer.isView(v) ? Array.from(v) : v;

  // The layout change as {title, ranges: {axis: [lo, hi]}, other: {key: value}}: title and ranges a fast draw
  // can apply, anything else needs a full one. ``before`` and ``after`` are flat {"a.b": value} maps.
  function layoutChange(before, after) {
    const change = {title: undefined, ranges: {}, other: {}};
    for (const [key, value] of Object.entries(after)) {
      if (before && same(before[key], value)) continue;
      const range = RANGE_KEY.exec(key);
      if (key === "title.text") change.title = value;
      else if (range && Array.isArray(value)) change.ranges[range[1]] = value;
      else change.other[key] = value;
    }
    return change;
  }

  // A nested layout as flat {"a.b.c": value}, arrays kept whole; the template is the page's (left out).
  function flatten(obj, prefix, out) {
    out = out || {};
    for (const [k, v] of Object.entries(obj || {})) {
      if (!prefix && k === "template") continue;
      const key = prefix ? `${prefix}.${k}` : k;
      if (v && typeof v === "object" && !Array.isArray(v)) flatten(v, key, out); else out[key] = v;
    }
    return out;
  }

  function axisName(id) { return id.replace(/^([xy])(\d*)$/, "$1axis$2"); }

  // Axes plotly ranges itself, among those of the changed traces, whose data once ``changes`` are drawn (the new
  // values of the changed traces, what is drawn of the others) leaves the range shown or fills less than
  // LOOSE_FRACTION of it: {"yaxis.autorange": true, ...} (empty when the range shown still fits). Read before
  // drawing, so that the draw can do the re-ranging in the same pass.
  function staleAutoranges(gd, changes) {
    const full = gd._fullLayout, out = {};
    const axes = new Set(), changed = new Map(changes.map(c => [c.index, c]));
    for (const {index} of changes) {
      const t = gd._fullData[index];
      if (t && t.visible === true) { axes.add(axisName(t.xaxis || "x")); axes.add(axisName(t.yaxis || "y")); }
    }
    for (const name of axes) {
      const ax = full[name];
      if (!ax || !ax.autorange || !ax.range || !["linear", "log"].includes(ax.type)) continue;
      const letter = name[0];
      let lo = Infinity, hi = -Infinity;
      for (const t of gd._fullData) {
        if (t.visible !== true || axisName(t[letter + "axis"] || letter) !== name) continue;
        const change = changed.get(t.index);
        const raw = change && change[letter] !== undefined ? change[letter] : gd.data[t.index][letter];
        if (t.type === "bar" && letter !== (t.orientation === "h" ? "x" : "y")) continue;
        for (const v of raw ? plain(raw) : []) {
          const n = ax.type === "log" ? Math.log10(v) : Number(v);
          if (v === null || v === undefined || !Number.isFinite(n)) continue;
          if (n < lo) lo = n;
          if (n > hi) hi = n;
        }
        if (t.type === "bar" && ax.type === "linear") { lo = Math.min(lo, 0); hi = Math.max(hi, 0); }
      }
      if (ax.rangemode === "tozero" && ax.type === "linear") { lo = Math.min(lo, 0); hi = Math.max(hi, 0); }
      if (!(hi >= lo)) continue;
      const [r0, r1] = [Math.min(...ax.range), Math.max(...ax.range)];
      const slack = 1e-9 * (r1 - r0);  // plotly's range is the data's extent to the last bit where it adds no padding
      if (lo < r0 - slack || hi > r1 + slack || (hi - lo) < LOOSE_FRACTION * (r1 - r0)) out[name + ".autorange"] = true;
    }
    return out;
  }

  // A new title whose markup is that of the title drawn (the same tags, <br> and <sup> included, in the same order;
  // only the words differ) is written into the title's SVG text and into the figure's layout (which plotly draws it
  // from at its next redraw), without a relayout: a relayout of the title alone restyles and re-measures the whole
  // figure (14 to 46 ms a live update on the TP page, measured). The title is first put as the layout script shows
  // titles (window.gpucommLayout.title: on a phone, wrapped to the width). plotly draws a title's words as SVG text
  // nodes in order (convertToTspans), with zero-width spaces of its own around a <sup>: those drawn must be the drawn
  // title's words, else (entities, a title plotly or a script rewrote, none drawn) it returns false and a relayout
  // draws it. Returns {text: the title as shown, inPlace: whether it was written in place}.
  const TAG = /(<[^>]*>)/;
  const ZWSP_ONLY = /^\u200b*$/;
  function titleParts(text) {  // {tags: "<br>|<sup>|</sup>", words: ["...", "..."]}, or null where it cannot say
    if (typeof text !== "string" || text.includes("&")) return null;
    const parts = text.split(TAG);
    return {tags: parts.filter((p, i) => i % 2).join("|").toLowerCase(), words: parts.filter((p, i) => !(i % 2) && p)};
  }
  function shownTitle(gd, text) {
    const api = window.gpucommLayout;
    return api && typeof api.title === "function" ? api.title(gd, text) : text;
  }
  function setTitleText(gd, text) {
    text = shownTitle(gd, text);
    const node = gd.querySelector(".g-gtitle text.gtitle");
    const drawn = gd.layout.title && typeof gd.layout.title === "object" ? gd.layout.title.text : undefined;
    const was = titleParts(drawn), now = titleParts(text);
    if (!node || !was || !now || was.tags !== now.tags || was.words.length !== now.words.length ||
        !gd._fullLayout.title || node.getAttribute("data-unformatted") !== drawn) return {text, inPlace: false};
    const nodes = [];
    const walker = document.createTreeWalker(node, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) if (!ZWSP_ONLY.test(n.nodeValue)) nodes.push(n);
    if (nodes.length !== was.words.length || nodes.some((n, i) => n.nodeValue !== was.words[i])) return {text, inPlace: false};
    nodes.forEach((n, i) => { n.nodeValue = now.words[i]; });
    node.setAttribute("data-unformatted", text);
    gd.layout.title.text = text;
    gd._fullLayout.title.text = text;
    return {text, inPlace: true};
  }

  const ANIMATE = {transition: {duration: 0}, frame: {duration: 0, redraw: false}, mode: "immediate"};

  // --- the direct draw ---------------------------------------------------------------------------------------
  // A live update moves the data of traces that stay as they are otherwise. Plotly.animate without redraw was the
  // cheapest public call for that, but each one runs plotly's supplyDefaults and calc over the whole figure (about
  // 70 % of its time, profiled), waits for an animation frame, and plots the changed traces through a cartesian
  // plot that removes the drawing of every subplot and trace type holding none of them (on the training page a new
  // MFU left 1 of 4 traces drawn). Plotly.restyle and Plotly.react of the same arrays replot the whole figure (4 to 5
  // times slower than animate, measured). The direct draw does for such an update what plotly's own replot does,
  // and only that: the new arrays into the traces (gd.data, which later plotly calls redraw from, and plotly's full
  // traces), plotly's calc of every trace of the subplots concerned (the trace modules' own calc, then their
  // cross-trace step: bar positions, scatter stacks), then drawData's trace part (the cartesian plot of every
  // trace and the modules' styles), at once, in a few ms. It reads plotly.js internals (gd.calcdata,
  // gd._fullData[i]._module, _fullLayout._plots, _visibleModules, _basePlotModules), checked first
  // (directSubplots): where one is missing, or where plotly's defaults could read the new data differently (an
  // array appearing or going, an emptied trace, a scatter whose mode plotly picks by its number of points, a
  // category x, error bars, hover settings given per point), Plotly.animate draws the update, as before.
  const DIRECT_TYPES = new Set(["scatter", "bar"]);
  const BY_VALUE = /(total|sum|min|max|mean|median) (ascending|descending)/;

  const isArray = v => Array.isArray(v) || ArrayBuffer.isView(v);
  // plotly's trace length (handleXYDefaults): the shorter of x and y, or y's without x
  const traceLength = (x, y) => isArray(x) ? Math.min(x.length, y.length) : y.length;

  // The subplots ("xy", "x2y2", ...) whose traces the direct draw recomputes, or null where it cannot draw.
  function directSubplots(gd, changes) {
    const fl = gd._fullLayout, fd = gd._fullData;
    if (!changes.length || !fl || !fl._plots || !Array.isArray(fl._visibleModules) || !Array.isArray(fl._basePlotModules) ||
        !fl._basePlotModules.every(m => m.name === "cartesian" && typeof m.plot === "function") ||
        !Array.isArray(fd) || !Array.isArray(gd.calcdata) || gd.calcdata.length !== fd.length) return null;
    const subplots = new Set();
    for (const c of changes) {
      const full = fd[c.index], input = gd.data[c.index];
      if (!full || full._input !== input || full.visible !== true || !isArray(full.y)) return null;
      if (full.type === "scatter" && input.mode === undefined) return null;
      for (const key of ["x", "y", "text"]) {
        if (c[key] !== undefined && !(isArray(c[key]) && isArray(full[key]))) return null;
      }
      if (full._length !== traceLength(full.x, full.y) || traceLength(c.x || full.x, c.y || full.y) === 0) return null;
      subplots.add(full.xaxis + full.yaxis);
    }
    for (const t of fd) {
      if (!subplots.has(t.xaxis + t.yaxis)) continue;
      const m = t._module;
      if (!DIRECT_TYPES.has(t.type) || !m || typeof m.calc !== "function" || !m.basePlotModule ||
          m.basePlotModule.name !== "cartesian" || t._hasCalcTransform ||
          (t.error_x && t.error_x.visible) || (t.error_y && t.error_y.visible) ||
          (t._arrayAttrs || []).some(a => /^(hover|error_|selected|customdata)/.test(a))) return null;
      for (const id of [t.xaxis, t.yaxis]) {
        const ax = fl[axisName(id)];
        if (!ax || !["linear", "log", "category"].includes(ax.type) || BY_VALUE.test(ax.categoryorder || "")) return null;
      }
    }
    for (const sp of subplots) if (!fl._plots[sp]) return null;
    return subplots;
  }

  // The new arrays into the traces and plotly's calc of every trace of ``subplots`` (plots.doCalcdata's steps for
  // those traces: _extremes cleared, the module's calc, the placeholder of a trace with no points; then each visible
  // module's cross-trace step on those subplots). Draws nothing.
  function directSet(gd, changes, subplots) {
    const fl = gd._fullLayout, fd = gd._fullData;
    for (const c of changes) {
      const input = gd.data[c.index], full = fd[c.index];
      for (const key of ["x", "y", "text"]) {
        if (c[key] !== undefined) { input[key] = c[key]; full[key] = c[key]; }
      }
      full._length = traceLength(full.x, full.y);
    }
    for (let i = 0; i < fd.length; i++) {
      const t = fd[i];
      if (!subplots.has(t.xaxis + t.yaxis)) continue;
      t._extremes = {};
      let cd = t.visible === true && t._length !== 0 ? t._module.calc(gd, t) : [];
      if (!Array.isArray(cd) || !cd[0]) cd = [{x: undefined, y: undefined}];
      if (!cd[0].t) cd[0].t = {};
      cd[0].trace = t;
      gd.calcdata[i] = cd;
    }
    const crossTrace = new Set(fl._visibleModules.map(m => m.crossTraceCalc).filter(f => typeof f === "function"));
    for (const f of crossTrace) for (const sp of subplots) f(gd, fl._plots[sp], sp);
  }

  // drawData's trace part: the cartesian plot of every trace, then each visible module's style.
  function directPlot(gd) {
    const fl = gd._fullLayout;
    for (const m of fl._basePlotModules) m.plot(gd);
    for (const style of new Set(fl._visibleModules.map(m => m.style).filter(f => typeof f === "function"))) style(gd);
    if (typeof fl._rehover === "function") fl._rehover();  // a hover label shown follows the new values
  }

  // Draw the new data of some traces, as fast as plotly allows: changes = [{index, x?, y?, text?}], layout = the
  // title and ranges to set (layoutChange). A title whose markup stays is written in place (setTitleText). Where no
  // axis range changes, the data is drawn directly (directPlot). Where one does (a range the model sets, or an axis
  // plotly ranges itself that the new data leaves or fills less than LOOSE_FRACTION of), the new data is set
  // (directSet) and one relayout of the ranges (and a title not written in place) draws axes and data together:
  // plotly's relayout of ranges alone skips its supplyDefaults. Where the direct draw does not apply, the data goes
  // by Plotly.animate as before the direct draw, then the relayout (which redraws every trace).
  // ``state.movedAxes``: the axes whose data moved since they were last drawn (a Set of names, kept across updates).
  // Returns what it did: {dataMs, relayoutMs, relayout: [layout keys set], way}, way one of "direct",
  // "direct+relayout", "animate", "animate+relayout", each with "+title" where the title was written in place.
  async function fastDraw(gd, changes, layout, state) {
    const t0 = performance.now();
    const relayout = staleAutoranges(gd, changes);
    for (const [name, range] of Object.entries(layout.ranges)) relayout[name + ".range"] = range;
    let titleSet = false;
    if (layout.title !== undefined) {
      const title = setTitleText(gd, layout.title);
      if (title.inPlace) titleSet = true;
      else relayout["title.text"] = title.text;
    }
    // The axes plotly ranges itself whose data moved since they were drawn: a relayout of ranges ranges them all
    // again but redraws only the axes it names, so it names these too (else one would be left drawn at a range that
    // is no longer the figure's, its traces and ticks with it).
    for (const c of changes) {
      const full = gd._fullData[c.index];
      if (!full) continue;
      if (c.x !== undefined) state.movedAxes.add(axisName(full.xaxis || "x"));
      if (c.y !== undefined) state.movedAxes.add(axisName(full.yaxis || "y"));
    }
    const redrawsData = Object.keys(relayout).some(k => RANGE_KEY.test(k) || AUTORANGE_KEY.test(k));
    if (redrawsData) {
      for (const name of state.movedAxes) {
        const ax = gd._fullLayout[name];
        if (ax && ax.autorange && !(name + ".range" in relayout)) relayout[name + ".autorange"] = ax.autorange;
      }
      state.movedAxes.clear();
    }
    const keys = Object.keys(relayout);
    const subplots = changes.length ? directSubplots(gd, changes) : null;
    let way;
    if (subplots) {
      directSet(gd, changes, subplots);
      if (!redrawsData) directPlot(gd);
      way = "direct";
    } else if (changes.length) {
      // every trace in the frame, the unchanged ones with no new data: plotly's cartesian plot of a part of the traces
      // removes the drawing of the subplots (and trace types) holding none of them
      const changed = new Map(changes.map(({index, ...rest}) => [index, rest]));
      await window.Plotly.animate(gd, {data: gd.data.map((t, i) => changed.get(i) || {}), traces: gd.data.map((t, i) => i)},
                                  ANIMATE);
      way = "animate";
    }
    const t1 = performance.now();
    if (keys.length) await window.Plotly.relayout(gd, relayout);
    else if (titleSet && gd.emit) gd.emit("plotly_afterplot");  // as a relayout would: the layout script fits the title
    return {dataMs: t1 - t0, relayoutMs: performance.now() - t1, relayout: keys,
            way: (way || "none") + (keys.length ? "+relayout" : "") + (titleSet ? "+title" : "")};
  }

  // Per trace index, the keys whose value differs from what is drawn, or null when a fast draw cannot apply.
  function traceChanges(gd, updates) {
    const changes = [];
    for (const [index, props] of updates) {
      const drawn = gd.data[index], full = gd._fullData[index];
      if (!drawn || !full || !["scatter", "bar"].includes(full.type)) return null;
      const change = {index};
      for (const [key, value] of Object.entries(props)) {
        if (same(plain(drawn[key]), value) || (value === null && drawn[key] == null)) continue;
        if (!FAST_KEYS.has(key)) return null;
        const ax = gd._fullLayout[axisName(full[key === "text" ? "xaxis" : key + "axis"] || key)];
        if (key !== "text" && ax && !["linear", "log"].includes(ax.type)) return null;  // categories: a full draw
        change[key] = value;
      }
      if (Object.keys(change).length > 1) changes.push(change);
    }
    return changes;
  }

  // Draw one result of compute(): {"spec": figure} or {"update": {data, traces, layout}}. ``state`` keeps the
  // last layout drawn (flat), so a change is measured against what the page asked for, not what plotly wrote back.
  // Returns what the fast path did (fastDraw), or null when a full draw was needed.
  async function draw(gd, result, state) {
    // Sliced only once it ran 50 ms, not 10 as the page's own figures (gpucomm_draw_slices.js): an update is short
    // and the reader is waiting for it.
    gd.gpucommLive = true;
    if (result.spec) {
      const spec = result.spec;
      const data = spec.data.filter(t => t.visible !== false);  // traces hidden by the spec: less to diff and draw
      const flat = flatten(spec.layout);
      const change = state.layout ? layoutChange(state.layout, flat) : null;
      const sameTraces = data.length === gd.data.length &&
        data.every((t, i) => t.name === gd.data[i].name && (t.visible ?? true) === (gd.data[i].visible ?? true));
      const changes = change && sameTraces && !Object.keys(change.other).length ? traceChanges(gd, data.map((t, i) => [i, t])) : null;
      state.layout = flat;
      if (changes) return fastDraw(gd, changes, change, state);
      const layout = spec.layout;
      // The spec names its template; plotly.py expanded it into the precomputed figure: reuse that.
      if (typeof layout.template === "string") layout.template = gd.layout.template;
      await window.Plotly.react(gd, data, layout);
      state.movedAxes.clear();  // every axis drawn again
      return null;
    }
    const u = result.update;
    const flat = flatten(u.layout);
    // The first result is measured against the figure as drawn (precomputed at build time, maybe laid out again by the
    // layout script): only the keys the update sets are compared, so the first result is drawn fast too.
    const change = layoutChange(state.layout || flatten(gd.layout), flat);
    const updates = u.traces.map((index, k) => [index, Object.fromEntries(Object.entries(u.data).map(([key, values]) => [key, values[k]]))]);
    const changes = !Object.keys(change.other).length ? traceChanges(gd, updates) : null;
    state.layout = {...(state.layout || {}), ...flat};
    if (changes) return fastDraw(gd, changes, change, state);
    await window.Plotly.update(gd, u.data, u.layout, u.traces);  // as the calculator's ipywidgets UI applies it
    state.movedAxes.clear();
    return null;
  }

  // --- one panel ---------------------------------------------------------------------------------------------
  function setupPanel(panel, index) {
    const spec = JSON.parse(panel.querySelector("script.gpucomm-live-controls").textContent);
    const summary = panel.querySelector(".gpucomm-live-summary");
    const figureBox = panel.querySelector(".gpucomm-live-figure");
    const gd = figureBox && figureBox.querySelector(".plotly-graph-div");
    const intro = el("p", {class: "gpucomm-live-intro"});
    const status = el("p", {class: "gpucomm-live-progress", role: "status", "aria-live": "polite"});
    panel.insertBefore(intro, summary);
    if (location.protocol === "file:") {
      intro.textContent = "Live computing needs this book served over http (browsers do not run WebAssembly " +
        "from file:// pages, e.g. run python -m http.server -d _build/html); the figure below is precomputed.";
      panel.dataset.state = "static";
      return;
    }
    intro.textContent = "Compute live in your browser: change any value and this page's Python model " +
      "(Pyodide, about 12 MB, loaded from this site in the background) redraws the figure.";
    const form = el("form", {class: "gpucomm-live-controls", "aria-label": `${spec.calculator} calculator`});
    form.addEventListener("submit", e => e.preventDefault());
    const controls = {};
    for (const row of spec.rows) {
      const line = el("div", {class: "gpucomm-live-row"});
      for (const name of row) {
        controls[name] = makeControl(`gpucomm-live-${index}`, name, spec.fields[name]);
        line.appendChild(controls[name].node);
      }
      form.appendChild(line);
    }
    panel.insertBefore(form, summary);
    panel.insertBefore(status, summary);
    panel.dataset.state = "idle";
    panel.dataset.updates = "0";
    const drawState = {layout: null, movedAxes: new Set()};

    live.onProgress((p, text) => {
      if (panel.dataset.state === "live" && p.phase !== "failed") return;
      status.textContent = p.phase === "ready" ? "" : text;
      if (p.phase === "failed") panel.dataset.state = "failed";
    });
    // Start loading on the first touch of a control or when the panel comes into view: by the time a value
    // is typed, Python may be ready. Loading runs in the worker, so starting early costs the page nothing.
    const warmUp = () => {
      if (live.firstInteraction === null) live.firstInteraction = performance.now();
      startPython();
    };
    for (const type of ["pointerdown", "focusin", "keydown"]) form.addEventListener(type, warmUp, {once: true});
    if ("IntersectionObserver" in window) {
      const seen = new IntersectionObserver(entries => {
        if (entries.some(e => e.isIntersecting)) { seen.disconnect(); startPython(); }
      });
      seen.observe(form);
    }

    function values() {
      const out = {};
      for (const [name, c] of Object.entries(controls)) out[name] = c.read();
      return out;
    }

    function refreshEnabled(current) {
      for (const [name, f] of Object.entries(spec.fields)) {
        if (!f.enabled_when || !controls[name]) continue;
        const [other, wanted] = f.enabled_when;
        const on = same(current[other], wanted);
        for (const input of controls[name].inputs) input.disabled = !on;
        if (controls[name].slider) controls[name].slider.place();
        controls[name].node.classList.toggle("gpucomm-live-off", !on);
      }
    }

    function showMessage(field, message) {
      for (const [name, c] of Object.entries(controls)) {
        const bad = name === field;
        c.msg.textContent = bad ? message : "";
        for (const input of c.inputs) input.toggleAttribute("aria-invalid", bad);
      }
    }

    // Coalescing: changes wait for the next animation frame, and while one recompute is in flight the next
    // waits for it; either way the values read are the latest, so a moving slider costs one recompute per frame.
    // A committed change (typed, picked, ticked) starts at once when nothing is in flight; a slider's moves wait
    // for the next frame.
    let queued = null, inFlight = false, frame = 0;
    function request(field, startedAt, moving) {
      queued = queued ? {field, startedAt: queued.startedAt, coalesced: queued.coalesced + 1} : {field, startedAt, coalesced: 0};
      if (inFlight) return;
      if (!moving) { if (frame) cancelAnimationFrame(frame); flush(); } else if (!frame) frame = requestAnimationFrame(flush);
    }

    async function flush() {
      frame = 0;
      if (inFlight || !queued) return;
      const {field, startedAt, coalesced} = queued;
      queued = null;
      inFlight = true;
      const first = live.firstResult === null;
      const record = {calculator: spec.calculator, field, first, ok: false, ms: null, coalesced};
      try {
        if (panel.dataset.state !== "live") panel.dataset.state = "loading";
        const current = values();
        const computeStart = performance.now();
        const answer = await call("compute_json", spec.calculator, JSON.stringify(current));
        const result = JSON.parse(answer.value);
        record.computeMs = performance.now() - computeStart;
        record.pythonMs = answer.pythonMs;
        if (result.ok) {
          const drawStart = performance.now();
          const fast = await draw(gd, result, drawState);
          record.fast = !!fast;
          if (fast) Object.assign(record, fast);
          record.drawMs = performance.now() - drawStart;
          summary.textContent = result.summary;
          showMessage(null, "");
        } else {
          showMessage(result.field || field, result.message);
        }
        record.ok = result.ok;
        if (live.firstResult === null) live.firstResult = performance.now();
        record.message = result.ok ? null : result.message;
        record.messageField = result.ok ? null : (result.field || field);
        panel.dataset.state = "live";
        status.textContent = "";
        intro.textContent = "Computed live in your browser by the gpucomm model (Pyodide); change any value.";
      } catch (err) {
        panel.dataset.state = "failed";
        intro.textContent = `Could not run Python in this browser (${err.message || err}); the figure stays as precomputed.`;
        record.error = String(err && err.message || err);
      } finally {
        record.ms = performance.now() - startedAt;
        live.updates.push(record);
        panel.dataset.updates = String(Number(panel.dataset.updates) + 1);
        inFlight = false;
        if (queued && !frame) frame = requestAnimationFrame(flush);
      }
    }

    for (const [name, c] of Object.entries(controls)) {
      const changed = () => {
        const startedAt = performance.now();
        if (live.firstInteraction === null) live.firstInteraction = startedAt;
        refreshEnabled(values());
        if (c.slider) c.slider.place();
        request(name, startedAt);
      };
      for (const input of c.inputs) input.addEventListener("change", changed);
      if (c.slider) {
        const text = c.inputs[0];
        // While the slider moves: its value into the text box, one recompute per frame at most.
        c.slider.slider.addEventListener("input", () => {
          text.value = c.slider.toText(c.slider.slider.value);
          warmUp();
          request(name, performance.now(), true);
        });
        c.slider.slider.addEventListener("change", () => { text.value = c.slider.toText(c.slider.slider.value); });
      }
    }
    refreshEnabled(values());
  }

  function setupAll() {
    document.querySelectorAll(".gpucomm-live[data-gpucomm-live]").forEach(setupPanel);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", setupAll);
  else setupAll();
})();
