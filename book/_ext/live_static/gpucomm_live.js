// The book's live calculators: controls drawn from the calculator's field metadata, every change
// recomputed by the gpucomm model in Pyodide (Python compiled to WebAssembly) and drawn with
// Plotly.react. Added by book/_ext/book_page_assets.py to pages holding a live panel, which the
// package writes (gpucomm.viz.calculators.live.LivePanel):
//
//   <div class="gpucomm-live" data-gpucomm-live="NAME">
//     <script type="application/json" class="gpucomm-live-controls">{rows, fields}</script>
//     <p class="gpucomm-live-summary">...</p>
//     <div class="gpucomm-live-figure">(the figure precomputed at build time)</div>
//   </div>
//
// Nothing heavy loads with the page: Pyodide (from _static/pyodide/) and the package (the zip named
// by this script's data-package attribute) are fetched on the reader's first change, from this
// site only. Over file:// browsers refuse WebAssembly: the panel says so and keeps the static view.
// Timings of every update are kept in window.gpucommLive.updates (read by tests/book and benchmarks/).
(function () {
  "use strict";

  const script = document.currentScript;
  const STATIC = script.src.split("?")[0].replace(/[^/]*$/, "");  // .../_static/
  const PYODIDE_URL = STATIC + "pyodide/";
  const PACKAGE_URL = STATIC + script.dataset.package;
  const SITE_DIR = "/home/pyodide/gpucomm-live";  // where the package zip is unpacked, put on sys.path

  // updates: one record per recompute ({calculator, field, first, ok, ms, message, messageField});
  // firstInteraction: performance.now() of the reader's first pointer, focus or key on a panel's controls,
  // which starts loading Python (so its download overlaps the typing); loadMs: Python ready, from that.
  const live = window.gpucommLive = window.gpucommLive ||
    {updates: [], runtime: null, firstInteraction: null, loadMs: null, firstResult: null, phases: {}};

  // One Python runtime per page, started by the first change on any panel.
  function startPython() {
    if (!live.runtime) {
      live.runtime = (async () => {
        const started = performance.now();
        const mark = what => { live.phases[what] = performance.now() - started; };
        const {loadPyodide} = await import(PYODIDE_URL + "pyodide.mjs");
        const [pyodide, zip] = await Promise.all([
          loadPyodide({indexURL: PYODIDE_URL}).then(py => { mark("runtime"); return py; }),
          fetch(PACKAGE_URL).then(r => {
            if (!r.ok) throw new Error(`${PACKAGE_URL}: HTTP ${r.status}`);
            return r.arrayBuffer();
          }),
        ]);
        pyodide.unpackArchive(zip, "zip", {extractDir: SITE_DIR});
        mark("unpacked");
        const compute = pyodide.runPython(
          `import sys\nsys.path.insert(0, ${JSON.stringify(SITE_DIR)})\n` +
          "from gpucomm.viz.calculators.live import compute_json\ncompute_json");
        mark("imported");
        live.loadMs = performance.now() - (live.firstInteraction === null ? started : live.firstInteraction);
        return compute;
      })();
    }
    return live.runtime;
  }

  function el(tag, attrs, children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "text") node.textContent = v; else node.setAttribute(k, v === true ? "" : v);
    }
    for (const child of children || []) node.appendChild(child);
    return node;
  }

  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

  // One control for one field, by the kind param() gave it. Returns {node, input(s), read()}.
  function makeControl(panelId, name, f) {
    const id = `${panelId}-${name}`;
    const unit = f.unit && f.kind !== "size" && f.unit !== f.label ? ` (${f.unit})` : "";
    const msg = el("span", {class: "gpucomm-live-msg", role: "alert", id: id + "-msg"});
    let inputs, read;
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
      return {node: group, inputs, read, msg};
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
    }
    const node = el("div", {class: "gpucomm-live-field", "data-field": name, title: f.help}, [
      el("label", {for: id, text: f.label + unit}), inputs[0], msg]);
    return {node, inputs, read, msg};
  }

  function setupPanel(panel, index) {
    const spec = JSON.parse(panel.querySelector("script.gpucomm-live-controls").textContent);
    const summary = panel.querySelector(".gpucomm-live-summary");
    const figureBox = panel.querySelector(".gpucomm-live-figure");
    const gd = figureBox && figureBox.querySelector(".plotly-graph-div");
    const intro = el("p", {class: "gpucomm-live-intro"});
    panel.insertBefore(intro, summary);
    if (location.protocol === "file:") {
      intro.textContent = "Live computing needs this book served over http (browsers do not run WebAssembly " +
        "from file:// pages, e.g. run python -m http.server -d _build/html); the figure below is precomputed.";
      panel.dataset.state = "static";
      return;
    }
    intro.textContent = "Compute live in your browser: change any value and this page's Python model " +
      "(Pyodide, about 12 MB, loaded from this site on the first change) redraws the figure.";
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
    panel.dataset.state = "idle";
    // Start loading on the first touch of a control: by the time a value is typed, Python may be ready.
    const warmUp = () => {
      if (live.firstInteraction === null) live.firstInteraction = performance.now();
      startPython().catch(() => {});  // a failure is reported by the change that needs the result
    };
    for (const type of ["pointerdown", "focusin", "keydown"]) form.addEventListener(type, warmUp, {once: true});
    panel.dataset.updates = "0";

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

    let busy = false, pending = null;
    async function recompute(field, startedAt) {
      if (busy) { pending = {field, startedAt}; return; }
      busy = true;
      const first = live.firstResult === null;
      const record = {calculator: spec.calculator, field, first, ok: false, ms: null};
      try {
        if (first) { panel.dataset.state = "loading"; intro.textContent = "Loading Python and the gpucomm model (Pyodide, from this site)..."; }
        const compute = await startPython();
        const current = values();
        const computeStart = performance.now();
        const result = JSON.parse(compute(spec.calculator, JSON.stringify(current)));
        record.computeMs = performance.now() - computeStart;
        if (result.ok) {
          const drawStart = performance.now();
          if (result.spec) {  // the whole figure, as the notebooks draw it
            const layout = result.spec.layout;
            // The spec names its template; plotly.py expanded it into the precomputed figure: reuse that.
            if (typeof layout.template === "string") layout.template = gd.layout.template;
            // Traces hidden by the spec (systems not compared) are left out: the same drawing, less to diff.
            await window.Plotly.react(gd, result.spec.data.filter(t => t.visible !== false), layout);
          } else {  // the FigureUpdate of the calculator, applied as its ipywidgets UI applies it
            const u = result.update;
            await window.Plotly.update(gd, u.data, u.layout, u.traces);
          }
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
        intro.textContent = "Computed live in your browser by the gpucomm model (Pyodide); change any value.";
      } catch (err) {
        panel.dataset.state = "failed";
        intro.textContent = `Could not run Python in this browser (${err.message || err}); the figure stays as precomputed.`;
        record.error = String(err && err.message || err);
      } finally {
        record.ms = performance.now() - startedAt;
        live.updates.push(record);
        panel.dataset.updates = String(Number(panel.dataset.updates) + 1);
        busy = false;
        if (pending) { const next = pending; pending = null; recompute(next.field, next.startedAt); }
      }
    }

    for (const [name, c] of Object.entries(controls)) {
      for (const input of c.inputs) {
        input.addEventListener("change", () => {
          const startedAt = performance.now();
          if (live.firstInteraction === null) live.firstInteraction = startedAt;
          refreshEnabled(values());
          recompute(name, startedAt);
        });
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
