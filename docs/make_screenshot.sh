#!/usr/bin/env bash
# Makes the README's screenshot: the window on the built-in demo, rendered offscreen.
#   docs/make_screenshot.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
QT_QPA_PLATFORM=offscreen "$build/kcx" open --screenshot docs/images/kcx-demo.png --size 1600x1000
echo "wrote docs/images/kcx-demo.png"
