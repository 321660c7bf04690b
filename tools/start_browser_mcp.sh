#!/usr/bin/env bash
# Start the researcher's browser: Playwright's MCP server on 127.0.0.1:PORT, driving Debian's chromium headless.
#   tools/start_browser_mcp.sh [PORT]        PORT defaults to $GAIA_MAS_MCP_PORT, else 3000
# then point the tools at it: GAIA_MAS_MCP_URL=http://127.0.0.1:PORT/mcp (3000 is the default).
# Needs tools/install_system.sh (chromium, and @playwright/mcp in tools/mcp/node_modules).
# --isolated keeps each client session's browser profile in memory, so sessions share nothing.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
port="${1:-${GAIA_MAS_MCP_PORT:-3000}}"
chromium="${CHROMIUM:-$(command -v chromium || echo /usr/bin/chromium)}"
server="$here/mcp/node_modules/.bin/playwright-mcp"
[ -x "$server" ] || { echo "missing $server: run tools/install_system.sh" >&2; exit 1; }
# chromium reaches the web only through gaia_mas's browser guard (gaia_mas/gaia/tools/browser_guard.py), which refuses
# loopback, link-local and private addresses (GAIA_MAS_BROWSER_ALLOW=host[:port],... names exceptions); it runs
# beside the server, in the same process group, so it stops with it.
python="${GAIA_MAS_PYTHON:-$here/../.venv/bin/python}"
[ -x "$python" ] || python="$(command -v python3)"
guard_out="$(mktemp)"
"$python" -c 'import sys; from gaia_mas.gaia.tools.browser_guard import main; sys.exit(main())' >"$guard_out" 2>&1 &
for _ in $(seq 100); do grep -q '^http://' "$guard_out" && break; kill -0 $! 2>/dev/null || break; sleep 0.1; done
guard="$(grep -m1 '^http://' "$guard_out" || true)"
[ -n "$guard" ] || { echo "the browser guard did not start ($python):" >&2; cat "$guard_out" >&2; exit 1; }
rm -f "$guard_out"
exec "$server" --headless --browser chromium --executable-path "$chromium" --no-sandbox --isolated \
  --host 127.0.0.1 --port "$port" --allowed-hosts "127.0.0.1:$port" --proxy-server "$guard" \
  --output-dir "${TMPDIR:-/tmp}/gaia_mas-playwright-$port"
