#!/usr/bin/env bash
# reads.sh: read_repo_history's `log -- path` and read_text_file's tail
# through MCP, as an agent calls (go-sdk client over stdio, the call timed
# client-side), each alternating run by run with git or tail as a whole
# process. History: bench/git/graph.sh's generated repository (5,200
# commits) without a commit-graph, with one, and with changed-path Bloom
# filters (targets <= 1.2x, <= 1.5x git). Tail: the last 50 lines of a
# 1 GiB file (target <= 1.2x tail -n). Variables: RUNS (10), WARMUP (2),
# OLD (a serverfs binary to compare), BENCH_DIR (work dir; repositories and
# the big file are made once), COMMITS (5200), ONLY (grep -E of cell names).
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${RUNS:-10} WARMUP=${WARMUP:-2} COMMITS=${COMMITS:-5200}
WORK=${BENCH_DIR:-$(mktemp -d /tmp/sfsreads.XXXXXX)}
mkdir -p "$WORK/bin" "$WORK/home"
go build -o "$WORK/bin/serverfs" ./cmd/serverfs
go build -o "$WORK/bin/mcpalt" ./bench/mcpalt
go build -o "$WORK/bin/sfsgit" ./bench/git
export HOME=$WORK/home GIT_CONFIG_NOSYSTEM=1
if [ ! -d "$WORK/plain/.git" ]; then
	mkdir -p "$WORK/plain"
	(cd "$WORK/plain" && git init -q -b main && "$WORK/bin/sfsgit" gen-history "$COMMITS" | git fast-import --quiet && git checkout -q -f main && git repack -adq)
	rm -f "$WORK/plain/.git/objects/info/commit-graph"
fi
for state in graph bloom; do
	if [ ! -d "$WORK/$state/.git" ]; then
		cp -a "$WORK/plain" "$WORK/$state"
		flags=--reachable
		[ "$state" = bloom ] && flags="--reachable --changed-paths"
		(cd "$WORK/$state" && git commit-graph write $flags)
	fi
done
if [ ! -f "$WORK/big/big.txt" ]; then
	mkdir -p "$WORK/big"
	cat "$(go env GOROOT)"/src/net/http/*.go | head -c 1048576 >"$WORK/block" || true
	for _ in $(seq 1024); do cat "$WORK/block"; done >"$WORK/big/big.txt"
fi
cell() { # name binary workdir tool args expect -- anchor...
	local name=$1 bin=$2 wd=$3 tool=$4 args=$5 expect=$6
	shift 6
	if [ -n "${ONLY:-}" ] && ! grep -qE "$ONLY" <<<"$name"; then return; fi
	"$WORK/bin/mcpalt" -runs "$RUNS" -warmup "$WARMUP" -name "$name" -tool "$tool" -args "$args" -expect "$expect" \
		-server "$bin serve --stdio --workdir wd=$wd" "$@" | tail -2
}
F='--format=%H%x00%P%x00%an%x00%ae%x00%at%x00%cn%x00%ce%x00%ct%x00%s%x00%b' # the fields log answers
log='{"workdir":"wd","view":"log","limit":100,"files":true,"paths":["hot/path.txt"]}'
tail='{"workdir":"wd","path":"big.txt","tail":50}'
last=$(tail -n 1 "$WORK/big/big.txt")
echo "| cell | runs | mean wall [ms] | median [ms] | wall ratio (mean / median) | CPU [ms] | CPU ratio |"
echo "|---|--:|--:|--:|--:|--:|--:|"
for b in ${OLD:+$OLD} "$WORK/bin/serverfs"; do
	n=$(basename "$(dirname "$b")")/$(basename "$b")
	for state in plain graph bloom; do
		cell "$n log -- path, $state" "$b" "$WORK/$state:ro:repo" read_repo_history "$log" "hot/path.txt" -- \
			git -C "$WORK/$state" -c core.commitGraph=true log -n 100 --no-renames --name-status "$F" -- hot/path.txt
	done
	cell "$n tail 50 of 1 GiB" "$b" "$WORK/big" read_text_file "$tail" "$last" -- tail -n 50 "$WORK/big/big.txt"
done
