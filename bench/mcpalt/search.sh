#!/usr/bin/env bash
# search.sh: every search cell of the speed table through MCP, as an agent
# calls (go-sdk client over stdio, the call timed client-side), each
# alternating run by run with its anchor as a whole process: literal words
# (rare and absent, both cases) over a GOROOT/src copy and over one 256 MiB
# file, regexes with and without a literal (count, full scan), ChatGPT's
# search of four terms against rg -l -i with four -e, and find_files of an
# absent name against find. Variables: RUNS (5), WARMUP (1), OLD (a
# serverfs binary to compare), BENCH_DIR (work dir, corpora made once),
# ONLY (a grep -E pattern of cell names to run).
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${RUNS:-5} WARMUP=${WARMUP:-1}
WORK=${BENCH_DIR:-$(mktemp -d /tmp/sfssearch.XXXXXX)}
mkdir -p "$WORK/bin"
[ -d "$WORK/goroot" ] || cp -r "$(go env GOROOT)/src" "$WORK/goroot"
if [ ! -f "$WORK/big/big.txt" ]; then
	# 256 MiB: a 1 MiB block of Go source repeated, a rare word in 5 copies.
	mkdir -p "$WORK/big"
	set +o pipefail # head ends the writers early
	find "$WORK/goroot" -name '*.go' ! -name '*_test.go' | sort | awk 'NR%7==0' | xargs cat | head -c 1048576 >"$WORK/block"
	for i in $(seq 1 256); do
		cat "$WORK/block"
		case $i in 17 | 64 | 128 | 200 | 255) echo "ZEBRA_QUOKKA_42 here" ;; esac
	done | head -c 268435456 >"$WORK/big/big.txt"
	set -o pipefail
fi
go build -o "$WORK/bin/serverfs" ./cmd/serverfs
go build -o "$WORK/bin/mcpalt" ./bench/mcpalt
G=$WORK/goroot B=$WORK/big
# The 256 MiB file is past the default per-file cap of search (50 MiB).
export SERVERFS_SEARCH_MAX_FILE_BYTES=$((512 << 20))
cell() { # name binary tree tool args -- anchor...
	local name=$1 bin=$2 tree=$3 tool=$4 args=$5
	shift 5
	if [ -n "${ONLY:-}" ] && ! grep -qE "$ONLY" <<<"$name"; then return; fi
	"$WORK/bin/mcpalt" -runs "$RUNS" -warmup "$WARMUP" -name "$name" -tool "$tool" -args "$args" \
		-server "$bin serve --stdio --search-fetch --workdir wd=$tree" "$@" | tail -2
}
st() { echo '{"workdir":"wd","query":"'"$1"'"'"${2:+,$2}"'}'; }
echo "| cell | runs | mean wall [ms] | median [ms] | wall ratio (mean / median) | CPU [ms] | CPU ratio |"
echo "|---|--:|--:|--:|--:|--:|--:|"
for b in ${OLD:+$OLD} "$WORK/bin/serverfs"; do
	n=$(basename "$(dirname "$b")")/$(basename "$b")
	for t in G B; do
		tree=${!t}
		cell "$n $t literal rare" "$b" "$tree" search_text "$(st Kelvin '"case_sensitive":true')" -- rg -F -n --no-heading Kelvin "$tree"
		cell "$n $t literal rare -i" "$b" "$tree" search_text "$(st Kelvin)" -- rg -F -n -i --no-heading Kelvin "$tree"
		cell "$n $t literal absent" "$b" "$tree" search_text "$(st ZEBRA_QUOKKA_NOPE '"case_sensitive":true')" -- rg -F -n --no-heading ZEBRA_QUOKKA_NOPE "$tree"
		cell "$n $t literal absent -i" "$b" "$tree" search_text "$(st ZEBRA_QUOKKA_NOPE)" -- rg -F -n -i --no-heading ZEBRA_QUOKKA_NOPE "$tree"
	done
	for t in G B; do
		tree=${!t}
		cell "$n $t regex func \\w+Dial" "$b" "$tree" search_text "$(st 'func \\w+Dial' '"regex":true,"case_sensitive":true,"output":"count"')" -- rg -c -e 'func \w+Dial' "$tree"
		cell "$n $t regex Err[A-Z]\\w*EOF" "$b" "$tree" search_text "$(st 'Err[A-Z]\\w*EOF' '"regex":true,"case_sensitive":true,"output":"count"')" -- rg -c -e 'Err[A-Z]\w*EOF' "$tree"
		cell "$n $t regex (?i)unexpected eof" "$b" "$tree" search_text "$(st '(?i)unexpected eof' '"regex":true,"case_sensitive":true,"output":"count"')" -- rg -c -e '(?i)unexpected eof' "$tree"
		cell "$n $t regex no literal [0-9]{4}-[0-9]{2}" "$b" "$tree" search_text "$(st '[0-9]{4}-[0-9]{2}' '"regex":true,"case_sensitive":true,"output":"count"')" -- rg -c -e '[0-9]{4}-[0-9]{2}' "$tree"
	done
	cell "$n G chatgpt search frequent" "$b" "$G" search '{"query":"func return error string"}' -- rg -l -i -e func -e return -e error -e string "$G"
	cell "$n G chatgpt search rare" "$b" "$G" search '{"query":"kelvin quokka deadline exceeded"}' -- rg -l -i -e kelvin -e quokka -e deadline -e exceeded "$G"
	cell "$n G find_files absent" "$b" "$G" find_files '{"workdir":"wd","pattern":"zebra_quokka*.go"}' -- find "$G" -name 'zebra_quokka*.go'
done
