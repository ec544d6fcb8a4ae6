#!/usr/bin/env bash
# bench/fair/run.sh — does one client looping the heaviest accepted search
# starve another client's heavy calls? Serves the released binary
# (go build ./cmd/serverfs) with its defaults on loopback and runs
# fairbench (bench/fair/main.go) on both HTTP lanes: client A loops a
# search_text of a ~1,000-instruction regular expression without a
# required literal over four 16 MiB files of 256 KiB lines, client B loops
# find_files over a workdir of 4 files.
#
# Environment:
#   BENCH_DIR  work dir (default: a fresh mktemp dir; the tree is reused)
#   DURATION   measured time per cell (default 30s)
#   A_CALLS    client A's searches in flight, a list (default "1 4")
#   LANES      default "session stateless"
#   PATTERN    client A's pattern (default: fairbench's)
#   PORT       default 31950
#   SERVER_BIN  a serverfs binary to measure instead of this checkout's
#   SERVERFS_* passed to the server (e.g. SERVERFS_SEARCH_TIMEOUT_SECONDS)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=${BENCH_DIR:-$(mktemp -d /tmp/sfsfair.XXXXXX)}
PORT=${PORT:-31950}
mkdir -p "$WORK/bin"
echo "bench/fair/run.sh: work dir $WORK" >&2
(cd "$ROOT" && go build -o "$WORK/bin/fairbench" ./bench/fair)
BIN=${SERVER_BIN:-$WORK/bin/serverfs}
[ -n "${SERVER_BIN:-}" ] || (cd "$ROOT" && go build -o "$BIN" ./cmd/serverfs)

if [ ! -d "$WORK/big" ]; then
	mkdir -p "$WORK/big" "$WORK/small"
	# 64 lines of 256 KiB (262,143 bytes of "abc def ..." and a newline).
	line=$(head -c 262143 < <(yes 'abc def' | tr '\n' ' '))
	for i in 1 2 3 4; do
		for _ in $(seq 64); do printf '%s\n' "$line"; done >"$WORK/big/f$i.txt"
		printf 'small %d\n' "$i" >"$WORK/small/s$i.txt"
	done
fi

SERVERFS_LISTEN=127.0.0.1:$PORT "$BIN" serve --workdir big="$WORK/big" --workdir small="$WORK/small" 2>"$WORK/server.log" &
PID=$!
trap 'kill $PID 2>/dev/null || true; wait $PID 2>/dev/null || true' EXIT
for _ in $(seq 150); do
	SERVERFS_LISTEN=127.0.0.1:$PORT "$BIN" healthcheck 2>/dev/null && break
	sleep 0.1
done

echo "| lane | client | calls | SERVER_BUSY | other errors | searches at timeout | p50 ms | p99 ms | max ms |"
echo "|---|---|--:|--:|--:|--:|--:|--:|--:|"
for a in ${A_CALLS:-1 4}; do
	for lane in ${LANES:-session stateless}; do
		"$WORK/bin/fairbench" -url "http://127.0.0.1:$PORT/mcp" -lane "$lane" -a "$a" -d "${DURATION:-30s}" \
			${PATTERN:+-pattern "$PATTERN"}
	done
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); nproc $(nproc)"
