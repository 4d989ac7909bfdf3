#!/usr/bin/env bash
# The one-folder bundle: dist/precis/ with `precis` (CLI) and `precis-gui` (window) sharing _internal/.
#   bash packaging/build.sh          build (PyInstaller 6.x from the `bundle` extra, installed into .venv)
#   bash packaging/build.sh --smoke  build, then packaging/smoke_bundle.py (offscreen, a chat against the test server)
# Run by the benchmarks (tests/bench/bench_bundle.py), not by CI: a build takes minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
VENV="$ROOT/.venv"
[ -x "$VENV/bin/python" ] || bash packaging/dev.sh lint >/dev/null  # creates and fills .venv
"$VENV/bin/python" -m pip install -q --disable-pip-version-check -e ".[bundle]"
# The bundle carries the .qm files: build them first when the translation step exists.
if [ -f packaging/build_translations.py ]; then
  "$VENV/bin/python" packaging/build_translations.py --if-stale --quiet
fi
"$VENV/bin/pyinstaller" --noconfirm --clean --log-level WARN \
  --distpath "$ROOT/dist" --workpath "$ROOT/build/pyinstaller" packaging/precis.spec
echo "build.sh: dist/precis ($(du -sh dist/precis | cut -f1))" >&2
if [ "${1:-}" = --smoke ]; then
  exec "$VENV/bin/python" packaging/smoke_bundle.py dist/precis
fi
