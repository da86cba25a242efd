// The "check your log" page: the reader pastes (or drops) nccl-tests output or an NCCL_DEBUG=INFO log, and the
// package's own readers run on it in the page's Python worker (gpucomm_live.js starts it; Pyodide, from this site):
// gpucomm.viz.calculators.log_check.check_log, which calls what `gpucomm parse`, `gpucomm fit` and
// `gpucomm diagnose` call. Nothing the reader pastes leaves the page: no request carries it anywhere.
//
// The panel, written by the package (gpucomm.viz.calculators.log_check.LogCheckPanel):
//   <div class="gpucomm-logcheck" data-gpucomm-logcheck="1" data-example-name="...">
//     <script type="application/json" class="gpucomm-logcheck-systems">[[label, key], ...]</script>
//     <textarea class="gpucomm-logcheck-example" hidden>(an example log)</textarea>
//     <div class="gpucomm-logcheck-figure">(the example's figure, precomputed at build time)</div>
//   </div>
// window.gpucommLogCheck: {result (the last answer, as check_log returns it), checks (answers so far), ms}.
(function () {
  "use strict";

  const live = window.gpucommLive;
  const state = window.gpucommLogCheck = {result: null, checks: 0, ms: []};
  const el = (...a) => live.el(...a);
  const gb = v => v === null || v === undefined ? "" : (v / 1e9).toPrecision(4);
  const us = v => v === null || v === undefined ? "" : (v * 1e6).toPrecision(4);
  const UNITS = ["B", "KiB", "MiB", "GiB", "TiB"];
  function size(bytes) {
    let k = 0, v = bytes;
    while (v >= 1024 && k < UNITS.length - 1 && v % 1024 === 0) { v /= 1024; k++; }
    return `${v} ${UNITS[k]}`;
  }

  function table(head, rows, attrs) {
    return el("div", {class: "gpucomm-logcheck-scroll"}, [el("table", {class: "gpucomm-logcheck-table", ...(attrs || {})}, [
      el("thead", {}, [el("tr", {}, head.map(h => el("th", {text: h})))]),
      el("tbody", {}, rows.map(r => el("tr", r.attrs || {}, r.cells.map(c => el("td", {text: String(c)}))))),
    ])]);
  }

  // The nccl-tests part: per run its line, the parser's warnings, the fit and the rows beside the model.
  function renderRuns(box, runs) {
    for (const run of runs) {
      const m = run.meta;
      const head = `${runs.length > 1 ? `Run ${m.run} of ${m.runs}: ` : ""}${m.collective || "collective not stated"}, ` +
        `${m.num_ranks || "?"} ranks${m.hosts && m.hosts.length > 1 ? ` on ${m.hosts.length} hosts` : ""}, ` +
        `${run.records.length} sizes` + (m.nccl_version ? `, NCCL ${m.nccl_version}` : "");
      const section = el("section", {class: "gpucomm-logcheck-run", "data-run": String(m.run)}, [el("h4", {text: head})]);
      const warnings = m.warnings || [];
      section.appendChild(el("p", {text: warnings.length ? `What looks wrong (${warnings.length}, as gpucomm parse prints it):`
        : "gpucomm parse finds nothing wrong in these rows."}));
      if (warnings.length) {
        section.appendChild(el("ul", {class: "gpucomm-logcheck-warnings"},
          warnings.map(w => el("li", {"data-code": w.code}, [el("code", {text: w.code}), document.createTextNode(": " + w.message)]))));
      }
      const fit = run.fit;
      section.appendChild(el("p", {class: "gpucomm-logcheck-fit", text: fit.ok
        ? `Alpha-beta fit (gpucomm fit): alpha = ${us(fit.single.alpha_s)} us, B = ${gb(fit.single.busbw_bytes_per_s)} GB/s, ` +
          `rms relative error ${(100 * fit.single.rms_rel_error).toFixed(0)} %; ${fit.split_reason}` +
          (fit.regions.length > 1 ? ": " + fit.regions.map(r => r.text).join("; ") : "")
        : `No fit: ${fit.message}`}));
      const model = run.model;
      const byModel = new Map(model.ok ? model.sizes.map((s, i) => [s, i]) : []);
      section.appendChild(el("p", {text: model.ok ? `Model: ${model.label} (gpucomm.model.cost, NCCL's own algorithm ` +
        "and protocol per size); ratio = measured busbw / model busbw." : `No model curve: ${model.message}`}));
      const rows = run.records.map(r => {
        const i = byModel.get(r.msg_bytes);
        const modelBw = i === undefined ? null : model.busbw_bytes_per_s[i];
        const ip = r.in_place || {}, oop = r.out_of_place || {};
        return {attrs: {"data-bytes": String(r.msg_bytes)}, cells: [
          size(r.msg_bytes), us(oop.time_s), gb(oop.busbw_bytes_per_s), us(ip.time_s), gb(ip.busbw_bytes_per_s),
          r.num_wrong ?? "", modelBw === null ? "" : gb(modelBw),
          modelBw ? (r.busbw_bytes_per_s / modelBw).toPrecision(3) : "",
          i === undefined ? "" : `${model.algorithm[i]}/${model.protocol[i]}`]};
      });
      section.appendChild(table(["size", "out-of-place time (us)", "busbw (GB/s)", "in-place time (us)", "busbw (GB/s)",
        "#wrong", "model busbw (GB/s)", "ratio", "model algo/proto"], rows, {"data-what": "records"}));
      box.appendChild(section);
    }
  }

  // The NCCL_DEBUG=INFO part: what NCCL set up, in one line, and the findings of gpucomm diagnose.
  function renderInfo(box, info) {
    const facts = [];
    if (info.nccl_version) facts.push(`NCCL ${info.nccl_version}`);
    if (info.num_ranks) facts.push(`${info.num_ranks} ranks`);
    if (info.num_nodes) facts.push(`${info.num_nodes} node(s)`);
    const transports = Object.entries(info.transports || {}).map(([k, n]) => `${k} x ${n}`);
    if (transports.length) facts.push(`connections: ${transports.join(", ")}`);
    if (info.coll_channels) facts.push(`${info.coll_channels} collective channels`);
    facts.push(`${info.nccl_lines} NCCL lines of ${info.total_lines}`);
    const section = el("section", {class: "gpucomm-logcheck-info"}, [
      el("h4", {text: "NCCL_DEBUG=INFO lines (as gpucomm diagnose reads them)"}), el("p", {text: facts.join("; ")})]);
    const findings = info.findings || [];
    section.appendChild(el("p", {text: findings.length ? `Findings (${findings.length}, most serious first):`
      : "No known problem found in the NCCL lines of this log."}));
    if (findings.length) {
      section.appendChild(el("ol", {class: "gpucomm-logcheck-findings"}, findings.map(f => el("li", {"data-code": f.code, "data-severity": f.severity}, [
        el("strong", {text: `${f.severity}: ${f.title}`}), document.createTextNode(` [${f.code}], lines ${f.lines.slice(0, 6).join(", ")}`),
        el("br"), document.createTextNode(`seen: ${f.evidence}`), el("br"), document.createTextNode(`fix: ${f.fix}`), el("br"),
        document.createTextNode(`source: ${f.source}`)]))));
    }
    box.appendChild(section);
  }

  function setup(panel) {
    const systems = JSON.parse(panel.querySelector("script.gpucomm-logcheck-systems").textContent);
    const example = panel.querySelector("textarea.gpucomm-logcheck-example").value;
    const figureBox = panel.querySelector(".gpucomm-logcheck-figure");
    const gd = figureBox.querySelector(".plotly-graph-div");
    const intro = el("p", {class: "gpucomm-logcheck-intro"});
    panel.insertBefore(intro, figureBox);
    if (location.protocol === "file:") {
      intro.textContent = "Reading your log needs this book served over http (browsers do not run WebAssembly from " +
        "file:// pages, e.g. run python -m http.server -d _build/html); the figure below is the example's, precomputed.";
      panel.dataset.state = "static";
      return;
    }
    intro.textContent = "Paste nccl-tests output or an NCCL_DEBUG=INFO log below, or drop a file on the box. It is read " +
      "here, in your browser, by the gpucomm package (Python, loaded from this site): nothing is sent anywhere.";
    const input = el("textarea", {class: "gpucomm-logcheck-input", rows: "10", spellcheck: "false", "aria-label": "your log",
      placeholder: "#  size  count  type  redop  root  time  algbw  busbw #wrong ...  or  host:123:456 [0] NCCL INFO ..."});
    const file = el("input", {type: "file", accept: ".txt,.log,.json,.out,text/*", "aria-label": "read a log file"});
    const system = el("select", {name: "system", "aria-label": "system for the model"}, [
      el("option", {value: "", text: "the system the log names"}),
      ...systems.map(([label, key]) => el("option", {value: key, text: label}))]);
    const exampleButton = el("button", {type: "button", text: `Example: ${panel.dataset.exampleName}`});
    const controls = el("div", {class: "gpucomm-logcheck-controls"}, [
      el("label", {}, [document.createTextNode("model of "), system]), file, exampleButton]);
    const status = el("p", {class: "gpucomm-logcheck-status", role: "status", "aria-live": "polite"});
    const result = el("div", {class: "gpucomm-logcheck-result"});
    panel.insertBefore(input, figureBox);
    panel.insertBefore(controls, figureBox);
    panel.insertBefore(status, figureBox);
    panel.appendChild(result);
    panel.dataset.state = "idle";
    panel.dataset.checks = "0";

    live.onProgress((p, text) => { if (panel.dataset.state !== "done") status.textContent = p.phase === "ready" ? "" : text; });
    for (const type of ["pointerdown", "focusin", "dragenter"]) panel.addEventListener(type, () => live.start(), {once: true});

    let running = false, again = false;
    async function check() {
      if (running) { again = true; return; }
      const text = input.value;
      if (!text.trim()) return;
      running = true;
      const t0 = performance.now();
      status.textContent = "Reading the log...";
      try {
        const answer = await live.call("check_log_json", text, system.value);
        const out = JSON.parse(answer.value);
        state.result = out;
        result.replaceChildren();
        if (!out.ok) {
          status.textContent = out.message;
        } else {
          const where = out.system_source === "log" ? `named by the log's device "${out.system_device}"`
            : out.system_source === "reader" ? "your choice" : "the log names no GPU of the catalog: pick yours above";
          const systemLabel = (systems.find(([, key]) => key === out.system) || [out.system])[0];
          result.appendChild(el("p", {class: "gpucomm-logcheck-system", text: `Model drawn for ${systemLabel} (${where}).`}));
          if (out.nccl_tests) renderRuns(result, out.nccl_tests.runs);
          else result.appendChild(el("p", {text: `No nccl-tests rows: ${out.nccl_tests_message}`}));
          if (out.nccl_info) renderInfo(result, out.nccl_info);
          if (out.figure) {
            const layout = out.figure.layout;
            if (typeof layout.template === "string") layout.template = gd.layout.template;
            await window.Plotly.react(gd, out.figure.data, layout);
            figureBox.hidden = false;
          } else {
            figureBox.hidden = true;  // nothing measured to draw: no example figure left as if it were the reader's
          }
          status.textContent = "";
        }
        panel.dataset.state = "done";
      } catch (err) {
        panel.dataset.state = "failed";
        status.textContent = `Could not read the log in this browser (${err.message || err}).`;
      } finally {
        state.ms.push(performance.now() - t0);
        state.checks += 1;
        panel.dataset.checks = String(state.checks);
        running = false;
        if (again) { again = false; check(); }
      }
    }

    let timer = 0;
    input.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(check, 400); });
    system.addEventListener("change", check);
    exampleButton.addEventListener("click", () => { input.value = example; check(); });
    async function readFile(f) {
      if (!f) return;
      if (f.size > 64 * 2 ** 20) { status.textContent = `${f.name} is ${(f.size / 2 ** 20).toFixed(0)} MiB: expected a log of at most 64 MiB`; return; }
      input.value = await f.text();
      check();
    }
    file.addEventListener("change", () => readFile(file.files[0]));
    input.addEventListener("dragover", e => e.preventDefault());
    input.addEventListener("drop", e => {
      e.preventDefault();
      readFile(e.dataTransfer.files[0]);
    });
  }

  function setupAll() { document.querySelectorAll(".gpucomm-logcheck[data-gpucomm-logcheck]").forEach(setup); }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", setupAll);
  else setupAll();
})();
