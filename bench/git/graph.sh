#!/usr/bin/env bash
# bench/git/graph.sh — read_repo_history `log -- path` (in process, bench/git's
# sfsgit) against `git log -- path` on bench/git/history.sh's generated
# history in three states: no commit-graph, a commit-graph without Bloom
# filters (git commit-graph write --reachable), and one with changed-path
# Bloom filters (--changed-paths). Each pair runs alternating (bench/alt:
# A, B, A, B, ...) so that both see the same load of a shared machine.
# Targets: <= 1.5x git with Bloom filters, <= 1.2x without.
#
# Environment: COMMITS (default 5200), RUNS (default 20), BENCH_DIR (default
# a fresh mktemp dir), LIMIT (default 100), HOTPATH (default hot/path.txt),
# REPEAT (in-process calls, default 100), OLD (another sfsgit binary to time
# in the same alternation, optional).
set -euo pipefail
die() { echo "bench/git/graph.sh: $*" >&2; exit 1; }
for tool in go git; do command -v "$tool" >/dev/null || die "'$tool' not found"; done
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
COMMITS=${COMMITS:-5200}
RUNS=${RUNS:-20}
LIMIT=${LIMIT:-100}
HOTPATH=${HOTPATH:-hot/path.txt}
REPEAT=${REPEAT:-100}
WORK=${BENCH_DIR:-$(mktemp -d /tmp/sfsgraphbench.XXXXXX)}
mkdir -p "$WORK"
BIN=$WORK/sfsgit ALT=$WORK/alt
(cd "$ROOT" && go build -o "$BIN" ./bench/git && go build -o "$ALT" ./bench/alt)
export HOME=$WORK/home GIT_CONFIG_NOSYSTEM=1
mkdir -p "$HOME"
base=$WORK/plain
if [ ! -d "$base/.git" ]; then
	echo "generating $COMMITS commits in $base" >&2
	mkdir -p "$base"
	(cd "$base" && git init -q -b main && "$BIN" gen-history "$COMMITS" | git fast-import --quiet && git checkout -q -f main && git repack -adq)
	rm -f "$base/.git/objects/info/commit-graph"
fi
for state in graph bloom; do
	if [ ! -d "$WORK/$state/.git" ]; then
		cp -a "$base" "$WORK/$state"
		flags=--reachable
		[ "$state" = bloom ] && flags="--reachable --changed-paths"
		(cd "$WORK/$state" && git commit-graph write $flags)
	fi
done
F='--format=%H%x00%P%x00%an%x00%ae%x00%at%x00%cn%x00%ce%x00%ct%x00%s%x00%b' # the fields log answers
for state in plain graph bloom; do
	repo=$WORK/$state
	g="git -C $repo -c core.commitGraph=true log -n $LIMIT --no-renames --name-status $F -- $HOTPATH"
	s="$BIN log $repo $LIMIT $HOTPATH"
	[ "$($s)" = "$LIMIT commits" ] || die "sfsgit log in $state: $($s)"
	echo "### $state: log -n $LIMIT -- $HOTPATH ($(ls "$repo/.git/objects/info" | tr '\n' ' '))"
	rows=("serverfs log limit $LIMIT paths $HOTPATH" "$s")
	[ -n "${OLD:-}" ] && rows+=("serverfs ($OLD)" "$OLD log $repo $LIMIT $HOTPATH")
	"$ALT" -runs "$RUNS" -warmup 3 "${rows[@]}" "git log -n $LIMIT --name-status -- $HOTPATH" "$g"
	# In process, as the server answers (no process start; the pack index
	# and the commit-graph cached): the CPU time (user + system) of REPEAT
	# more calls, each with the repository opened again, per call.
	TIMEFORMAT='%R %U %S'
	one=$({ time $s >/dev/null; } 2>&1)
	many=$({ time SFSGIT_REPEAT=$REPEAT $s >/dev/null; } 2>&1)
	echo "$one $many" | awk -v n="$REPEAT" '{printf "in process: %.2f ms CPU, %.2f ms wall per call (mean of %d)\n", (($5 + $6) - ($2 + $3)) * 1000 / n, ($4 - $1) * 1000 / n, n}'
	echo
done
