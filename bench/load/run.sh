#!/usr/bin/env bash
# bench/load/run.sh — server memory and cheap-call latency under a 60 s,
# 100-client mixed load, and an initialize flood, for this checkout ("after")
# and optionally an older one ("before"). See bench/load/main.go.
#
# Environment:
#   BEFORE_SRC  source tree of the "before" build (e.g. a git worktree of
#               a8c826f: git worktree add /tmp/before a8c826f); unset: only
#               this checkout
#   DURATION    mixed-load duration (default 60s)
#   CLIENTS     clients (default 100)
#   FLOOD       initialize calls of the flood (default 50000; 0 skips it)
#   BENCH_DIR   work dir (default: a fresh mktemp dir)
set -euo pipefail
die() { echo "bench/load/run.sh: $*" >&2; exit 1; }
log() { echo "bench/load/run.sh: $*" >&2; }

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DURATION=${DURATION:-60s}
CLIENTS=${CLIENTS:-100}
FLOOD=${FLOOD:-50000}
WORK=${BENCH_DIR:-$(mktemp -d /tmp/sfsloadbench.XXXXXX)}
mkdir -p "$WORK/bin"
log "work dir: $WORK"

(cd "$ROOT" && go build -o "$WORK/bin/loadbench" ./bench/load) || die "build loadbench"
(cd "$ROOT" && go build -o "$WORK/bin/serverfs-after" ./cmd/serverfs) || die "build serverfs (after)"
BUILDS="after"
if [ -n "${BEFORE_SRC:-}" ]; then
	(cd "$BEFORE_SRC" && go build -o "$WORK/bin/serverfs-before" ./cmd/serverfs) || die "build serverfs (before)"
	BUILDS="before after"
fi

# The tree: a small file, 200 small sources, and eight .zst logs of 16 MiB
# of text each, 8 MiB windows (a search decompresses them all: the heavy part
# of the mix).
TREE=$WORK/tree
if [ ! -d "$TREE" ]; then
	mkdir -p "$TREE/src" "$TREE/logs"
	printf 'small\n' >"$TREE/small.txt"
	for i in $(seq 1 200); do printf 'package p\n\nfunc F%d() int { return %d }\n' "$i" "$i" >"$TREE/src/f$i.go"; done
	command -v zstd >/dev/null || die "zstd not found"
	awk 'BEGIN { for (i = 0; i < 250000; i++) printf "2026-01-01T00:00:00Z INFO request %d served in %d ms from worker %d\n", i, i % 997, i % 13 }' |
		zstd -q -3 --long=23 -o "$TREE/logs/app.log.zst"
	for i in $(seq 1 7); do cp "$TREE/logs/app.log.zst" "$TREE/logs/app-$i.log.zst"; done
fi

for b in $BUILDS; do
	for mode in mix flood; do
		[ "$mode" = flood ] && [ "$FLOOD" = 0 ] && continue
		PORT=$((20000 + RANDOM % 20000))
		SERVERFS_LISTEN=127.0.0.1:$PORT SERVERFS_LOG_LEVEL=WARN "$WORK/bin/serverfs-$b" serve --workdir "wd=$TREE" 2>"$WORK/$b-$mode.log" &
		PID=$!
		for _ in $(seq 1 100); do
			SERVERFS_LISTEN=127.0.0.1:$PORT "$WORK/bin/serverfs-$b" healthcheck 2>/dev/null && break
			sleep 0.1
		done
		if [ "$mode" = mix ]; then
			"$WORK/bin/loadbench" -url "http://127.0.0.1:$PORT/mcp" -pid "$PID" -c "$CLIENTS" -d "$DURATION" -label "$b" | tee -a "$WORK/results.md"
		else
			"$WORK/bin/loadbench" -url "http://127.0.0.1:$PORT/mcp" -pid "$PID" -flood "$FLOOD" -label "$b" | tee -a "$WORK/results.md"
		fi
		kill "$PID"
		wait "$PID" || true
	done
done
log "results in $WORK/results.md"
