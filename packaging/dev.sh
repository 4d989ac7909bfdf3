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

system_packages() {
  # Qt needs a few shared libraries even offscreen; install them on Debian/Ubuntu when missing and we may.
  if "$VENV/bin/python" -c 'from PySide6.QtWidgets import QApplication' >/dev/null 2>&1; then
    return 0
  fi
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "dev.sh: installing system libraries for Qt" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      libegl1 libgl1 libglx0 libfontconfig1 libfreetype6 libdbus-1-3 libglib2.0-0 libxkbcommon0 \
      libxkbcommon-x11-0 libx11-xcb1 libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-image0 \
      libxcb-render-util0 libxcb-shape0 libxcb-randr0 libxcb-xkb1 fonts-dejavu-core >/dev/null
  else
    echo "dev.sh: Qt cannot load; install your distribution's Qt 6 runtime libraries (libEGL, libxkbcommon, fontconfig)" >&2
  fi
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
  system_packages
}

checks() {
  # Both always run, so one report shows every problem; either failing fails the command.
  local rc=0
  "$VENV/bin/ruff" check desktop tests || rc=1
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
    exec timeout -s KILL 1500 "$VENV/bin/python" -m pytest -q -p no:cacheprovider "$@"
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
