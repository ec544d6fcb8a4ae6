#!/usr/bin/env bash
# bench/mcp/run.sh — MCP tool-call throughput and latency of ServerFS over
# streamable HTTP and stdio, and of the npm reference server
# @modelcontextprotocol/server-filesystem over stdio. Prints markdown tables
# and saves them to $WORK/results.md. See bench/mcp/README.md.
#
# Environment:
#   BENCH_DIR   work dir (default: a fresh mktemp dir under /tmp)
#   DURATION    measured time per cell (default 5s)
#   WARMUP      warmup per cell, calls made but not counted (default 1s)
#   CLIENTS     concurrency levels (default "1 64")
#   LANES       HTTP protocol lanes (default "session stateless": go-sdk's
#               client forced to 2025-11-25, initialize and a session, and
#               to 2026-07-28, stateless requests)
#   PORT        HTTP port on 127.0.0.1 (default: a free one)
#   NODE        node binary for the reference server (default: node)
#   SERVERFS_LOG_LEVEL  passed to serverfs (default INFO, as in production:
#               one log line per call, written to $WORK/logs)
#   TRANSPORTS  which transports to measure (default "http stdio")
#   RUNS        repeat the whole matrix RUNS times (default 1); with 2 or
#               more, a summary table gives per cell the median server CPU
#               per call and its spread, and for stdio the ServerFS /
#               reference CPU ratio of each run (each ServerFS cell runs
#               right before its reference cell, so both see the same load)
#   STDIO_PROTOCOL  protocol version the client asks both stdio servers for
#               (default 2025-11-25, the newest the reference speaks, so both
#               serve the same protocol; "newest": go-sdk's 2026-07-28, as in
#               bench/mcp/ab.sh)
#   PROFILE     1: build serverfs with -tags benchprofile and write a CPU
#               profile of each ServerFS cell's measured window to
#               $WORK/prof/{http-LANE,stdio}-TOOL-cC.pprof (profiling costs a
#               few percent of CPU: take CPU per call from runs without it)
set -euo pipefail

die() { echo "bench/mcp/run.sh: $*" >&2; exit 1; }
log() { echo "bench/mcp/run.sh: $*" >&2; }

NODE=${NODE:-node}
for tool in go "$NODE" npm awk; do
	command -v "$tool" >/dev/null 2>&1 || die "'$tool' not found on PATH"
done

SCRIPT_DIR=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$SCRIPT_DIR/../.." && pwd)
[ -f "$ROOT/go.mod" ] && [ -d "$ROOT/cmd/serverfs" ] || die "cannot find the repo root (expected $ROOT/go.mod and $ROOT/cmd/serverfs)"
NPMDIR=$SCRIPT_DIR/npm
REF_JS=$NPMDIR/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js

DURATION=${DURATION:-5s}
WARMUP=${WARMUP:-1s}
CLIENTS=${CLIENTS:-1 64}
LANES=${LANES:-session stateless}
TRANSPORTS=${TRANSPORTS:-http stdio}
PROFILE=${PROFILE:-}
STDIO_PROTOCOL=${STDIO_PROTOCOL:-2025-11-25}
[ "$PROFILE" = 1 ] || PROFILE=
RUNS=${RUNS:-1}
case $RUNS in '' | *[!0-9]* | 0) die "RUNS must be a positive integer" ;; esac
RUN=1
export SERVERFS_LOG_LEVEL=${SERVERFS_LOG_LEVEL:-INFO}

if [ -n "${BENCH_DIR:-}" ]; then
	mkdir -p "$BENCH_DIR"
	WORK=$(cd "$BENCH_DIR" && pwd)
else
	WORK=$(mktemp -d /tmp/sfsmcpbench.XXXXXX)
fi
BIN=$WORK/bin
TREE=$WORK/tree
LOGS=$WORK/logs
mkdir -p "$BIN" "$LOGS"
log "work dir: $WORK"

# --- 1. build -----------------------------------------------------------------
log "building serverfs and mcpbench"
TAGS=
if [ -n "$PROFILE" ]; then
	TAGS=benchprofile
	mkdir -p "$WORK/prof"
fi
(cd "$ROOT" && go build -tags "$TAGS" -o "$BIN/serverfs" ./cmd/serverfs) || die "go build ./cmd/serverfs failed"
(cd "$ROOT" && go build -o "$BIN/mcpbench" ./bench/mcp) || die "go build ./bench/mcp failed"

# --- 2. the reference server ----------------------------------------------------
if [ ! -f "$REF_JS" ]; then
	log "installing the reference server into $NPMDIR/node_modules"
	if [ -f "$NPMDIR/package-lock.json" ]; then
		npm ci --prefix "$NPMDIR" --no-audit --no-fund >&2 || die "npm ci failed"
	else
		npm install --prefix "$NPMDIR" --no-audit --no-fund >&2 || die "npm install failed"
	fi
fi
[ -f "$REF_JS" ] || die "no $REF_JS after npm install"
REF_VERSION=$("$NODE" -p "require('$NPMDIR/node_modules/@modelcontextprotocol/server-filesystem/package.json').version")

# --- 3. the file tree -----------------------------------------------------------
# small.txt is exactly 4096 bytes: 64 lines of 64 bytes; the last line starts
# with "line 64:", which every read_text_file result must contain (so a
# truncated read counts as an error). Every stat result must contain "4096".
rm -rf "$TREE"
mkdir -p "$TREE/src/pkg" "$TREE/docs" "$TREE/logs"
for i in $(seq 1 64); do
	printf 'line %02d: %-54s\n' "$i" "the quick brown fox jumps over the lazy dog 0123456789"
done >"$TREE/small.txt"
[ "$(wc -c <"$TREE/small.txt")" -eq 4096 ] || die "small.txt is not 4096 bytes"
printf 'package pkg\n\nfunc Hello() string { return "hello" }\n' >"$TREE/src/pkg/hello.go"
printf '# docs\n\nA small tree for the MCP benchmark.\n' >"$TREE/docs/README.md"
printf '2026-01-01T00:00:00Z INFO started\n' >"$TREE/logs/app.log"
TREE=$(cd "$TREE" && pwd -P) # the reference server resolves symlinks

# Results: one line per cell in $WORK/cells.tsv:
# transport server tool clients calls_per_s p50_ms p99_ms errors calls max_ms
#   server_cpu_us_per_call server_cores client_cpu_us_per_call client_cores run
CELLS=$WORK/cells.tsv
: >"$CELLS"
FAILED=0

# cell TRANSPORT SERVER TOOL CLIENTS EXPECT [mcpbench args...]
cell() {
	local transport=$1 server=$2 tool=$3 c=$4 expect=$5
	shift 5
	local out
	log "$transport $server $tool c=$c"
	if out=$("$BIN/mcpbench" -tool "$tool" -c "$c" -d "$DURATION" -warmup "$WARMUP" -expect "$expect" "$@" 2>>"$LOGS/mcpbench.log"); then
		printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$transport" "$server" "$tool" "$c" "$out" "$RUN" >>"$CELLS"
		tail -n 1 "$LOGS/mcpbench.log" >&2
	else
		FAILED=1
		printf '%s\t%s\t%s\t%s\tfailed\t\t\t\t\t\t\t\t\t\t%s\n' "$transport" "$server" "$tool" "$c" "$RUN" >>"$CELLS"
		log "FAILED: $(tail -n 1 "$LOGS/mcpbench.log")"
	fi
}

expect_for() { case $1 in stat_file) echo 4096 ;; read_text_file) echo 'line 64:' ;; esac; }

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)

# run_suffix: "-rN" on profile names when RUNS > 1.
run_suffix() { [ "$RUNS" -gt 1 ] && echo "-r$RUN" || true; }
: >"$WORK/loadavg-stdio.txt"

has() { case " $TRANSPORTS " in *" $1 "*) return 0 ;; esac; return 1; }

SERVER_PID=
stop_server() {
	if [ -n "$SERVER_PID" ]; then
		kill "$SERVER_PID" 2>/dev/null || true
		wait "$SERVER_PID" 2>/dev/null || true
		SERVER_PID=
	fi
}
trap stop_server EXIT

# --- 4. streamable HTTP -----------------------------------------------------------
if has http; then
if [ -z "${PORT:-}" ]; then
	# A port nobody listens on: healthcheck fails there.
	for _ in $(seq 1 50); do
		PORT=$((20000 + RANDOM % 20000))
		SERVERFS_LISTEN=127.0.0.1:$PORT "$BIN/serverfs" healthcheck 2>/dev/null || break
	done
fi
export SERVERFS_LISTEN=127.0.0.1:$PORT
URL=http://127.0.0.1:$PORT/mcp

SFSBENCH_CPUPROFILE=${PROFILE:+$WORK/prof/http} "$BIN/serverfs" serve --workdir "wd=$TREE" 2>"$LOGS/serverfs-http.log" &
SERVER_PID=$!
deadline=$((SECONDS + 15))
until "$BIN/serverfs" healthcheck 2>/dev/null; do
	kill -0 "$SERVER_PID" 2>/dev/null || die "serverfs exited at start-up; see $LOGS/serverfs-http.log"
	[ "$SECONDS" -lt "$deadline" ] || die "serverfs not healthy on $SERVERFS_LISTEN within 15 s; see $LOGS/serverfs-http.log"
	sleep 0.1
done
log "serverfs (pid $SERVER_PID) listening on $SERVERFS_LISTEN"

lane_version() { case $1 in session) echo 2025-11-25 ;; stateless) echo 2026-07-28 ;; *) die "unknown lane $1" ;; esac; }
n=0
for RUN in $(seq 1 "$RUNS"); do
for lane in $LANES; do
	for tool in stat_file read_text_file; do
		for c in $CLIENTS; do
			n=$((n + 1))
			cell http "$lane" "$tool" "$c" "$(expect_for "$tool")" -mode http -url "$URL" -server-pid "$SERVER_PID" -server serverfs -workdir wd -file small.txt -protocol "$(lane_version "$lane")" \
				${PROFILE:+-profile "$WORK/prof/http-$n.pprof"}
			if [ -n "$PROFILE" ] && [ -f "$WORK/prof/http-$n.pprof" ]; then
				mv "$WORK/prof/http-$n.pprof" "$WORK/prof/http-$lane-$tool-c$c$(run_suffix).pprof"
			fi
		done
	done
done
done
stop_server
unset SERVERFS_LISTEN
fi

# --- 5. stdio: ServerFS and the reference server ---------------------------------------
if has stdio; then
for RUN in $(seq 1 "$RUNS"); do
for tool in stat_file read_text_file; do
	for c in $CLIENTS; do
		prof=$WORK/prof/stdio-$tool-c$c$(run_suffix)
		SFSBENCH_CPUPROFILE=${PROFILE:+$prof} cell stdio serverfs "$tool" "$c" "$(expect_for "$tool")" -mode stdio -protocol "$STDIO_PROTOCOL" -server serverfs -workdir wd -file small.txt \
			-server-stderr "$LOGS/serverfs-stdio.log" ${PROFILE:+-profile "$prof-1.pprof"} -- "$BIN/serverfs" serve --stdio --workdir "wd=$TREE"
		if [ -n "$PROFILE" ] && [ -f "$prof-1.pprof" ]; then
			mv "$prof-1.pprof" "$prof.pprof"
		fi
		cell stdio reference "$tool" "$c" "$(expect_for "$tool")" -mode stdio -protocol "$STDIO_PROTOCOL" -server reference -dir "$TREE" -file small.txt \
			-server-stderr "$LOGS/reference-stdio.log" -- "$NODE" "$REF_JS" "$TREE"
	done
done
echo "$RUN $(cut -d' ' -f1-3 /proc/loadavg)" >>"$WORK/loadavg-stdio.txt"
done
fi

LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

# --- 6. tables ------------------------------------------------------------------------
RESULTS=$WORK/results.md
{
	echo "## ServerFS MCP benchmark"
	echo
	echo "$(nproc) CPUs ($(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo)), $(go env GOVERSION), node $("$NODE" --version)," \
		"@modelcontextprotocol/server-filesystem $REF_VERSION; go-sdk client (bench/mcp); ${DURATION} per cell after ${WARMUP} warmup;" \
		"4 KiB text file; SERVERFS_LOG_LEVEL=$SERVERFS_LOG_LEVEL; load average before $LOAD_BEFORE, after $LOAD_AFTER." \
		"Client and server share the machine's CPUs."
	echo
	echo "### Per call, side by side"
	echo
	echo "HTTP session lane: go-sdk's client at 2025-11-25 (initialize, one session per client, its GET stream)."
	echo "HTTP stateless lane: at 2026-07-28 (server/discover once, then each call a self-contained POST)."
	echo "stdio: one session at ${STDIO_PROTOCOL} for both servers; clients = concurrent calls on it. Server CPU is the server process's user+system time per counted call."
	echo
	echo "| tool | clients | lane | calls/s | p50 ms | p99 ms | server CPU µs/call | errors |"
	echo "|---|---:|---|---:|---:|---:|---:|---:|"
	awk -F'\t' '
		function label(t, s) { if (t=="http") return "HTTP " s " lane"; return "stdio " (s=="serverfs" ? "ServerFS" : "reference") }
		{ k=$3 SUBSEP $4; if (!(k in seen)) { seen[k]=1; order[++n]=k }; rows[k]=rows[k] "\n" $0 }
		END {
			for (i=1; i<=n; i++) {
				m=split(substr(rows[order[i]], 2), rs, "\n")
				for (j=1; j<=m; j++) {
					split(rs[j], f, "\t")
					if (f[5]=="failed") printf "| %s | %s | %s | failed | | | | |\n", f[3], f[4], label(f[1], f[2])
					else printf "| %s | %s | %s | %s | %.2f | %.2f | %s | %s |\n", f[3], f[4], label(f[1], f[2]), f[5], f[6], f[7], f[11], f[8]
				}
			}
		}' "$CELLS"
	echo
	echo "### stdio (one session; clients = concurrent calls on it)"
	echo
	echo "Reference tool: stat_file ↔ get_file_info, read_text_file ↔ read_text_file."
	echo
	echo "Columns: calls/s, p50 ms, p99 ms and server CPU µs per call, for ServerFS then the reference;"
	echo "ours/ref compares calls/s; CPU ref/ours compares server CPU per call (less sensitive to other load)."
	echo
	echo "| tool | clients | ServerFS calls/s | p50 | p99 | CPU µs | reference calls/s | p50 | p99 | CPU µs | errors ours/ref | ours/ref calls/s | CPU ref/ours |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	awk -F'\t' '
		$1=="stdio" { k=$3 SUBSEP $4; if (!(k in seen)) { seen[k]=1; order[++n]=k }; row[$2, k]=$0 }
		END {
			for (i=1; i<=n; i++) {
				k=order[i]; split(k, kk, SUBSEP)
				split(row["serverfs", k], o, "\t"); split(row["reference", k], r, "\t")
				os = (o[5]=="" || o[5]=="failed") ? "failed | | | " : sprintf("%s | %.2f | %.2f | %s", o[5], o[6], o[7], o[11])
				rs = (r[5]=="" || r[5]=="failed") ? "failed | | | " : sprintf("%s | %.2f | %.2f | %s", r[5], r[6], r[7], r[11])
				ratio = (o[5]+0 > 0 && r[5]+0 > 0) ? sprintf("%.1f×", o[5]/r[5]) : "–"
				cratio = (o[11]+0 > 0 && r[11]+0 > 0) ? sprintf("%.1f×", r[11]/o[11]) : "–"
				printf "| %s | %s | %s | %s | %s/%s | %s | %s |\n", kk[1], kk[2], os, rs, o[8], r[8], ratio, cratio
			}
		}' "$CELLS"
	echo
	if [ "$RUNS" -gt 1 ]; then
		echo "### $RUNS runs: server CPU µs per call, median (min–max)"
		echo
		echo "Load average (1, 5, 15 min) after each stdio run: $(awk '{printf "%s%s: %s %s %s", (NR>1?"; ":""), $1, $2, $3, $4}' "$WORK/loadavg-stdio.txt")."
		echo "stdio ratio: ServerFS CPU / reference CPU, per run (cells run back to back), then their median (min–max)."
		echo
		echo "| tool | clients | lane | server CPU µs/call | calls/s | stdio ratio per run | stdio ratio |"
		echo "|---|---:|---|---:|---:|---|---:|"
		awk -F'\t' '
			function label(t, s) { if (t=="http") return "HTTP " s " lane"; return "stdio " (s=="serverfs" ? "ServerFS" : "reference") }
			function sortn(a, n,   i, j, t) { for (i=2; i<=n; i++) { t=a[i]; for (j=i-1; j>=1 && a[j]>t; j--) a[j+1]=a[j]; a[j+1]=t } }
			function med(a, n) { sortn(a, n); return (n%2) ? a[(n+1)/2] : (a[n/2]+a[n/2+1])/2 }
			$5!="failed" {
				k=$3 SUBSEP $4; if (!(k in seenk)) { seenk[k]=1; keys[++nk]=k }
				l=$1 SUBSEP $2; if (!((k,l) in seenl)) { seenl[k,l]=1; lanes[k,++nl[k]]=l }
				n=++cnt[k,l]; cpu[k,l,n]=$11; rate[k,l,n]=$5
				if ($1=="stdio") stdio[$2,k,$15]=$11
			}
			END {
				for (i=1; i<=nk; i++) {
					k=keys[i]; split(k, kk, SUBSEP)
					# per-run ratios for stdio
					nr=0; rs=""
					for (r=1; r<=1000; r++) {
						if (!(("serverfs",k,r) in stdio)) continue
						if (!(("reference",k,r) in stdio) || stdio["reference",k,r]+0==0) continue
						v=stdio["serverfs",k,r]/stdio["reference",k,r]; rr[++nr]=v; rs=rs (nr>1?" ":"") sprintf("%.2f", v)
					}
					for (j=1; j<=nl[k]; j++) {
						l=lanes[k,j]; split(l, ll, SUBSEP); n=cnt[k,l]
						delete a; delete b
						mn=""; mx=""
						for (m=1; m<=n; m++) { a[m]=cpu[k,l,m]+0; b[m]=rate[k,l,m]+0; if (mn=="" || a[m]<mn) mn=a[m]; if (mx=="" || a[m]>mx) mx=a[m] }
						c=sprintf("%.0f (%.0f–%.0f)", med(a, n), mn, mx)
						cr=sprintf("%.0f", med(b, n))
						ratio=""; per=""
						if (ll[1]=="stdio" && ll[2]=="serverfs" && nr>0) {
							per=rs; delete q; qmn=""; qmx=""
							for (m=1; m<=nr; m++) { q[m]=rr[m]; if (qmn=="" || q[m]<qmn) qmn=q[m]; if (qmx=="" || q[m]>qmx) qmx=q[m] }
							ratio=sprintf("%.2f× (%.2f–%.2f)", med(q, nr), qmn, qmx)
						}
						printf "| %s | %s | %s | %s | %s | %s | %s |\n", kk[1], kk[2], label(ll[1], ll[2]), c, cr, per, ratio
					}
				}
			}' "$CELLS"
		echo
	fi
} >"$RESULTS"

cat "$RESULTS"
log "saved $RESULTS (raw cells: $CELLS, logs: $LOGS)"
exit "$FAILED"
