// Graded self-checks of the book (book/_ext/book_self_check.py writes their HTML). Runs offline:
// no request, no library. Each .gc-check carries its expected answer in data attributes; the
// explanation (.gc-check-why) is hidden until the first check, then shown with the verdict.
(function () {
  "use strict";

  // "16,384,000" and "1 500" are read as 16384000 and 1500, "1,5" as 1.5; a unit typed after the
  // number is ignored.
  function readNumber(text) {
    var cleaned = text.replace(/\s+/g, "").replace(/,(?=\d{3}(\D|$))/g, "").replace(",", ".");
    var match = cleaned.match(/^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?/i);
    return match ? parseFloat(match[0]) : NaN;
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
    var given = readNumber(check.querySelector(".gc-check-number").value);
    if (isNaN(given)) return { ok: null, text: "Type a number first." };
    var answer = parseFloat(d.answer), tol = parseFloat(d.tol);
    var allowed = d.tolKind === "rel" ? Math.abs(answer) * tol : tol;
    var ok2 = Math.abs(given - answer) <= allowed + 1e-12;
    var unit = d.unit ? " " + d.unit : "";
    // A count (bytes) in full, with separators; a rate or a time to 4 significant digits.
    var shown = Number.isInteger(answer) ? answer.toLocaleString("en-US") : String(+answer.toPrecision(4));
    return {
      ok: ok2,
      text: ok2 ? "Right: " + shown + unit + "."
                : "Wrong: " + given + unit + " is not close enough to " + shown + unit + "."
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

  function init() {
    document.querySelectorAll(".gc-check").forEach(setUp);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
