#!/usr/bin/env bash
# One entry point for a fresh machine: creates .venv with Python >= 3.12, installs Précis and what its tests need.
#   packaging/dev.sh app [ARGS]   install, then launch the window (or `precis ARGS`)
#   packaging/dev.sh test [ARGS]  install, lint and type-check, then run the whole test suite (what CI runs)
#   packaging/dev.sh bench        install, then run the benchmarks under tests/bench/
#   packaging/dev.sh lint         ruff and the mypy baseline check (packaging/typecheck.py)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
VENV="$ROOT/.venv"

find_python() {
  local c
  for c in "${PRECIS_PYTHON:-}" python3.13 python3.12 python3 \
           /root/.pyenv/versions/3.13*/bin/python3 /root/.pyenv/versions/3.12*/bin/python3 \
           "$HOME"/.pyenv/versions/3.1[3-9]*/bin/python3 "$HOME"/.pyenv/versions/3.12*/bin/python3 \
           /usr/bin/python3.13 /usr/bin/python3.12; do
    [ -n "$c" ] || continue
    if "$c" -c 'import sys; raise SystemExit(sys.version_info < (3, 12))' >/dev/null 2>&1; then
      command -v "$c" 2>/dev/null || echo "$c"
      return 0
    fi
  done
  return 1
}

# Debian/Ubuntu packages of the shared libraries Qt loads (xcb for a desktop, offscreen for tests, libQt6Gui),
# installed together whenever packaging/qt_libs.py finds one of them missing.
QT_PACKAGES=(
  libegl1 libgl1 libglx0 libfontconfig1 libfreetype6 libdbus-1-3 libglib2.0-0 libxkbcommon0
  libxkbcommon-x11-0 libx11-xcb1 libxcb1 libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-image0
  libxcb-render-util0 libxcb-shape0 libxcb-randr0 libxcb-render0 libxcb-shm0 libxcb-sync1 libxcb-xfixes0
  libxcb-xkb1 libxcb-util1 fonts-dejavu-core
)

QT_PROBE=0 QT_MISSING="" QT_UNMAPPED=""
qt_probe() {
  # Asks packaging/qt_libs.py what the window would fail to load: ldd on the xcb and offscreen platform plugins
  # and libQt6Gui, plus a QApplication built on xcb when DISPLAY is set. (Importing PySide6.QtWidgets loads no
  # platform plugin, so it proves nothing.) Sets QT_PROBE to its exit status (0 loads, 1 something missing,
  # 2 not checked), QT_MISSING to the Debian packages it names, QT_UNMAPPED to libraries no package is known for.
  local err
  err=$(mktemp)
  QT_PROBE=0
  QT_MISSING=$("$VENV/bin/python" "$ROOT/packaging/qt_libs.py" 2>"$err") || QT_PROBE=$?
  QT_UNMAPPED=$(sed -n 's/^qt_libs: \([^ ]*\) is missing and no known Debian package provides it$/\1/p' "$err" \
                | tr '\n' ' ')
  QT_UNMAPPED=${QT_UNMAPPED% }
  if [ "$QT_PROBE" != 0 ] && [ "$QT_PROBE" != 1 ]; then
    sed 's/^qt_libs:/dev.sh:/' "$err" >&2
  fi
  rm -f "$err"
}

system_packages() {
  local tools=() pkgs=() extra=() what="" list
  qt_probe
  # the run tool's sandbox (app and test alike): without it commands run unconfined, after a warning
  command -v bwrap >/dev/null 2>&1 || tools+=(bubblewrap)
  # emoji in chats (Noto Color Emoji, OFL): Qt falls back to it, else emoji show as empty boxes
  if ! command -v fc-list >/dev/null 2>&1 || [ -z "$(fc-list 'Noto Color Emoji' 2>/dev/null)" ]; then
    tools+=(fonts-noto-color-emoji)
  fi
  # Chinese (the window speaks it, and chats hold it): without a CJK font Qt shows empty boxes. The app gets
  # Noto Sans CJK (OFL); the tests the small Droid Sans Fallback (Apache-2.0), enough for the Chinese window test
  # and screenshots. Only when fontconfig knows no Chinese font at all, so a second run installs nothing.
  if ! command -v fc-list >/dev/null 2>&1 || [ -z "$(fc-list :lang=zh 2>/dev/null)" ]; then
    if [ "${cmd:-}" = test ]; then tools+=(fonts-droid-fallback); else tools+=(fonts-noto-cjk); fi
  fi
  if [ "${cmd:-}" = test ]; then  # the suite starts the real window under Xvfb (xvfb-run needs xauth)
    command -v Xvfb >/dev/null 2>&1 || tools+=(xvfb)
    command -v xauth >/dev/null 2>&1 || tools+=(xauth)
    # the desktop entry and the AppStream metainfo are validated with the distribution's own tools
    command -v desktop-file-validate >/dev/null 2>&1 || tools+=(desktop-file-utils)
    command -v appstreamcli >/dev/null 2>&1 || tools+=(appstream)
  fi
  [ "$QT_PROBE" = 1 ] || [ ${#tools[@]} -gt 0 ] || return 0
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    pkgs=(${tools[@]+"${tools[@]}"})
    if [ "$QT_PROBE" = 1 ]; then
      read -r -a extra <<<"$QT_MISSING"
      pkgs+=("${QT_PACKAGES[@]}" ${extra[@]+"${extra[@]}"})
      read -r -a pkgs <<<"$(printf '%s\n' "${pkgs[@]}" | awk '!seen[$0]++' | xargs)"
    fi
    echo "dev.sh: installing system packages: ${pkgs[*]}" >&2
    if apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        "${pkgs[@]}" >/dev/null; then
      tools=()
      [ "$QT_PROBE" != 1 ] || qt_probe
      [ "$QT_PROBE" = 1 ] || return 0
    fi
  fi
  # Not root, no apt-get, or the install failed: one sentence naming what is missing and what brings it.
  [ "$QT_PROBE" != 1 ] || what="Qt's platform plugins cannot load their system libraries"
  [ ${#tools[@]} -eq 0 ] || what="${what:+$what and }$([ "${cmd:-}" = test ] && echo "the tests need" || echo "Précis needs") ${tools[*]}"
  list=$(echo "$QT_MISSING" ${tools[@]+"${tools[@]}"} | xargs)
  echo "dev.sh: $what; install ${list:+the Debian/Ubuntu packages $list}${QT_UNMAPPED:+${list:+ and }whatever provides $QT_UNMAPPED}${list:+ (sudo apt-get install $list)}." >&2
}

install() {
  if [ ! -x "$VENV/bin/python" ]; then
    local py
    py=$(find_python) || { echo "dev.sh: Python 3.12 or newer is required (PySide6 6.12 aborts on 3.11)" >&2; exit 2; }
    "$py" -m venv "$VENV"
  fi
  local stamp="$VENV/.precis-installed" want
  want=$(sha256sum pyproject.toml | cut -d' ' -f1)
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip >/dev/null
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check -e ".[test]"
    echo "$want" > "$stamp"
  fi
  # The compiled translations (.qm) next to their .ts sources, rebuilt when a .ts changed.
  "$VENV/bin/python" packaging/build_translations.py --if-stale --quiet
  system_packages
}

checks() {
  # All run, so one report shows every problem; any failing fails the command.
  local rc=0
  "$VENV/bin/ruff" check desktop tests packaging || rc=1
  "$VENV/bin/ruff" format --check desktop tests packaging || rc=1
  "$VENV/bin/python" packaging/typecheck.py || rc=1
  if [ "$rc" != 0 ]; then
    echo "dev.sh: lint or type check failed" >&2
    exit 1
  fi
}

cmd=${1:-app}
shift || true
case "$cmd" in
  app)
    install
    exec "$VENV/bin/precis" "$@"
    ;;
  test)
    install
    checks
    export QT_QPA_PLATFORM=offscreen
    # SIGKILL guard: a hung Qt event loop can ignore SIGINT and SIGTERM; SIGKILL always stops it.
    # Two workers (one per core of the CI machine); a file's tests stay on one worker, so module fixtures and
    # the order inside a file are as in a serial run. PRECIS_TEST_WORKERS=0 runs serially.
    exec timeout -s KILL 1500 "$VENV/bin/python" -m pytest -q -p no:cacheprovider \
      -n "${PRECIS_TEST_WORKERS:-2}" --dist loadfile "$@"
    ;;
  bench)
    install
    export QT_QPA_PLATFORM=offscreen
    exec "$VENV/bin/python" -m tests.bench "$@"
    ;;
  lint)
    install
    checks
    ;;
  *)
    echo "usage: packaging/dev.sh app|test|bench|lint [ARGS]" >&2
    exit 2
    ;;
esac
