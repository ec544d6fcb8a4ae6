#!/usr/bin/env bash
# bench/mcp/ab.sh — compare the server CPU per call of several serverfs
# binaries over streamable HTTP or stdio, alternating their cells so that
# all see the same load. One line per binary and run, then each binary's
# mean.
#
# usage: bench/mcp/ab.sh RUNS PROTOCOL CLIENTS BINARY...
#   e.g. bench/mcp/ab.sh 10 2025-11-25 1 /tmp/serverfs-old /tmp/serverfs-new
#   PROTOCOL 2025-11-25: the session lane; 2026-07-28: the stateless lane;
#   stdio: serve --stdio (a fresh process per cell, CLIENTS calls in flight
#   on its one session), each run's binaries followed by the npm reference
#   server (bench/mcp/npm, stat_file <-> get_file_info) on the same file,
#   and per binary the mean of its per-run ratios to the reference.
#
# Environment:
#   TREE      directory served as workdir wd (default: a fresh one holding
#             the 4 KiB file f4k.txt the HTTP calls use and run.sh's 4 KiB
#             small.txt, 64 lines, the stdio calls use)
#   PORT0     first port on 127.0.0.1 (default 31900; one per binary)
#   DURATION  measured time per cell (default 3s); WARMUP (default 1s)
#   TOOL      stat_file (default) or read_text_file
#   EXTRA     more mcpbench flags, e.g. -no-sse (no standalone GET stream)
#   NODE      node binary for the reference server (stdio; default node)
#   STDIO_PROTOCOL  protocol version the client asks both stdio servers for
#             (default 2025-11-25, the newest the reference speaks, so both
#             serve the same protocol; "newest": go-sdk's 2026-07-28, which
#             ServerFS accepts, the reference answers with 2025-11-25, and on
#             which go-sdk decodes each request's _meta triple again, 60-100
#             µs more a call: bench/mcp/INVESTIGATION.md)
#
# Output columns: binary, run, server CPU µs/call, calls/s, load average.
# Compare means of alternating runs only; a single cell varies by ±10 µs.
set -euo pipefail
[ $# -ge 4 ] || { echo "usage: $0 RUNS PROTOCOL CLIENTS BINARY..." >&2; exit 2; }
RUNS=$1 PROTO=$2 C=$3
shift 3
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d /tmp/sfsab.XXXXXX)
TREE=${TREE:-$WORK/tree}
if [ ! -d "$TREE" ]; then
	mkdir -p "$TREE"
	head -c 4096 /dev/zero | tr '\0' 'a' >"$TREE/f4k.txt"
	# run.sh's small.txt (stdio): 64 lines of 64 bytes
	for i in $(seq 1 64); do
		printf 'line %02d: %-54s\n' "$i" "the quick brown fox jumps over the lazy dog 0123456789"
	done >"$TREE/small.txt"
fi
(cd "$ROOT" && go build -o "$WORK/mcpbench" ./bench/mcp)
if [ "$PROTO" = stdio ]; then
	NPMDIR=$ROOT/bench/mcp/npm
	REF_JS=$NPMDIR/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js
	[ -f "$REF_JS" ] || npm ci --prefix "$NPMDIR" --no-audit --no-fund >&2
	TREE=$(cd "$TREE" && pwd -P) # the reference server resolves symlinks
	# As run.sh: the size in a stat, the last line in a read (none cut off).
	case ${TOOL:-stat_file} in stat_file) EXPECT=4096 ;; *) EXPECT='line 64:' ;; esac
	# stdio_cell NAME ARGS...: one cell, one line.
	stdio_cell() {
		local name=$1 out
		shift
		# shellcheck disable=SC2086 # EXTRA is a list of flags
		out=$("$WORK/mcpbench" -mode stdio -tool "${TOOL:-stat_file}" -file small.txt -c "$C" -d "${DURATION:-3s}" \
			-warmup "${WARMUP:-1s}" -expect "$EXPECT" -protocol "${STDIO_PROTOCOL:-2025-11-25}" ${EXTRA:-} "$@" 2>&1 | tail -n 1)
		printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$r" "$(cut -f7 <<<"$out")" "$(cut -f1 <<<"$out")" "$(cut -d' ' -f1-3 /proc/loadavg)"
	}
	for r in $(seq "$RUNS"); do
		for b in "$@"; do
			stdio_cell "$b" -server serverfs -workdir wd -- "$b" serve --stdio --workdir wd="$TREE"
		done
		stdio_cell reference -server reference -dir "$TREE" -- "${NODE:-node}" "$REF_JS" "$TREE"
	done | tee "$WORK/runs.tsv"
	awk -F'\t' '
		{ s[$1]+=$3; n[$1]++; cpu[$1, $2]=$3; if (!($1 in seen)) { seen[$1]=1; order[++k]=$1 } }
		END {
			for (i=1; i<=k; i++) {
				b=order[i]; rs=0; nr=0
				for (r=1; r<=n[b]; r++) if (cpu["reference", r]+0 > 0) { rs+=cpu[b, r]/cpu["reference", r]; nr++ }
				printf "mean\t%s\t%.1f µs/call\t(%d runs)", b, s[b]/n[b], n[b]
				if (b!="reference" && nr>0) printf "\t%.2f× the reference", rs/nr
				printf "\n"
			}
		}' "$WORK/runs.tsv"
	exit 0
fi
PIDS=()
stop() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap stop EXIT
port=${PORT0:-31900}
PORTS=()
for b in "$@"; do
	SERVERFS_LISTEN=127.0.0.1:$port "$b" serve --workdir wd="$TREE" 2>/dev/null &
	PIDS+=($!)
	PORTS+=("$port")
	port=$((port + 1))
done
for j in "${!PORTS[@]}"; do
	for _ in $(seq 100); do
		SERVERFS_LISTEN=127.0.0.1:${PORTS[$j]} "${@:$((j + 1)):1}" healthcheck 2>/dev/null && break
		sleep 0.1
	done
done
for r in $(seq "$RUNS"); do
	j=0
	for b in "$@"; do
		# shellcheck disable=SC2086 # EXTRA is a list of flags
		out=$("$WORK/mcpbench" -mode http -url "http://127.0.0.1:${PORTS[$j]}/mcp" -protocol "$PROTO" \
			-tool "${TOOL:-stat_file}" -workdir wd -file f4k.txt -c "$C" -d "${DURATION:-3s}" -warmup "${WARMUP:-1s}" \
			-server-pid "${PIDS[$j]}" ${EXTRA:-} 2>&1 | tail -n 1)
		printf '%s\t%s\t%s\t%s\t%s\n' "$b" "$r" "$(cut -f7 <<<"$out")" "$(cut -f1 <<<"$out")" "$(cut -d' ' -f1-3 /proc/loadavg)"
		j=$((j + 1))
	done
done | tee "$WORK/runs.tsv"
awk -F'\t' '{s[$1]+=$3; n[$1]++} END {for (k in s) printf "mean\t%s\t%.1f µs/call\t(%d runs)\n", k, s[k]/n[k], n[k]}' "$WORK/runs.tsv"
