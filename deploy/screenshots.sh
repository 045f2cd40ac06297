#!/usr/bin/env bash
# Renders every dashboard page of a seeded `commitea demo` to PNG with
# headless Chromium, so a person can look at what a project manager sees:
# the pages the browser test (cmd/commitea TestBrowser) opens, each as a
# full-page picture 1280 px wide, after the test has recorded a directive
# applied and one pending, so the directives page has rows. Not part of
# .ci/run on its own (the browser test is); it needs Chromium (Debian:
# apt-get install -y chromium) and PostgreSQL as the tests do.
#
#   deploy/screenshots.sh [output-dir]     (default: ./screenshots)
#
# The pictures are named after the page's path: board.png, runway.png,
# milestones-1.png, issues-316.png, flow-by-2099-01-01.png, ...
set -euo pipefail

out=${1:-screenshots}
mkdir -p "$out"
out=$(cd "$out" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
COMMITEA_SCREENSHOTS="$out" go test ./cmd/commitea/ -run '^TestBrowser$' -count=1
ls "$out"/*.png
