#!/usr/bin/env bash
# bench/archive/run.sh — search_text inside a tar.gz of logs against what a
# person without ServerFS runs: `tar -xzOf F | rg -F WORD` (the members'
# bytes decompressed by tar's gzip, searched by ripgrep). Both count the
# matching lines of every member; ours also names each member and line.
# Prints a markdown table: median wall time of RUNS runs each, side by
# side, and the ratio ours/anchor.
#
# Environment:
#   BENCH_DIR  work dir (default: a fresh mktemp dir; the archive is reused)
#   SIZE       the tar.gz's size in bytes (default 1073741824: 1 GiB)
#   RUNS       runs per command (default 3)
#   WORDS      words searched (default "ZEBRA_QUOKKA_42 ERROR")
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=${BENCH_DIR:-$(mktemp -d /tmp/sfsarchive.XXXXXX)}
SIZE=${SIZE:-1073741824}
RUNS=${RUNS:-3}
for tool in rg tar gzip; do
	command -v "$tool" >/dev/null || { echo "bench/archive/run.sh needs $tool" >&2; exit 1; }
done
mkdir -p "$WORK/bin" "$WORK/d-$SIZE"
(cd "$ROOT" && go build -o "$WORK/bin/sfsgrep" ./bench/sfsgrep && go build -o "$WORK/bin/archivelogs" ./bench/archive)
ARC="$WORK/d-$SIZE/logs.tar.gz"
[ -f "$ARC" ] || "$WORK/bin/archivelogs" -size "$SIZE" "$ARC"
echo "bench/archive/run.sh: $ARC, $(stat -c %s "$ARC") bytes, $(tar -tzf "$ARC" | wc -l) members" >&2

# median of RUNS wall times (seconds) of a command line run by bash.
median() {
	local times=()
	for _ in $(seq "$RUNS"); do
		local s e
		s=$(date +%s%N)
		bash -c "$1" >/dev/null
		e=$(date +%s%N)
		times+=("$(( (e - s) / 1000000 ))")
	done
	printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)]/1000}'
}

echo "| word | matching lines (ours / rg) | ours s | tar -xzOf \| rg s | ratio |"
echo "|---|--:|--:|--:|--:|"
for w in ${WORDS:-ZEBRA_QUOKKA_42 ERROR}; do
	ours_n=$("$WORK/bin/sfsgrep" -z "$w" "$WORK/d-$SIZE" | wc -l)
	rg_n=$(tar -xzOf "$ARC" | rg -F -c "$w" || true)
	ours=$(median "'$WORK/bin/sfsgrep' -z '$w' '$WORK/d-$SIZE'")
	anchor=$(median "tar -xzOf '$ARC' | rg -F -n '$w'")
	echo "| $w | $ours_n / $rg_n | $ours | $anchor | $(awk -v a="$ours" -v b="$anchor" 'BEGIN {printf "%.2f", a/b}') |"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); nproc $(nproc)"
