#!/usr/bin/env bash
# Renders every dashboard page of a fresh `commitea demo` to PNG with
# headless Chromium, so a person can look at what a project manager sees.
# Not part of .ci/run: it needs Chromium (Debian: apt-get install -y
# chromium) and takes a minute.
#
#   deploy/screenshots.sh [output-dir]     (default: ./screenshots)
#
# DATABASE_URL names the PostgreSQL server as for `commitea demo`; the demo
# runs in its own database (commitea_screens) on a free port.
set -euo pipefail

out=${1:-screenshots}
mkdir -p "$out"
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$browser" ]; then
	echo "screenshots: no Chromium found (apt-get install -y chromium)" >&2
	exit 1
fi
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT

(cd "$root" && go build -o "$work/commitea" ./cmd/commitea)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$work/commitea" demo --addr "127.0.0.1:$port" --date "${DEMO_DATE:-2026-12-01}" --database commitea_screens >"$work/out" 2>"$work/err" &
pid=$!
for _ in $(seq 1 600); do
	grep -q 'Press Ctrl-C' "$work/out" && break
	kill -0 "$pid" 2>/dev/null || { cat "$work/err" >&2; exit 1; }
	sleep 0.1
done
grep -q 'Press Ctrl-C' "$work/out" || { echo "screenshots: demo not ready in 60s" >&2; exit 1; }
token=$(grep -A1 '^Token' "$work/out" | tail -1 | tr -d ' ')
base="http://127.0.0.1:$port/dashboard/acme/teapot"

shot() { # name path width height
	"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--disable-quic --no-first-run --disable-background-networking --disable-component-update --disable-sync --user-data-dir="$work/profile" --window-size="$3,$4" \
		--screenshot="$out/$1.png" "$base/$2?token=$token" >/dev/null 2>&1
	echo "$out/$1.png"
}
shot board "" 1600 1400
shot runway runway 1400 900
shot milestone-1 milestones/1 1400 1300
shot milestone-2 milestones/2 1400 1300
shot calibration calibration 1200 1100
shot directives directives 1200 500
shot standup standup 1200 500
