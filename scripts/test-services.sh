#!/usr/bin/env bash
# Install (Debian packages) and start what the test suite talks to for real:
#   - headless Chromium + ChromeDriver, for the browser tests of reports and the server's web page;
#   - a PostgreSQL server on a local port, for the server's storage tests;
#   - WordNet (Debian wordnet-base), the offline taxonomy of `sdckit querylog --taxonomy wordnet`.
# Writes the environment the tests read to the file named by $1 (default .test-services.env):
#   SDCKIT_CHROMIUM=/usr/bin/chromium
#   SDCKIT_TEST_POSTGRES_URL=postgresql+psycopg://postgres@127.0.0.1:PORT/sdckit_test
#   SDCKIT_WORDNET=/usr/share/wordnet
# Anything that cannot be installed is reported here and the tests that need it skip with that reason.
set -u
ENV_FILE=${1:-.test-services.env}
PG_PORT=${SDCKIT_PG_PORT:-55432}
PG_DIR=${SDCKIT_PG_DIR:-/tmp/sdckit-test-pg}
: > "$ENV_FILE"

note() { echo "[test-services] $*"; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null 2>&1; then sudo -n "$@"; else return 1; fi
}

apt_updated=0
apt_install() {
  command -v apt-get >/dev/null 2>&1 || { note "apt-get not available: cannot install $*"; return 1; }
  if [ $apt_updated = 0 ]; then
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null 2>&1 || true
    apt_updated=1
  fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null 2>&1
}

# --- Chromium -----------------------------------------------------------------
if [ ! -x /usr/bin/chromium ]; then
  note "installing Debian chromium and chromium-driver"
  apt_install chromium chromium-driver || note "could not install chromium: browser tests will skip"
fi
if [ -x /usr/bin/chromium ]; then
  echo "SDCKIT_CHROMIUM=/usr/bin/chromium" >> "$ENV_FILE"
fi

# --- WordNet (sdckit querylog --taxonomy wordnet) --------------------------------
if [ ! -f /usr/share/wordnet/data.noun ]; then
  note "installing Debian wordnet-base"
  apt_install wordnet-base || note "could not install wordnet-base: the WordNet tests will skip"
fi
if [ -f /usr/share/wordnet/data.noun ]; then
  echo "SDCKIT_WORDNET=/usr/share/wordnet" >> "$ENV_FILE"
fi

# --- PostgreSQL ---------------------------------------------------------------
pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }
if [ -z "$(pg_bin)" ] || [ ! -x "$(pg_bin)/postgres" ]; then
  note "installing Debian postgresql"
  apt_install postgresql || note "could not install postgresql: PostgreSQL tests will skip"
fi
BIN=$(pg_bin)
if [ -n "$BIN" ] && [ -x "$BIN/postgres" ]; then
  if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || useradd --system --home /var/lib/postgresql --shell /bin/sh postgres
    RUN_AS=(su postgres -s /bin/sh -c)
  else
    RUN_AS=(sh -c)
  fi
  # Stop a server left from an earlier run on this port, then start afresh.
  [ -d "$PG_DIR/data" ] && "${RUN_AS[@]}" "$BIN/pg_ctl -D $PG_DIR/data -m immediate stop" >/dev/null 2>&1
  rm -rf "$PG_DIR"
  mkdir -p "$PG_DIR"
  [ "$(id -u)" = 0 ] && chown postgres "$PG_DIR"
  if "${RUN_AS[@]}" "$BIN/initdb -D $PG_DIR/data -A trust -U postgres" >"$PG_DIR.initdb.log" 2>&1 \
     && "${RUN_AS[@]}" "$BIN/pg_ctl -D $PG_DIR/data -l $PG_DIR/server.log -w -t 60 -o '-p $PG_PORT -k $PG_DIR -c listen_addresses=127.0.0.1' start" >/dev/null 2>&1 \
     && "${RUN_AS[@]}" "$BIN/createdb -h 127.0.0.1 -p $PG_PORT -U postgres sdckit_test" >/dev/null 2>&1; then
    note "PostgreSQL $("$BIN/postgres" --version | awk '{print $3}') running on 127.0.0.1:$PG_PORT"
    echo "SDCKIT_TEST_POSTGRES_URL=postgresql+psycopg://postgres@127.0.0.1:$PG_PORT/sdckit_test" >> "$ENV_FILE"
  else
    note "could not start PostgreSQL (see $PG_DIR.initdb.log, $PG_DIR/server.log): PostgreSQL tests will skip"
  fi
fi
exit 0
