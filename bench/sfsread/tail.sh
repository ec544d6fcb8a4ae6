#!/usr/bin/env bash
# bench/sfsread/tail.sh — read_text_file's tail (fs.ReadTail, in bench/sfsread)
# against `tail -n` on a 1 GiB file, alternating run by run (bench/alt), with
# the same binary opening the workdir and reading nothing: the process floor
# (Go runtime start, configuration, the workdir opened) that the tail's own
# time sits on. Then the tail's time in process (SFSREAD_REPEAT).
#
# Environment: LINES (default 50), RUNS (default 30), BENCH_DIR (default a
# fresh mktemp dir; its big.txt is reused), OLD (another sfsread binary to
# compare, optional).
set -euo pipefail
die() { echo "bench/sfsread/tail.sh: $*" >&2; exit 1; }
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
LINES=${LINES:-50}
RUNS=${RUNS:-30}
WORK=${BENCH_DIR:-$(mktemp -d /tmp/sfstailbench.XXXXXX)}
mkdir -p "$WORK"
(cd "$ROOT" && go build -o "$WORK/sfsread" ./bench/sfsread && go build -o "$WORK/alt" ./bench/alt)
BIG=$WORK/big.txt
if [ ! -f "$BIG" ]; then
	# 1 GiB: a 1 MiB block of Go source, 1,024 times.
	cat "$(go env GOROOT)"/src/net/http/*.go | head -c 1048576 >"$WORK/block"
	for _ in $(seq 1024); do cat "$WORK/block"; done >"$BIG"
fi
[ "$("$WORK/sfsread" tail "$LINES" "$BIG" | md5sum)" = "$(tail -n "$LINES" "$BIG" | md5sum)" ] || die "sfsread tail and tail -n disagree"
rows=("serverfs tail $LINES" "$WORK/sfsread tail $LINES $BIG")
[ -n "${OLD:-}" ] && rows+=("serverfs tail $LINES ($OLD)" "$OLD tail $LINES $BIG")
rows+=("serverfs floor (workdir opened, nothing read)" "$WORK/sfsread open 0 $BIG" "tail -n $LINES" "tail -n $LINES $BIG")
"$WORK/alt" -runs "$RUNS" -warmup 3 "${rows[@]}"
SFSREAD_REPEAT=2000 "$WORK/sfsread" tail "$LINES" "$BIG" >/dev/null
if [ -n "${OLD:-}" ]; then SFSREAD_REPEAT=2000 "$OLD" tail "$LINES" "$BIG" >/dev/null || true; fi
