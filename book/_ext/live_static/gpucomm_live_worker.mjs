// The book's Python, off the page's main thread: Pyodide (CPython compiled to WebAssembly) and the part of the
// gpucomm package the browser needs, in a module Web Worker started by gpucomm_live.js. Compiling the 8.6 MB
// WebAssembly runtime and starting CPython take seconds; here they never block the page (scrolling, typing, the
// figures' hover all stay live), and every model call runs here too: the page only posts the inputs and draws.
//
// Messages, page -> worker:
//   {type: "init", pyodide: URL of the folder of pyodide.mjs, package: URL of the package zip}
//   {type: "call", id, fn: one of FUNCTIONS, args: [string, ...]}      (one JSON string in and out)
// worker -> page:
//   {type: "progress", phase, ms, loadedBytes, totalBytes}   while starting (phase: "runtime", "package", "ready")
//   {type: "ready", phases: {phase: ms since init}}
//   {type: "failed", message}                                Python could not start
//   {type: "result", id, ok, value | message, pythonMs}
// Nothing is fetched from anywhere but the two URLs the page names (this site), and only the packages the model
// needs are loaded: none (the model and the log readers are the standard library only); Pyodide reads its package
// index (pyodide-lock.json, 0.1 MB) and loads nothing from it.

const SITE_DIR = "/home/pyodide/gpucomm-live";  // where the package zip is unpacked, put on sys.path

// The Python functions the page may call (module, name): a message cannot name anything else.
const FUNCTIONS = {
  compute_json: ["gpucomm.viz.calculators.live", "compute_json"],
  check_log_json: ["gpucomm.viz.calculators.log_check", "check_log_json"],
  log_systems_json: ["gpucomm.viz.calculators.log_check", "systems_json"],
};

let python = null;  // Promise of the started Pyodide
const imported = {};  // fn -> the Python callable, imported on its first call (the log reader only where used)
const started = performance.now();
const phases = {};

function progress(phase, extra) {
  phases[phase] = performance.now() - started;
  postMessage({type: "progress", phase, ms: phases[phase], ...extra});
}

// Count the bytes of Pyodide's own downloads (the runtime's .wasm, the standard library zip) as they arrive, for the
// page's progress line. The response is passed on as a stream, so WebAssembly still compiles while it downloads.
function countingFetch(realFetch) {
  let loaded = 0, total = 0;
  return async (input, init) => {
    const response = await realFetch(input, init);
    const size = Number(response.headers.get("content-length")) || 0;
    if (!response.ok || !response.body || !size) return response;
    total += size;
    const reader = response.body.getReader();
    const stream = new ReadableStream({
      async pull(controller) {
        const {done, value} = await reader.read();
        if (done) { controller.close(); return; }
        loaded += value.byteLength;
        postMessage({type: "progress", phase: "runtime", ms: performance.now() - started, loadedBytes: loaded, totalBytes: total});
        controller.enqueue(value);
      },
      cancel(reason) { return reader.cancel(reason); },
    });
    return new Response(stream, {status: response.status, statusText: response.statusText, headers: response.headers});
  };
}

async function start(pyodideUrl, packageUrl) {
  const realFetch = self.fetch.bind(self);
  self.fetch = countingFetch(realFetch);
  progress("runtime");
  const [{loadPyodide}, zip] = await Promise.all([
    import(pyodideUrl + "pyodide.mjs"),
    realFetch(packageUrl).then(r => {
      if (!r.ok) throw new Error(`${packageUrl}: HTTP ${r.status}`);
      return r.arrayBuffer();
    }),
  ]);
  const pyodide = await loadPyodide({indexURL: pyodideUrl, packages: []});
  self.fetch = realFetch;
  progress("package");
  pyodide.unpackArchive(zip, "zip", {extractDir: SITE_DIR});
  pyodide.runPython(`import sys\nsys.path.insert(0, ${JSON.stringify(SITE_DIR)})`);
  callable(pyodide, "compute_json");  // the calculators' module, imported now: the first change then only computes
  progress("ready");
  postMessage({type: "ready", phases});
  return pyodide;
}

function callable(pyodide, fn) {
  if (!imported[fn]) {
    const [module, name] = FUNCTIONS[fn];
    imported[fn] = pyodide.pyimport(module)[name];
  }
  return imported[fn];
}

onmessage = async event => {
  const message = event.data;
  if (message.type === "init") {
    if (!python) {
      python = start(message.pyodide, message.package);
      python.catch(err => postMessage({type: "failed", message: String(err && err.message || err)}));
    }
    return;
  }
  if (message.type !== "call") return;
  const {id, fn, args} = message;
  try {
    if (!(fn in FUNCTIONS)) throw new Error(`no function ${fn}: expected one of ${Object.keys(FUNCTIONS).join(", ")}`);
    if (!python) throw new Error("Python was not started: expected an init message first");
    const pyodide = await python;
    const t0 = performance.now();
    const value = callable(pyodide, fn)(...args);
    postMessage({type: "result", id, ok: true, value, pythonMs: performance.now() - t0});
  } catch (err) {
    postMessage({type: "result", id, ok: false, message: String(err && err.message || err)});
  }
};
