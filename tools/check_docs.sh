#!/usr/bin/env bash
# Check that the docs process: nbdev_proc_nbs turns every notebook into _proc/ without an error.
# That is what `nbdev_docs` does before it hands _proc/ to Quarto. Quarto itself cannot be installed
# everywhere (not on CI), and nbdev_proc_nbs would try to download it, so a no-op `quarto` goes first
# on PATH, and the grouped nbs/sidebar.yml must survive it. Fails if nbdev_proc_nbs exits non-zero or prints a traceback, an error, or nbdev's warning about a cell
# that mixes imports with other code (such a cell is run out of context by the docs processing).
set -euo pipefail
cd "$(dirname "$0")/.."
fake="$(mktemp -d)"; log="$fake/proc.log"
trap 'rm -rf "$fake"' EXIT
printf '#!/bin/sh\nexit 0\n' > "$fake/quarto"; chmod +x "$fake/quarto"
status=0
# Not --force: nbdev forwards it to nbdev_sidebar, which would overwrite our grouped nbs/sidebar.yml.
# Removing _proc/ has the same effect on the cache.
rm -rf _proc
PATH="$fake:$PATH" OPIK_TRACK_DISABLE=true nbdev_proc_nbs >"$log" 2>&1 || status=$?
cat "$log"
if [ "$status" -ne 0 ] || grep -Eq 'Traceback|Error in notebook|Exception:|Found cells containing imports' "$log"; then
  echo "FAIL: the docs do not process cleanly (nbdev_proc_nbs exit $status); see above"
  exit 1
fi
git diff --quiet -- nbs/sidebar.yml 2>/dev/null || { echo "FAIL: the docs processing rewrote nbs/sidebar.yml"; exit 1; }
for f in _proc/sidebar.yml _proc/_quarto.yml _proc/index.ipynb; do
  [ -e "$f" ] || { echo "FAIL: $f is missing after nbdev_proc_nbs"; exit 1; }
done
echo "docs check passed: $(find _proc -name "*.ipynb" | wc -l) notebooks processed into _proc/"
