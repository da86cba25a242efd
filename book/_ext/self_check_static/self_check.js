// Graded self-checks of the book (book/_ext/book_self_check.py writes their HTML). Runs offline:
// no request, no library. Each .gc-check carries its expected answer in data attributes; the
// explanation (.gc-check-why) is hidden until the first check, then shown with the verdict.
//
// A number may be followed by a unit ("16,4 MB" against an answer in bytes): the unit is converted to
// the answer's (sizes B, KB/MB/GB/TB decimal, KiB/MiB/GiB/TiB binary, bits; times s, ms, us, ns; rates
// any size per second). A unit of another kind (a time typed for a size) is not graded: the reader is told.
(function () {
  "use strict";

  // What each unit is, in the SI base of its kind (bytes, seconds, bytes per second).
  var KIND_NAMES = { size: "a size", time: "a time", rate: "a rate" };
  var DECIMAL = { "": 1, k: 1e3, m: 1e6, g: 1e9, t: 1e12, p: 1e15 };
  var BINARY = { ki: 1024, mi: Math.pow(1024, 2), gi: Math.pow(1024, 3), ti: Math.pow(1024, 4), pi: Math.pow(1024, 5) };
  var TIMES = { s: 1, sec: 1, secs: 1, second: 1, seconds: 1, ms: 1e-3, us: 1e-6, "\u00b5s": 1e-6, "\u03bcs": 1e-6,
                ns: 1e-9, min: 60 };

  // A size unit: "MB", "MiB", "mb" (read as bytes), "Gb" or "Gbit" (bits: an upper-case prefix before a
  // lower-case b), "bytes". Returns bytes per unit, or null.
  function sizeFactor(unit) {
    var m = unit.match(/^([kKmMgGtTpP]i?)?(B|b|bytes?|bits?)$/);
    if (!m) return null;
    var prefix = (m[1] || "").toLowerCase();
    var scale = prefix.length === 2 ? BINARY[prefix] : DECIMAL[prefix];
    var word = m[2];
    // "Gb", "Mb", "bit": bits. A lower-case "mb"/"gb" is a sloppy MB/GB: nobody means millibits.
    var bits = /^bits?$/.test(word) || (word === "b" && m[1] && m[1].charAt(0) === m[1].charAt(0).toUpperCase());
    return scale * (bits ? 1 / 8 : 1);
  }

  // {kind, factor} of a unit as typed or as the directive's :unit: has it, or null when it is not one of ours.
  function parseUnit(text) {
    var unit = String(text || "").replace(/\(.*\)\s*$/, "").trim().replace(/\s+/g, "");
    if (!unit) return null;
    if (Object.prototype.hasOwnProperty.call(TIMES, unit.toLowerCase())) return { kind: "time", factor: TIMES[unit.toLowerCase()] };
    var rate = unit.match(/^(.+?)(\/s|\/sec|ps)$/);
    if (rate) {
      var per = sizeFactor(rate[1]);
      if (per !== null) return { kind: "rate", factor: per };
    }
    var size = sizeFactor(unit);
    return size === null ? null : { kind: "size", factor: size };
  }

  // "16,384,000" and "1 500" are read as 16384000 and 1500, "1,5" as 1.5. Returns {value, unit}: the unit
  // is what follows the number ("" when nothing does); value is NaN when the text does not start with one.
  function readAnswer(text) {
    var cleaned = String(text).trim().replace(/(\d)[\s\u00a0\u202f]+(?=\d)/g, "$1")
      .replace(/,(?=\d{3}(\D|$))/g, "").replace(/(\d),(\d)/, "$1.$2");
    var match = cleaned.match(/^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?/i);
    if (!match) return { value: NaN, unit: "" };
    return { value: parseFloat(match[0]), unit: cleaned.slice(match[0].length).trim() };
  }

  // The answer's unit: the first word of :unit: ("GB/s (algbw)" is in GB/s).
  function answerUnit(unitText) {
    var first = String(unitText || "").trim().split(/\s+/)[0] || "";
    return { text: first, parsed: parseUnit(first) };
  }

  // The number typed, in the answer's unit: {value} or {error} (a unit of another kind, or unknown).
  function toAnswerUnit(typed, unitText) {
    var expected = answerUnit(unitText);
    var bare = typed.unit.replace(/\(.*\)\s*$/, "").trim();  // "GB/s (algbw)" as the directive writes it
    // The answer's own unit, or a word the check does not convert ("nodes") typed as the directive has it.
    // Case counts where it means something: "Gb/s" is bits, "GB/s" bytes.
    if (!bare || bare === expected.text
        || (!expected.parsed && bare.toLowerCase() === expected.text.toLowerCase())) return { value: typed.value };
    var given = parseUnit(typed.unit);
    if (!given) {
      return { error: "\u201c" + typed.unit + "\u201d is not a unit this check reads: type the number"
                      + (expected.text ? " in " + expected.text : "") + "." };
    }
    if (!expected.parsed) {
      return { error: "The answer is " + (expected.text ? "in " + expected.text : "a plain number")
                      + ", not " + KIND_NAMES[given.kind] + ": type the number alone." };
    }
    if (given.kind !== expected.parsed.kind) {
      return { error: "\u201c" + typed.unit + "\u201d is " + KIND_NAMES[given.kind] + "; the answer is "
                      + KIND_NAMES[expected.parsed.kind] + " (in " + expected.text + ")." };
    }
    return { value: typed.value * given.factor / expected.parsed.factor, converted: true };
  }

  // A count (bytes) in full, with separators; a rate or a time to 4 significant digits.
  function show(x) {
    return Number.isInteger(x) ? x.toLocaleString("en-US") : String(+x.toPrecision(4));
  }

  function grade(check) {
    var d = check.dataset;
    if (d.kind === "choice") {
      var picked = check.querySelector("input[type=radio]:checked");
      if (!picked) return { ok: null, text: "Pick one of the choices first." };
      var ok = picked.value === d.correct;
      // Once answered, the right choice is marked whichever was picked; the explanation says why.
      var right = check.querySelector('input[type=radio][value="' + d.correct + '"]');
      right.closest("label").classList.add("gc-check-correct");
      return { ok: ok, text: ok ? "Right." : "Wrong: the right answer is marked." };
    }
    var typed = readAnswer(check.querySelector(".gc-check-number").value);
    if (isNaN(typed.value)) return { ok: null, text: "Type a number first." };
    var given = toAnswerUnit(typed, d.unit);
    if (given.error) return { ok: null, text: given.error };
    var answer = parseFloat(d.answer), tol = parseFloat(d.tol);
    var allowed = d.tolKind === "rel" ? Math.abs(answer) * tol : tol;
    var ok2 = Math.abs(given.value - answer) <= allowed + 1e-12 * Math.max(1, Math.abs(answer));
    var unit = d.unit ? " " + answerUnit(d.unit).text : "";
    var yours = given.converted ? typed.value + " " + typed.unit + " = " + show(+given.value.toPrecision(6)) + unit
                                : typed.value + unit;
    return {
      ok: ok2,
      text: ok2 ? "Right: " + show(answer) + unit + (given.converted ? " (" + yours + ")." : ".")
                : "Wrong: " + yours + " is not close enough to " + show(answer) + unit + "."
    };
  }

  function setUp(check) {
    check.classList.add("gc-ready");
    var feedback = check.querySelector(".gc-check-feedback");
    check.querySelector("form").addEventListener("submit", function (event) {
      event.preventDefault();
      var verdict = grade(check);
      feedback.textContent = verdict.text;
      check.classList.remove("gc-right", "gc-wrong");
      if (verdict.ok === null) return;
      check.classList.add(verdict.ok ? "gc-right" : "gc-wrong", "gc-answered");
    });
  }

  var api = { readAnswer: readAnswer, parseUnit: parseUnit, toAnswerUnit: toAnswerUnit };
  if (typeof module !== "undefined" && module.exports) {  // node, for the fast tests
    module.exports = api;
    return;
  }
  window.gcSelfCheck = api;

  function init() {
    document.querySelectorAll(".gc-check").forEach(setUp);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
