#!/usr/bin/env bash
# count.sh: a whole-tree count (and files list) of a frequent word through
# MCP, as an agent calls (go-sdk client over stdio, the call timed
# client-side), alternating with rg as a whole process. Variables: RUNS (5),
# WARMUP (1), WORD (func), OLD (a serverfs binary to compare, e.g. the
# branch point's), BENCH_DIR (a work dir; GOROOT/src is copied there once).
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${RUNS:-5} WARMUP=${WARMUP:-1} WORD=${WORD:-func}
WORK=${BENCH_DIR:-$(mktemp -d /tmp/sfscount.XXXXXX)}
mkdir -p "$WORK/bin"
[ -d "$WORK/goroot" ] || cp -r "$(go env GOROOT)/src" "$WORK/goroot"
go build -o "$WORK/bin/serverfs" ./cmd/serverfs
go build -o "$WORK/bin/mcpalt" ./bench/mcpalt
echo "rg -c $WORD: $(rg -c "$WORD" "$WORK/goroot" | wc -l) files"
cell() { # name binary args [mcpalt flags...] -- anchor...
	local name=$1 bin=$2 args=$3
	shift 3
	"$WORK/bin/mcpalt" -runs "$RUNS" -warmup "$WARMUP" -name "$name" -args "$args" \
		-server "$bin serve --stdio --workdir wd=$WORK/goroot" "$@" | tail -2
}
count='{"workdir":"wd","query":"'$WORD'","output":"count","limit":100}'
files='{"workdir":"wd","query":"'$WORD'","output":"files","limit":100}'
for b in ${OLD:+$OLD} "$WORK/bin/serverfs"; do
	cell "$b: count, limit 100, one call" "$b" "$count" -- rg -c "$WORD" "$WORK/goroot"
	cell "$b: files, limit 100, one call" "$b" "$files" -- rg -l "$WORD" "$WORK/goroot"
	[ -n "${PAGES:-}" ] && cell "$b: count, limit 100, every page" "$b" "$count" -page -- rg -c "$WORD" "$WORK/goroot"
done
