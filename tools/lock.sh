#!/usr/bin/env bash
# `make lock`: constraints.txt, the versions of every package the project's venv holds (`pip freeze`, gaia_mas itself
# left out). `make install` and CI install with it (`pip install -c constraints.txt -e ".[all,dev]"`), so a fresh
# install gets the versions the suite passed with, not whatever is newest that day.
#   make lock              # write the venv's versions as they are (after `make test` passed on them)
#   make lock UPGRADE=1    # first move the venv to the newest releases settings.ini allows, then write them;
#                          # then `make test`, and commit constraints.txt when it passes
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${VENV:-.venv}"; py="$venv/bin/python"
[ -x "$py" ] || { echo "no $venv here: run make install first" >&2; exit 1; }
if [ -n "${UPGRADE:-}" ]; then
  echo "upgrading $venv to the newest releases settings.ini allows (pip install --upgrade -e .[all,dev])"
  "$py" -m pip install -q --upgrade --upgrade-strategy eager -e ".[all,dev]"
  touch "$venv/.installed"
fi
out=constraints.txt; tmp="$(mktemp)"; trap 'rm -f "$tmp"' EXIT
{
  echo "# The versions the test suite passed with: pip's constraints for \`make install\` and CI"
  echo "# (pip install -c constraints.txt -e \".[all,dev]\"). Written by \`make lock\` (tools/lock.sh) from the venv's"
  echo "# pip freeze on $("$py" -c 'import platform, sys; print(f"Python {platform.python_version()}, {sys.platform}")'); do not edit by hand."
  "$py" -m pip freeze --exclude-editable --disable-pip-version-check | grep -viE '^gaia[-_]mas([ =@]|$)' | LC_ALL=C sort -f
} > "$tmp"
mv "$tmp" "$out"; trap - EXIT
echo "$out: $(grep -vc '^#' "$out") packages pinned"
