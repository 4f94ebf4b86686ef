#!/usr/bin/env bash
# Build R sdcTable outside the repository, for benchmarks/suppression_peer.py (issue 21).
#
#   bash benchmarks/peers/build_sdctable.sh DIR [VERSION]
#
# VERSION is 0.32.7 (the default: the release whose figures docs/benchmarks.md holds; its
# LPs go through GLPK, by Rglpk and glpkAPI) or 0.33.0 (the newest release: its LPs go
# through the R package highs, which compiles the whole of HiGHS from source: on the
# shared 2-core machine of session 9 that build was 9% done after 10 minutes, and was
# stopped).
#
# R and every dependency Debian packages come from apt (needs root); the packages
# Debian lacks are built from their released sources, pinned below (the CRAN releases,
# as CRAN's read-only git mirror holds them: repository cran/NAME at the commit given).
# Put each source tree in DIR/src/NAME beforehand (e.g. `git archive` of that commit);
# where it is absent the script tries `git clone` of the mirror and, failing that, says
# what to put where and stops. Installs into DIR/R-lib and prints the versions.
# sdckit never depends on R: `make test` and CI do not need any of this.
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: bash benchmarks/peers/build_sdctable.sh DIR [0.32.7|0.33.0]" >&2
    exit 2
fi
VERSION=${2:-0.32.7}
DIR=$(mkdir -p "$1" && cd "$1" && pwd)
LIB="$DIR/R-lib"
SRC="$DIR/src"
mkdir -p "$LIB" "$SRC"

# Debian bookworm's R 4.2 and the dependencies it packages.
APT_PACKAGES=(
    r-base-core r-base-dev libglpk-dev libgmp-dev cmake
    r-cran-rcpp r-cran-data.table r-cran-knitr r-cran-rlang r-cran-stringr r-cran-slam
    r-cran-progress r-cran-matrix r-cran-mass r-cran-shiny r-cran-shinythemes
    r-cran-shinyjs r-cran-jsonlite r-cran-cli r-cran-checkmate r-cran-htmlwidgets
    r-cran-promises r-cran-rglpk
)
# Not in Debian: NAME VERSION COMMIT, in the order they must be installed.
SOURCES=(
    "SSBtools 1.8.4 a995ee877ba97fed0aa91052cc43ae67ad80e3e2"
    "shinyTree 0.3.1 f030deaeecb91fa72a6b0ed57a34abbd5e3b0a8c"
    "sdcHierarchies 0.22.0 ee3e7919439d3c43fb55b58a87bf031e684ef855"
)
case "$VERSION" in
0.33.0)
    SOURCES=("highs 1.12.0-3 1836a57e218ce0a957a13ded16c4be61b2f0cdc6" "${SOURCES[@]}"
        "sdcTable 0.33.0 7b57bcbe41771882af4eeb170c88245ba92fa59f")
    ;;
0.32.7)
    SOURCES+=("glpkAPI 1.3.4.1 f89e0fedb806bb538a495055c8b619020907d2ca"
        "sdcTable 0.32.7 503ded8b038e5beac184623d4ef288e89f079999")
    ;;
*)
    echo "build_sdctable.sh: VERSION must be 0.32.7 or 0.33.0, got $VERSION" >&2
    exit 2
    ;;
esac

step() { echo "== $*"; }
fail() {
    echo "build_sdctable.sh: $*" >&2
    exit 1
}

step "apt packages"
missing=()
for package in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
        missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
    [ "$(id -u)" = 0 ] || fail "not root: install these Debian packages first: ${missing[*]}"
    for attempt in 1 2 3 4 5 6; do
        if DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
            "${missing[@]}"; then
            break
        fi
        [ "$attempt" = 6 ] && fail "apt-get install failed (no network to Debian, or the dpkg lock is held): ${missing[*]}"
        echo "apt-get install failed (attempt $attempt); retrying in 30 s (dpkg lock?)"
        sleep 30
    done
fi
command -v Rscript >/dev/null || fail "Rscript not found after installing r-base-core"

for entry in "${SOURCES[@]}"; do
    read -r name version commit <<<"$entry"
    if R_LIBS="$LIB" Rscript -e "quit(status = !(requireNamespace('$name', quietly = TRUE) &&
            as.character(packageVersion('$name')) == '$(echo "$version" | tr - .)'))" \
        >/dev/null 2>&1; then
        step "$name $version already in $LIB"
        continue
    fi
    tree="$SRC/$name"
    if [ ! -f "$tree/DESCRIPTION" ]; then
        step "$name: cloning the release ($commit)"
        rm -rf "$tree"
        if ! git clone --quiet "https://github.com/cran/$name" "$tree" 2>/dev/null ||
            ! git -C "$tree" checkout --quiet "$commit" 2>/dev/null; then
            rm -rf "$tree"
            fail "no source for $name $version: put the tree of commit $commit of cran/$name in $tree"
        fi
    fi
    got=$(sed -n 's/^Version: *//p' "$tree/DESCRIPTION")
    [ "$got" = "$version" ] || fail "$tree holds $name $got, expected $version"
    step "$name $version: R CMD INSTALL (log: $DIR/install-$name.log)"
    if ! MAKEFLAGS="-j$(nproc)" R_LIBS="$LIB" nice -n 10 \
        R CMD INSTALL --no-docs --no-multiarch -l "$LIB" "$tree" >"$DIR/install-$name.log" 2>&1; then
        tail -n 20 "$DIR/install-$name.log" >&2
        fail "R CMD INSTALL of $name failed (the log's end is above)"
    fi
done

step "versions"
R_LIBS="$LIB" Rscript -e 'cat(R.version.string, "\n");
  for (p in c("sdcTable", "sdcHierarchies", "SSBtools", "highs", "glpkAPI", "Rglpk", "Rcpp",
             "data.table", "Matrix"))
    if (requireNamespace(p, quietly = TRUE)) cat(p, as.character(packageVersion(p)), "\n")'
echo "R_LIBS=$LIB Rscript benchmarks/peers/sdctable_protect.R ... runs the peer"
