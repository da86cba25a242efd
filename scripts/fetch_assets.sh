#!/usr/bin/env bash
# Put the JavaScript the built book needs into assets/vendor/, so pages work with no network.
#
#   scripts/fetch_assets.sh            # uses .venv/bin/python (or $PYTHON) to check plotly's version
#
# What goes where (assets/vendor/ is gitignored; _config.yml serves it as a static path,
# so it ends up under _build/html/_static/):
#   plotly/plotly-cartesian.min.js     npm plotly.js-cartesian-dist-min (partial bundle: scatter, bar,
#                                      heatmap, ..., every trace type the book draws), at the
#                                      plotly.js version the installed plotly (python) bundles
#   requirejs/require.js               npm requirejs             (AMD loader the widget embedder needs)
#   jupyter-widgets/embed-amd.js       npm @jupyter-widgets/html-manager dist/ (+ its icon fonts,
#                                      + require-config.js, written here: see copy_html_manager)
#   mathjax/es5/tex-mml-chtml.js       npm mathjax@3 es5/ (+ output fonts, extensions)
#   pyodide/pyodide.mjs                npm pyodide (CPython compiled to WebAssembly: the runtime and its
#                                      standard library, no packages), loaded by the book's live
#                                      calculators only when a reader changes a control
#
# npm tarballs are fetched with `npm pack`, checked against the sha512 integrity pinned below,
# and cached in $GPUCOMM_CACHE (default ~/.cache/gpucomm/npm), so a second run or a fresh
# clone on the same machine fetches nothing. Re-running is cheap and idempotent: a package is
# unpacked again only when its pinned version changes. Any failure stops the script (set -e).
#
# Not under a folder named `_static`: Jupyter Book 1 adds every .js file of a `_static` folder
# to every page, which would load hundreds of MathJax components on each page.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
vendor="$root/assets/vendor"
cache="${GPUCOMM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gpucomm}/npm"
python="${PYTHON:-$root/.venv/bin/python}"

# name  version  integrity (sha512 of the tarball, as the npm registry reports it)
PACKAGES=(
  # The full plotly.min.js is 4.8 MB; this partial bundle is 1.5 MB and holds the trace types the
  # book draws (scatter, bar, heatmap; its README lists them all). Its version must be the one of
  # the plotly.js inside the installed plotly package (checked below): bump both together.
  "plotly.js-cartesian-dist-min 4.1.1 sha512-o8GrFeusncwBIxbBynRJpY4pkgVB6caM+JLpwrLYbbsO7dZ8FJ+SVN2Fr+L7kiG/Z6w4P5O0Jus/Qr5EefHVeg=="
  "requirejs 2.3.8 sha512-7/cTSLOdYkNBNJcDMWf+luFvMriVm7eYxp4BcFCsAX0wF421Vyce5SXP17c+Jd5otXKGNehIonFlyQXSowL6Mw=="
  # 1.0.x is the embedder for ipywidgets 8 (widget model versions @jupyter-widgets/controls 2.0.0).
  "@jupyter-widgets/html-manager 1.0.15 sha512-5thBIV6ymNgmPVOHvzx+gGy8ZSKmSazhtGw4/c4xJDVzRhG9PTeQsRjF3FUTopvFi//SABeNz1yp47bCrJ3CQA=="
  # MathJax 3 is what Sphinx 7's mathjax extension is configured for (mathjax3_config).
  "mathjax 3.2.2 sha512-Bt+SSVU8eBG27zChVewOicYs7Xsdt40qm4+UpHyX7k0/O9NliPc+x77k1/FEsPsjKPZGJvtRZM1vO+geW0OhGw=="
  # Python 3.13 in the browser for the live calculators (book/_ext/book_page_assets.py). The npm
  # tarball holds the runtime and the standard library only; the calculators need nothing else.
  "pyodide 0.29.5 sha512-TkYrUv9m8QmfImADKRmpwZulL48E0uUaBSO+dvRQKyAJc0qh9gu7jn8btyHPh3NZm1r2IH2YrJhIr7Q2B9urAw=="
)

# Bump when what a copy rule puts in assets/vendor changes: forces a re-copy of every package.
LAYOUT=4

die() { echo "fetch_assets: ERROR: $*" >&2; exit 1; }
say() { echo "fetch_assets: $*"; }

command -v tar >/dev/null || die "tar not found"
command -v openssl >/dev/null || command -v python3 >/dev/null || die "need openssl or python3 to check integrity"

sha512_b64() {  # base64 of the binary sha512 of a file, the format of npm's "integrity"
  if command -v openssl >/dev/null; then
    openssl dgst -sha512 -binary "$1" | openssl base64 -A
  else
    python3 -c 'import base64,hashlib,sys; print(base64.b64encode(hashlib.sha512(open(sys.argv[1],"rb").read()).digest()).decode())' "$1"
  fi
}

# Path of the verified tarball for name@version in the cache, fetching it with npm if needed.
tarball() {
  local name=$1 version=$2 integrity=$3
  local file="$cache/$(echo "${name#@}" | tr / -)-$version.tgz"
  if [[ ! -f $file || "sha512-$(sha512_b64 "$file")" != "$integrity" ]]; then
    command -v npm >/dev/null || die "npm not found: install Node.js/npm (Debian: apt-get install npm) to fetch $name@$version"
    mkdir -p "$cache"
    local tmp
    tmp=$(mktemp -d "$cache/.pack.XXXXXX")
    say "npm pack $name@$version" >&2
    (cd "$tmp" && npm pack --silent "$name@$version" >/dev/null) || { rm -rf "$tmp"; die "npm pack $name@$version failed"; }
    local got
    got=$(ls "$tmp"/*.tgz 2>/dev/null | head -n 1)
    [[ -n $got ]] || { rm -rf "$tmp"; die "npm pack $name@$version produced no tarball"; }
    if [[ "sha512-$(sha512_b64 "$got")" != "$integrity" ]]; then
      rm -rf "$tmp"
      die "$name@$version: integrity mismatch (expected $integrity)"
    fi
    mv -f "$got" "$file"
    rm -rf "$tmp"
  fi
  echo "$file"
}

# Unpack name@version into a scratch dir and run a copy function on it, unless vendor/<dest>
# already holds that version (recorded in vendor/<dest>/.version).
install_pkg() {
  local name=$1 version=$2 integrity=$3 dest=$4 copier=$5
  local stamp="$vendor/$dest/.version"
  if [[ -f $stamp && "$(cat "$stamp")" == "$name@$version layout $LAYOUT" ]]; then
    say "$dest: $name@$version already in place"
    return
  fi
  local file tmp
  file=$(tarball "$name" "$version" "$integrity")
  tmp=$(mktemp -d)
  tar -xzf "$file" -C "$tmp"
  rm -rf "${vendor:?}/$dest"
  mkdir -p "$vendor/$dest"
  "$copier" "$tmp/package" "$vendor/$dest"
  rm -rf "$tmp"
  echo "$name@$version layout $LAYOUT" > "$stamp"
  say "$dest: installed $name@$version"
}

copy_requirejs() {
  cp "$1/require.js" "$2/"
  [[ -f $1/LICENSE ]] && cp "$1/LICENSE" "$2/" || true
}

copy_html_manager() {
  # embed-amd.js is self-contained except for the icon fonts its CSS references; webpack
  # resolves those next to the script (public path from the script's own URL), so copy them.
  cp "$1/dist/embed-amd.js" "$2/"
  cp "$1"/dist/*.{woff2,woff,ttf,eot,svg} "$2/"
  cp "$1/dist/embed.js.LICENSE.txt" "$2/" 2>/dev/null || true
  [[ -f $1/LICENSE ]] && cp "$1/LICENSE" "$2/" || true
  # embed-amd.js registers itself under the AMD id "@jupyter-widgets/html-manager/dist/...", and
  # webpack takes the fonts' public path from that module's URL, which require.js resolves against
  # the page: book/@jupyter-widgets/html-manager/dist/*.woff2, a 404. Loaded between require.js
  # and embed-amd.js (_config.yml: nb_ipywidgets_js), this maps the id to this folder.
  cat > "$2/require-config.js" <<'JS'
// Generated by scripts/fetch_assets.sh: resolve the ipywidgets embedder's AMD id (and so its
// icon fonts) to the folder this file is served from, on pages at any depth.
(function () {
  var dir = document.currentScript.src.split("?")[0].replace(/\/[^\/]*$/, "");
  require.config({paths: {"@jupyter-widgets/html-manager/dist": dir}});
})();
JS
}

copy_mathjax() {
  # The whole es5/ tree minus combined bundles the book never loads (svg output bundles,
  # the -full variants, node-main): tex-mml-chtml.js loads fonts and TeX extensions
  # (autoload, \require), the menu loads a11y/ and sre/ on demand, all from this tree.
  mkdir -p "$2/es5"
  cp -R "$1/es5/." "$2/es5/"
  rm -f "$2"/es5/{tex-svg,tex-svg-full,tex-mml-svg,mml-svg,tex-chtml-full,tex-chtml-full-speech,node-main}.js
  cp "$1/LICENSE" "$2/"
  [[ -f $2/es5/tex-mml-chtml.js && -d $2/es5/output/chtml/fonts/woff-v2 ]] || die "mathjax: unexpected package layout"
}

copy_plotly_cartesian() {
  # README.md lists the trace types of the bundle: tests/book/test_book.py checks every figure
  # of the book against it.
  cp "$1/plotly-cartesian.min.js" "$1/LICENSE" "$1/README.md" "$2/"
  grep -q '^Contains trace modules ' "$2/README.md" || die "plotly.js-cartesian-dist-min: no list of trace modules in README.md"
}

copy_pyodide() {
  # What loadPyodide({indexURL}) reads: the loader, as an ES module (imported, it cannot take a
  # page's require.js for its module system, as its UMD twin pyodide.js would), the Emscripten
  # module and its WebAssembly, the standard library, the lock file (the package index; the
  # calculators load no package from it). package.json carries the version and the license (MPL-2.0).
  cp "$1"/{pyodide.mjs,pyodide.asm.js,pyodide.asm.wasm,python_stdlib.zip,pyodide-lock.json,package.json} "$2/"
}

# The figures' JSON is written by the installed plotly (python) for the plotly.js it bundles;
# served by another plotly.js version, attributes may be renamed or dropped without an error.
check_plotly_version() {
  local want=$1 got
  [[ -x $python ]] || die "no python at $python: create the virtualenv first (make env) or set PYTHON"
  got=$("$python" -c 'from plotly.offline import get_plotlyjs_version; print(get_plotlyjs_version())') \
    || die "plotly is not importable with $python"
  [[ $got == "$want" ]] || die "the installed plotly bundles plotly.js $got, but plotly.js-cartesian-dist-min is" \
    "pinned at $want: pin $got in PACKAGES (integrity: npm view plotly.js-cartesian-dist-min@$got dist.integrity)"
}

mkdir -p "$vendor"
for spec in "${PACKAGES[@]}"; do
  read -r name version integrity <<<"$spec"
  case $name in
    plotly.js-cartesian-dist-min)
      check_plotly_version "$version"
      install_pkg "$name" "$version" "$integrity" plotly copy_plotly_cartesian ;;
    requirejs) install_pkg "$name" "$version" "$integrity" requirejs copy_requirejs ;;
    @jupyter-widgets/html-manager) install_pkg "$name" "$version" "$integrity" jupyter-widgets copy_html_manager ;;
    mathjax) install_pkg "$name" "$version" "$integrity" mathjax copy_mathjax ;;
    pyodide) install_pkg "$name" "$version" "$integrity" pyodide copy_pyodide ;;
    *) die "no copy rule for $name" ;;
  esac
done

# Every file _config.yml points at must exist, or the pages would silently lose figures/math.
for f in plotly/plotly-cartesian.min.js requirejs/require.js jupyter-widgets/embed-amd.js jupyter-widgets/require-config.js \
         mathjax/es5/tex-mml-chtml.js pyodide/pyodide.mjs pyodide/pyodide.asm.wasm pyodide/python_stdlib.zip; do
  [[ -s $vendor/$f ]] || die "missing $vendor/$f"
done
say "done: $(du -sh "$vendor" | cut -f1) in $vendor"
