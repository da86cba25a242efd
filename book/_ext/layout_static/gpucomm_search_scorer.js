// The book's search ranking and excerpts (Sphinx's `html_search_scorer`, set in _config.yml). Sphinx writes this
// file into _static/language_data.js, which the search page loads right after searchtools.js: `Scorer` and
// `Search` exist, and no query has run yet (the index, searchindex.js, loads after this).
//
// Ranking. Sphinx scores a word found in any section title of a page as much as one in the page's own title, then
// breaks ties by the page title's alphabetical order, so "nvlink" listed "Communication in training" and "Myths"
// (a section title each) before the NVLink chapter. A page whose own title holds every word of the query is
// lifted above those, the more so when its title starts with the query's first word.
//
// Excerpts. Sphinx shows the text around the first occurrence of a word in the page's [role=main], which in
// this theme starts with the download menu (".md .pdf"), the page's title and its table of contents. The
// excerpt is taken from the article's body instead.
;(function () {  // the ";": this file is pasted between other scripts
  "use strict";

  var TITLE_HOLDS_QUERY = 20;   // above any section-title (15) or body-text (5) score Sphinx gives
  var TITLE_STARTS_WITH_QUERY = 5;
  // The parts of [role=main] that are not the page's text.
  var NOT_TEXT = [".headerlink", "script", "style", ".bd-header-article", ".bd-sidebar-secondary",
                  "#jb-print-docs-body", ".prev-next-area", ".bd-footer-article", ".bd-footer-content",
                  "article.bd-article h1"];

  function queryWords() {
    var q = new URLSearchParams(window.location.search).get("q") || "";
    return q.toLowerCase().split(/[^\p{L}\p{N}_]+/u).filter(function (w) { return w.length > 1; });
  }

  if (typeof Scorer !== "undefined") {
    Scorer.score = function (result) {
      var words = queryWords();
      var score = result[4];
      // result: [docname, title, anchor, descr, score, filename]; a section hit is titled "Page > Section".
      var pageTitle = String(result[1] || "").split(" > ")[0].toLowerCase();
      if (!words.length || !pageTitle) return score;
      if (words.every(function (w) { return pageTitle.indexOf(w) !== -1; })) {
        score += TITLE_HOLDS_QUERY;
        if (pageTitle.lastIndexOf(words[0], 0) === 0) score += TITLE_STARTS_WITH_QUERY;
      }
      return score;
    };
  }

  if (typeof Search !== "undefined") {
    Search.htmlToText = function (htmlString, anchor) {
      var doc = new DOMParser().parseFromString(htmlString, "text/html");
      NOT_TEXT.forEach(function (sel) {
        doc.querySelectorAll(sel).forEach(function (el) { el.remove(); });
      });
      if (anchor) {
        var part = doc.querySelector('[role="main"] ' + anchor);
        if (part) return part.textContent;
      }
      var body = doc.querySelector("article.bd-article") || doc.querySelector('[role="main"]');
      return body ? body.textContent : "";
    };
  }
})();
