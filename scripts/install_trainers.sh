#!/usr/bin/env bash
# The trainers' own packages, for the tests that drive their reward-calling code against ours (tests/integrations).
# They go into folders of their own under .cache/trainers/ (git-ignored), not into the virtualenv: verl and OpenRLHF
# ship top-level `tests`/`scripts` packages, their GPU stacks are not needed to load a reward, and verl's omegaconf
# and verifiers' math-verify pin different antlr4 runtimes. tests/integrations puts each folder on sys.path itself.
#   rl/         verl 0.9.1 and OpenRLHF 0.11.2 with --no-deps, plus the few pure packages their reward paths import
#   verifiers/  verifiers 0.4.0 with its dependencies (no torch among them), used from a subprocess
# Idempotent: a folder whose stamp matches its install line is left alone.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
ROOT=.cache/trainers
PIP="$VENV/bin/python -m pip --disable-pip-version-check -q"

install() {  # folder, then pip arguments; the stamp is the arguments' hash
  local dir="$ROOT/$1"; shift
  local want; want=$(echo "$*" | sha256sum | cut -c1-16)
  if [ -f "$dir/.stamp" ] && [ "$(cat "$dir/.stamp")" = "$want" ]; then return 0; fi
  rm -rf "$dir"
  $PIP install --target "$dir" "$@"
  echo "$want" > "$dir/.stamp"
}

install rl --no-deps verl==0.9.1 openrlhf==0.11.2 tensordict==0.10.0 pyvers==0.2.3 omegaconf==2.3.0 \
  antlr4-python3-runtime==4.9.3 pylatexenc==2.10 codetiming==1.4.0 orjson==3.11.5
install verifiers verifiers==0.4.0
