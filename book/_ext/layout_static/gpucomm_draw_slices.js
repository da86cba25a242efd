// Plotly draws a figure in one task: on the 2-core machine the book is measured on, a calculator page's first
// figure (six to eight axes, a legend, a slider) takes 400-500 ms cold and a second one 150-280 ms, so the page froze
// after its first paint (static-book issue 26: no main-thread task over 200 ms after the first paint). This script
// lets the browser in between the steps of a draw, as plotly itself does when a step has to wait (MathJax): it is
// loaded right after plotly.js on pages with figures, by book/_ext/book_page_assets.py.
//
// How. Plotly runs a draw as a sequence of steps (Lib.syncOrAsync); between them, Plots.previousPromises waits for the
// promises in the figure's `gd._promises` when there are any, and the rest of the sequence then runs in the task
// that settles them. Plotly exports neither Lib nor Plots, so the figure's own `_promises` is made an accessor
// (on a prototype put between the figure's element and its class, so that plotly's `delete gd._promises` in
// Plots.purge keeps it).
// Once the current task has run SLICE_MS of plotly's work, a previousPromises whose answer plotly waits for (read
// from the call stack, see readerOf) is handed one more promise, which settles in the next task. What is drawn is
// unchanged, only when it is drawn: tests/book/test_browser_draw_slices.py draws every figure of the book both ways
// and compares the SVG. Measured with benchmarks/bench_live_calculator.py (figures in the README). Only the draws of
// plotly's calls made from outside plotly (a page's figure, the layout script's relayouts) are sliced: not what
// plotly starts itself (a button of the figure, a hover label).
//
// A figure a live calculator redraws (gpucomm_live.js sets `gd.gpucommLive`) yields only after LIVE_SLICE_MS: an
// update takes tens of ms and the reader waits for it (a yield lets a frame be rendered in the middle), but one that
// redraws the whole figure (a relayout of its axes, 150-230 ms on a phone page) is not let freeze the page either.
//
// Figures drawn while the page loads (the scripts myst-nb writes for each output) are drawn one after another, in
// page order, not interleaved; `window.gpucommFiguresDrawn()` resolves when the queue is empty (the layout script
// lays figures out after it).
(function () {
  "use strict";

  const Plotly = window.Plotly;
  if (!Plotly || Plotly.gpucommSliced) return;
  Plotly.gpucommSliced = true;

  // Plotly work per task before the next wait point yields. Small, because the longest stretch with no wait point
  // (the axes of a figure with their tick labels, then its traces: 100-140 ms cold on a phone page) follows it; a
  // live update that takes less than this is drawn in one task as before.
  const SLICE_MS = 10;
  const LIVE_SLICE_MS = 50;

  // The current task's plotly work: when it began, and whether it is held (a redraw nobody waits for ran in it and its
  // promise callbacks have not run yet, see readerOf); null between tasks.
  let slice = null;
  function startSlice() {
    const current = slice = {start: performance.now(), held: false};
    setTimeout(() => { if (slice === current) slice = null; }, 0);  // after this task: the next one starts a new slice
    return current;
  }
  const currentSlice = () => slice || startSlice();
  // scheduler.yield resumes ahead of other queued tasks and is not clamped to 4 ms as nested timers are.
  const nextTask = () => (window.scheduler && typeof window.scheduler.yield === "function"
    ? window.scheduler.yield() : new Promise(resolve => setTimeout(resolve, 0))).then(() => { startSlice(); });

  // Who reads `_promises` now. "waited": a previousPromises whose answer is waited for, a step of the sequence of one of
  // plotly's calls made from outside plotly (a page's newPlot, the layout script's relayout) or of a sequence run by
  // such a step, each returning what it runs. Read from the call stack: the frames from previousPromises up to the call
  // alternate between Lib.syncOrAsync and at most one step; a sequence resumed after a wait (nothing below it) was
  // waited for too. A yield offered anywhere else would not be waited for, and what follows it in its own sequence
  // would run after the rest of the draw: the legend draws its entries, yields, and only then measures them and pushes
  // the margin, after the margins were settled (the plot area came out too tall; the test caught it).
  // The call is known by its frame: plotly names its calls' functions by the property they are called as
  // ("[as _doPlot]": newPlot's), and the calls this script makes have this script's frame right below them.
  // A whole-figure redraw plotly starts itself (_doPlot through its registry, as `Registry.call` frames it) is known by
  // where it is in plotly.js, the place a named frame of it showed (`callSites`), and is waited for where what started
  // it is: when a relayout redraws the figure (Plots.layoutReplot, a step of the relayout) or the margins changed
  // (Plots.doAutoMargin, a step of the draw).
  // "redraw": a step of such a redraw that nobody waits for. A slider drawn by a relayout pushes the margin, and its
  // Plots.autoMargin starts a redraw and returns nothing: the relayout goes on without it. That redraw ends in the same
  // task, but its last promise callback (plotly's count of redraws for margins, which decides how the next draw turns
  // its tick labels) runs only once the call stack unwinds: a yield before that would run it before what plotly alone
  // draws first, and the relayout's own redraw came out with another margin (the phone page's figure 11 px shorter).
  // Until then nothing yields. "other": any other read.
  const CALL_FRAME = /\[as (_doPlot|relayout|update|restyle)\]/;
  const SEQUENCE_FRAME = /syncOrAsync/;
  const OWN_FRAME = /gpucomm_draw_slices\.js/;
  const callSites = new Set();
  const siteOf = frame => (/(\S+:\d+:\d+)\)?$/.exec(frame) || [])[1] || frame;
  function readerOf() {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 60;
    const frames = (new Error().stack || "").split("\n").slice(3)  // "Error", this function, the getter
      .map(line => line.trim()).filter(line => !line.startsWith("at async"));
    Error.stackTraceLimit = limit;
    if (!frames.length || !/previousPromises/.test(frames[0])) return "other";
    let inRedraw = false;
    for (let i = 1; ;) {
      if (i < frames.length && !SEQUENCE_FRAME.test(frames[i])) i++;  // the step that returned it, if any
      if (i >= frames.length || !SEQUENCE_FRAME.test(frames[i])) return inRedraw ? "redraw" : "other";
      i++;  // what ran the sequence:
      if (i + 1 >= frames.length) return "waited";  // nothing (a sequence resumed after a wait) or the bottom frame
      if (CALL_FRAME.test(frames[i])) {  // one of plotly's calls, by name
        callSites.add(siteOf(frames[i]));
        return "waited";
      }
      if (OWN_FRAME.test(frames[i + 1])) return "waited";  // one of plotly's calls, made by this script
      if (callSites.has(siteOf(frames[i]))) {  // a _doPlot: a step itself (Plotly.react's), or through the registry
        inRedraw = true;
        i += SEQUENCE_FRAME.test(frames[i + 1]) ? 1 : 2;  // then what called it
      }
    }
  }

  // One prototype per element class, shared by every figure of that class: plotly reads a figure's properties in
  // hot code, and figures with prototypes of their own would each be a shape of their own to it.
  const slicedPrototypes = new Map();
  function slicedPrototype(base) {
    if (!slicedPrototypes.has(base)) {
      slicedPrototypes.set(base, Object.create(base, {
        _promises: {
          configurable: true,
          // The figure's queue as plotly keeps it; to a previousPromises that is waited for, once this task has run
          // its budget of plotly's work, the queue and one promise that settles in the next task (not put in the
          // queue: a reader that does not wait leaves nothing behind).
          get() {
            const promises = this.gpucommPromises || (this.gpucommPromises = []);
            if (!this.gpucommDrawing) return promises;
            const current = currentSlice();
            if (current.held) return promises;
            const reader = readerOf();  // on every read: a redraw nobody waits for holds the task even within budget
            if (reader === "redraw") {
              current.held = true;
              queueMicrotask(() => { current.held = false; });  // with the redraw's own callbacks, as the stack unwinds
            }
            const budget = this.gpucommLive ? LIVE_SLICE_MS : SLICE_MS;
            if (reader !== "waited" || performance.now() - current.start <= budget) return promises;
            if (!this.gpucommYield) this.gpucommYield = nextTask();
            return promises.concat([this.gpucommYield]);
          },
          set(value) {  // previousPromises empties the queue once it settled
            this.gpucommPromises = value;
            this.gpucommYield = null;
          },
        },
      }));
    }
    return slicedPrototypes.get(base);
  }

  function sliceDrawsOf(gd) {
    if (!gd || gd.gpucommSliced) return;
    const queue = Object.prototype.hasOwnProperty.call(gd, "_promises") ? gd._promises : undefined;
    delete gd._promises;
    Object.setPrototypeOf(gd, slicedPrototype(Object.getPrototypeOf(gd)));
    gd.gpucommSliced = true;
    if (queue) gd.gpucommPromises = queue;
  }

  const element = gd => typeof gd === "string" ? document.getElementById(gd) : gd;
  // The figure is being drawn by one of the calls below (plotly's own calls from its buttons go round them).
  function drawing(div, run) {
    if (!div || !div.gpucommSliced) return run();
    div.gpucommDrawing = (div.gpucommDrawing || 0) + 1;
    const done = () => { div.gpucommDrawing -= 1; };
    let result;
    try {
      result = run();
    } catch (err) {
      done();
      throw err;
    }
    Promise.resolve(result).then(done, done);
    return result;
  }
  let pageDraws = Promise.resolve();
  for (const name of ["newPlot", "react", "relayout", "update", "restyle"]) {
    const call = Plotly[name];
    const first = name === "newPlot" || name === "react";  // may be a figure's first draw
    Plotly[name] = function (gd, ...rest) {
      const div = element(gd);
      if (first) sliceDrawsOf(div);
      const run = () => drawing(div, () => call.call(Plotly, div || gd, ...rest));
      if (!first || document.readyState !== "loading") return run();
      const drawn = pageDraws.then(run);
      pageDraws = drawn.catch(() => undefined);  // a figure that fails to draw does not stop the others
      return drawn;
    };
  }
  window.gpucommFiguresDrawn = () => pageDraws;
})();
