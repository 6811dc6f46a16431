#!/usr/bin/env bash
# Memory check of the compiled masking core: build piilab/_fastmask.c with
# AddressSanitizer and UndefinedBehaviorSanitizer (gcc) in a scratch copy of the
# committed tree, then run the masking tests against that build, with Python's
# allocator switched to malloc so the sanitizer sees every buffer.
#
#   bash tools/asan_check.sh            (or: make asan)
#
# Not part of `make test`: it needs gcc's sanitizer runtimes and is slower.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
PY=${PY:-$REPO/.venv/bin/python}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

git -C "$REPO" archive HEAD | tar -x -C "$WORK"
cp "$REPO/piilab/_fastmask.c" "$WORK/piilab/_fastmask.c"  # (uncommitted edits too)
INCLUDE=$("$PY" -c "import sysconfig; print(sysconfig.get_paths()['include'])")
SUFFIX=$("$PY" -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
gcc -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined \
    -fno-omit-frame-pointer -fPIC -shared -I"$INCLUDE" \
    "$WORK/piilab/_fastmask.c" -o "$WORK/piilab/_fastmask$SUFFIX"

cd "$WORK"  # so that `import piilab` finds the scratch copy first
# -s: a sanitizer report is printed as it happens instead of being lost with
# pytest's captured output when the process aborts.
LD_PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)" \
ASAN_OPTIONS=detect_leaks=0 PYTHONMALLOC=malloc PIILAB_REQUIRE_COMPILED=1 \
    "$PY" -m pytest -q -s -p no:cacheprovider -k "not python]" \
    tests/test_fastmask.py tests/test_tokenization.py tests/test_tokenization_properties.py \
    tests/test_cli_masking.py
echo "asan_check: no sanitizer report"
