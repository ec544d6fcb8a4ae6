#!/usr/bin/env bash
# bench/run.sh — time ServerFS's search engine (bench/sfsgrep) against
# `rg -F` on two corpora and print a markdown table. See bench/README.md.
#
# Environment:
#   BENCH_DIR   work dir (default: a fresh mktemp dir under /tmp). Generated
#               corpora are kept there and reused on later runs.
#   RUNS        hyperfine runs per command (default 10)
#   WARMUP      hyperfine warmup runs (default 2)
#   LIMIT_RUNS  hyperfine runs for the "first 100 hits" measurement (default 30)
#   GO_FREQ, GO_RARE, BIG_FREQ, BIG_RARE, ABSENT   override the search words
#   BENCH_ONLY  "reads": only the read rows (tail of the 1 GiB file vs tail -n,
#               depth-2 tree of GOROOT/src vs find -maxdepth 2)
set -euo pipefail

die() { echo "bench/run.sh: $*" >&2; exit 1; }
log() { echo "bench/run.sh: $*" >&2; }

for tool in go rg hyperfine awk; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		case $tool in
		rg | hyperfine) die "'$tool' not found; install it: apt-get install ripgrep hyperfine" ;;
		go) die "'go' not found; install Go (https://go.dev/dl/) and put it on PATH" ;;
		*) die "'$tool' not found" ;;
		esac
	fi
done

SCRIPT_DIR=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$SCRIPT_DIR/.." && pwd)
[ -f "$ROOT/go.mod" ] && [ -d "$ROOT/bench/sfsgrep" ] || die "cannot find the repo root (expected $ROOT/go.mod and $ROOT/bench/sfsgrep)"

RUNS=${RUNS:-10}
WARMUP=${WARMUP:-2}
LIMIT_RUNS=${LIMIT_RUNS:-30}
GO_FREQ=${GO_FREQ:-func}
GO_RARE=${GO_RARE:-Kelvin}
BIG_FREQ=${BIG_FREQ:-func}
BIG_RARE=${BIG_RARE:-ZEBRA_QUOKKA_42}
ABSENT=${ABSENT:-ZEBRA_QUOKKA_NOPE}

if [ -n "${BENCH_DIR:-}" ]; then
	mkdir -p "$BENCH_DIR"
	WORK=$(cd "$BENCH_DIR" && pwd)
else
	WORK=$(mktemp -d /tmp/sfsbench.XXXXXX)
fi
case $WORK in *"'"* | *'"'* | *'\'*) die "work dir must not contain quotes or backslashes: $WORK" ;; esac
mkdir -p "$WORK/json" "$WORK/logs"
log "work dir: $WORK  (set BENCH_DIR=$WORK to reuse its corpora next time)"

# --- 1. build ---------------------------------------------------------------
SFS=$WORK/sfsgrep
log "building sfsgrep"
(cd "$ROOT" && go build -o "$SFS" ./bench/sfsgrep) || die "go build ./bench/sfsgrep failed"
SFR=$WORK/sfsread
log "building sfsread"
(cd "$ROOT" && go build -o "$SFR" ./bench/sfsread) || die "go build ./bench/sfsread failed"
ONLY=${BENCH_ONLY:-}

GOROOT_DIR=$(go env GOROOT)
GOSRC=$GOROOT_DIR/src
[ -d "$GOSRC" ] || die "no $GOSRC"
GOVER=$(go env GOVERSION)
STAMP="$GOVER $GOSRC"

# --- 2a. corpus: copy of GOROOT/src -------------------------------------------
GOCOPY=$WORK/goroot-src
if [ -f "$WORK/goroot-src.done" ] && [ "$(cat "$WORK/goroot-src.done")" = "$STAMP" ]; then
	log "reusing $GOCOPY"
else
	log "copying $GOSRC -> $GOCOPY"
	rm -rf "$GOCOPY" "$WORK/goroot-src.done"
	cp -R "$GOSRC" "$GOCOPY"
	chmod -R u+w "$GOCOPY"
	echo "$STAMP" >"$WORK/goroot-src.done"
fi

# --- 2b. corpus: one 1 GiB text file ----------------------------------------
# A 1 MiB block of Go source (every 7th non-test, non-vendor .go file of
# GOROOT/src in byte order, NULs dropped, cut at a line boundary, padded to
# exactly 1 MiB with a comment line) repeated 1024 times. In five of the
# copies the padding comment carries BIG_RARE, so it occurs exactly 5 times.
BIGDIR=$WORK/big
BIG=$BIGDIR/corpus.txt
BLOCK=1048576
NBLOCKS=1024
RARE_AT=" 3 200 511 777 1020 "
BIGSTAMP="$STAMP $BLOCK x $NBLOCKS rare=$BIG_RARE at$RARE_AT"
if [ -f "$WORK/big.done" ] && [ "$(cat "$WORK/big.done")" = "$BIGSTAMP" ] && [ -f "$BIG" ]; then
	log "reusing $BIG"
else
	log "generating $BIG (1 GiB)"
	t0=$(date +%s)
	rm -rf "$BIGDIR" "$WORK/big.done"
	mkdir -p "$BIGDIR"
	(cd "$GOSRC" && find . -name '*.go' ! -name '*_test.go' ! -path '*/testdata/*' ! -path '*/vendor/*' -type f) |
		LC_ALL=C sort | awk 'NR % 7 == 0' >"$WORK/block-files.txt"
	(cd "$GOSRC" && tr '\n' '\0' <"$WORK/block-files.txt" | xargs -0 cat) | tr -d '\000' |
		LC_ALL=C awk -v max=$BLOCK '
			full { next }
			{ n = length($0) + 1; if (tot + n > max - 128) { full = 1; next } print; tot += n }
			END { print tot > "/dev/stderr" }' >"$WORK/block-body.txt" 2>"$WORK/block-body.len"
	body=$(cat "$WORK/block-body.len")
	padline() { # $1 = prefix; prints a line of exactly $2 bytes incl. newline
		LC_ALL=C awk -v p="$1" -v n="$2" 'BEGIN { s = p; while (length(s) < n - 1) s = s "."; print s }'
	}
	{ cat "$WORK/block-body.txt"; padline "// padding " $((BLOCK - body)); } >"$WORK/block.txt"
	{ cat "$WORK/block-body.txt"; padline "// $BIG_RARE " $((BLOCK - body)); } >"$WORK/block-rare.txt"
	for f in block.txt block-rare.txt; do
		[ "$(wc -c <"$WORK/$f")" -eq $BLOCK ] || die "$f is not $BLOCK bytes"
	done
	grep -qF "$BIG_RARE" "$WORK/block.txt" && die "$BIG_RARE already occurs in the base block"
	grep -qiF "$ABSENT" "$WORK/block-rare.txt" && die "$ABSENT occurs in the block"
	[ "$(grep -cF "$BIG_FREQ" "$WORK/block.txt")" -ge 200 ] || die "'$BIG_FREQ' is not frequent in the block"
	i=0
	while [ $i -lt $NBLOCKS ]; do
		case $RARE_AT in *" $i "*) cat "$WORK/block-rare.txt" ;; *) cat "$WORK/block.txt" ;; esac
		i=$((i + 1))
	done >"$BIG.tmp"
	mv "$BIG.tmp" "$BIG"
	[ "$(wc -c <"$BIG")" -eq $((BLOCK * NBLOCKS)) ] || die "$BIG has the wrong size"
	echo "$BIGSTAMP" >"$WORK/big.done"
	log "generated in $(($(date +%s) - t0)) s"
fi

# --- 3. the 12 cells --------------------------------------------------------
# hyperfine -N runs the command without a shell and sends its stdout to
# /dev/null, so both tools really print every match; -i because a search with
# no match exits 1.
mean_of() { # $1 = json, $2 = result index (0-based); prints mean and stddev of the wall time and mean CPU time (user + system) in ms
	awk -v want="$2" '
		/"mean":/   { gsub(/[ ",]/, ""); split($0, a, ":"); m[nm++] = a[2] }
		/"stddev":/ { gsub(/[ ",]/, ""); split($0, a, ":"); s[ns++] = a[2] }
		/"user":/   { gsub(/[ ",]/, ""); split($0, a, ":"); u[nu++] = a[2] }
		/"system":/ { gsub(/[ ",]/, ""); split($0, a, ":"); y[ny++] = a[2] }
		END { printf "%.1f %.1f %.1f\n", m[want] * 1000, s[want] * 1000, (u[want] + y[want]) * 1000 }' "$1"
}
load1() { cut -d' ' -f1 /proc/loadavg; } # the 1-minute load average, recorded with each cell

if [ "$ONLY" != reads ]; then
ROWS=$WORK/rows.txt
: >"$ROWS"
cell() { # corpus-label dir case word
	local label=$1 dir=$2 cs=$3 word=$4 iflag="" tag rc json hits_ours hits_rg
	[ "$cs" = "-i" ] && iflag="-i "
	tag=$(echo "$label-${cs}-$word" | tr -c 'A-Za-z0-9_-' '_')
	json=$WORK/json/$tag.json
	# One untimed run each: catch real failures (exit >= 2) and count hits.
	rc=0
	hits_ours=$("$SFS" $iflag "$word" "$dir" | wc -l) || rc=$?
	[ $rc -le 1 ] || die "sfsgrep $iflag$word $dir failed (exit $rc)"
	rc=0
	hits_rg=$(rg -F -n --no-heading $iflag "$word" "$dir" | wc -l) || rc=$?
	[ $rc -le 1 ] || die "rg $iflag$word $dir failed (exit $rc)"
	log "cell $label $cs $word (hits ours=$hits_ours rg=$hits_rg)"
	la=$(load1)
	hyperfine -N -i --warmup "$WARMUP" --runs "$RUNS" --style basic --export-json "$json" \
		-n ours "'$SFS' $iflag'$word' '$dir'" \
		-n rg "rg -F -n --no-heading $iflag'$word' '$dir'" >"$WORK/logs/$tag.txt" 2>&1 ||
		{ cat "$WORK/logs/$tag.txt" >&2; die "hyperfine failed for $tag"; }
	read -r om os oc < <(mean_of "$json" 0)
	read -r gm gs gc < <(mean_of "$json" 1)
	echo "$label|$cs|$word|$hits_ours|$hits_rg|$om|$gm|$os|$gs|$oc|$gc|$la-$(load1)" >>"$ROWS"
}

for cs in cs -i; do
	for word in "$GO_FREQ" "$GO_RARE" "$ABSENT"; do
		cell "GOROOT/src" "$GOCOPY" "$cs" "$word"
	done
done
for cs in cs -i; do
	for word in "$BIG_FREQ" "$BIG_RARE" "$ABSENT"; do
		cell "1GiB file" "$BIGDIR" "$cs" "$word"
	done
done

# --- 3b. regular expressions -------------------------------------------------
# Patterns holding a literal of >= 3 bytes (target <= 1.0x rg -e) and one
# without (reported). rg's \w is Unicode, ours ASCII: on these corpora the
# hit counts agree (printed as a check).
RROWS=$WORK/regex-rows.txt
: >"$RROWS"
RX_LIT=${RX_LIT:-'func \w+Dial|Err[A-Z]\w*EOF|(?i)unexpected eof'}
RX_NOLIT=${RX_NOLIT:-'[0-9]{4}-[0-9]{2}'}
rcell() { # corpus-label dir pattern kind
	local label=$1 dir=$2 pat=$3 kind=$4 tag rc json hits_ours hits_rg
	tag=$(echo "rx-$label-$pat" | tr -c 'A-Za-z0-9_-' '_')
	json=$WORK/json/$tag.json
	rc=0
	hits_ours=$("$SFS" -e "$pat" "$dir" | wc -l) || rc=$?
	[ $rc -le 1 ] || die "sfsgrep -e $pat $dir failed (exit $rc)"
	rc=0
	hits_rg=$(rg -n --no-heading -e "$pat" "$dir" | wc -l) || rc=$?
	[ $rc -le 1 ] || die "rg -e $pat $dir failed (exit $rc)"
	log "regex cell $label /$pat/ (hits ours=$hits_ours rg=$hits_rg)"
	la=$(load1)
	hyperfine -N -i --warmup "$WARMUP" --runs "$RUNS" --style basic --export-json "$json" \
		-n ours "'$SFS' -e '$pat' '$dir'" \
		-n rg "rg -n --no-heading -e '$pat' '$dir'" >"$WORK/logs/$tag.txt" 2>&1 ||
		{ cat "$WORK/logs/$tag.txt" >&2; die "hyperfine failed for $tag"; }
	read -r om os oc < <(mean_of "$json" 0)
	read -r gm gs gc < <(mean_of "$json" 1)
	echo "$label|$kind|$pat|$hits_ours|$hits_rg|$om|$gm|$os|$gs|$oc|$gc|$la-$(load1)" >>"$RROWS"
}
IFS='|' read -r -a rx_lit <<<"$RX_LIT"
for label_dir in "GOROOT/src|$GOCOPY" "1GiB file|$BIGDIR"; do
	label=${label_dir%%|*} dir=${label_dir#*|}
	for pat in "${rx_lit[@]}"; do
		rcell "$label" "$dir" "$pat" literal
	done
	rcell "$label" "$dir" "$RX_NOLIT" none
done

# --- 4. first 100 hits --------------------------------------------------------
log "first 100 hits of '$GO_FREQ' in GOROOT/src"
LJSON=$WORK/json/first100.json
hyperfine -N -i --warmup "$WARMUP" --runs "$LIMIT_RUNS" --style basic --export-json "$LJSON" \
	-n first100 "'$SFS' --limit 100 '$GO_FREQ' '$GOCOPY'" >"$WORK/logs/first100.txt" 2>&1 ||
	{ cat "$WORK/logs/first100.txt" >&2; die "hyperfine failed for first100"; }
read -r lm lsd lcpu < <(mean_of "$LJSON" 0)

# --- 4a. which files each side searched ------------------------------------
# rg (without -z) opens every non-hidden, non-ignored file and skips those
# with a NUL as binary, .gz/.zst included; sfsgrep opens the same files and
# decompresses .gz/.zst ones and searches their text (ServerFS searches
# rotated logs): that work, and the hits in them, are ours only.
read -r our_scanned our_binary < <("$SFS" --stats ZEBRA_QUOKKA_NOPE "$GOCOPY" 2>&1 >/dev/null |
	sed -n 's/.*scanned=\([0-9]*\) skipped={Binary:\([0-9]*\).*/\1 \2/p')
rg_files=$(rg --files "$GOCOPY" | wc -l)
our_files=$(find "$GOCOPY" -type f ! -path '*/.*' | wc -l)
compressed=$(cd "$GOCOPY" && find . -type f ! -path '*/.*' \( -iname '*.gz' -o -iname '*.zst' \) | sed 's|^\./||' | LC_ALL=C sort)
n_compressed=$(printf '%s\n' "$compressed" | grep -c . || true)
compressed_mb=$(cd "$GOCOPY" && printf '%s\n' "$compressed" | grep . | tr '\n' '\0' | xargs -0 -r cat | wc -c | awk '{ printf "%.1f", $1 / 1e6 }')
decompressed_mb=$(cd "$GOCOPY" && printf '%s\n' "$compressed" | grep . | while read -r f; do
	case $f in *.gz | *.GZ) gzip -dc "$f" ;; *) zstd -dcq "$f" ;; esac; done 2>/dev/null | wc -c | awk '{ printf "%.1f", $1 / 1e6 }')
fi

# --- 4b. reads: tail and tree ------------------------------------------------
# The last 50 lines of the 1 GiB file (ServerFS reads back from the end, as
# tail does) and every entry two levels below GOROOT/src (ServerFS: sorted,
# hidden/denied left out, paged by 100,000), side by side in one hyperfine
# run each.
DROWS=$WORK/read-rows.txt
: >"$DROWS"
dcell() { # label ours-cmd ref-cmd lines-check
	local label=$1 ours=$2 ref=$3 tag json
	tag=$(echo "read-$label" | tr -c 'A-Za-z0-9_-' '_')
	json=$WORK/json/$tag.json
	log "read row $label"
	hyperfine -N --warmup "$WARMUP" --runs "$RUNS" --style basic --export-json "$json" \
		-n ours "$ours" -n ref "$ref" >"$WORK/logs/$tag.txt" 2>&1 ||
		{ cat "$WORK/logs/$tag.txt" >&2; die "hyperfine failed for $tag"; }
	read -r om os _ < <(mean_of "$json" 0)
	read -r gm gs _ < <(mean_of "$json" 1)
	echo "$label|$ours|$ref|$om|$gm|$os|$gs" >>"$DROWS"
}
[ "$("$SFR" tail 50 "$BIG" | md5sum)" = "$(tail -n 50 "$BIG" | md5sum)" ] || die "sfsread tail and tail -n disagree"
[ "$("$SFR" tree 2 "$GOCOPY" | LC_ALL=C sort | md5sum)" = "$(find "$GOCOPY" -mindepth 1 -maxdepth 2 ! -name '.*' -printf '%P\n' | LC_ALL=C sort | md5sum)" ] ||
	die "sfsread tree 2 and find -maxdepth 2 list different entries"
dcell "tail 50 of the 1 GiB file" "'$SFR' tail 50 '$BIG'" "tail -n 50 '$BIG'"
dcell "depth-2 tree of GOROOT/src" "'$SFR' tree 2 '$GOCOPY'" "find '$GOCOPY' -mindepth 1 -maxdepth 2"

# --- 5. report ------------------------------------------------------------------
RES=$WORK/results.md
{
	if [ "$ONLY" != reads ]; then
	echo "## ServerFS search vs ripgrep"
	echo
	echo "| corpus | case | word | hits ours | hits rg | ours mean ms | rg mean ms | ours/rg | ≤0.8× | ours CPU ms | rg CPU ms | CPU ours/rg | ours σ ms | rg σ ms | load before-after |"
	echo "|---|---|---|--:|--:|--:|--:|--:|:-:|--:|--:|--:|--:|--:|--:|"
	awk -F'|' -v freq="$GO_FREQ" '{
		ratio = ($7 > 0) ? $6 / $7 : 0
		cratio = ($11 > 0) ? $10 / $11 : 0
		target = ($3 != freq)
		ok = !target ? "(no target)" : (ratio <= 0.8) ? "yes" : "**no**"
		if (target) { n++; if (ratio <= 0.8) pass++; if (cratio <= 0.8) cpass++ }
		cs = ($2 == "-i") ? "-i" : "sensitive"
		printf "| %s | %s | `%s` | %s | %s | %s | %s | %.2f | %s | %s | %s | %.2f | %s | %s | %s |\n", $1, cs, $3, $4, $5, $6, $7, ratio, ok, $10, $11, cratio, $8, $9, $12
	} END { printf "\nRare and absent words meeting the target (ours ≤ 0.8× rg, wall): %d/%d (by CPU time: %d/%d)\n", pass, n, cpass, n }' "$ROWS"
	echo
	echo "### Regular expressions (ours \`sfsgrep -e\`, rg \`rg -n --no-heading -e\`)"
	echo
	echo "| corpus | literal | pattern | hits ours | hits rg | ours mean ms | rg mean ms | ours/rg | target | ours CPU ms | rg CPU ms | CPU ours/rg | ours σ ms | rg σ ms | load before-after |"
	echo "|---|---|---|--:|--:|--:|--:|--:|:-:|--:|--:|--:|--:|--:|--:|"
	awk -F'|' '{
		ratio = ($7 > 0) ? $6 / $7 : 0
		cratio = ($11 > 0) ? $10 / $11 : 0
		if ($2 == "literal") { ok = (ratio <= 1.0) ? "yes" : "**no**"; n++; if (ratio <= 1.0) pass++; if (cratio <= 1.0) cpass++ } else ok = "reported"
		printf "| %s | %s | `%s` | %s | %s | %s | %s | %.2f | %s | %s | %s | %.2f | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7, ratio, ok, $10, $11, cratio, $8, $9, $12
	} END { printf "\nPatterns with a literal meeting the target (ours ≤ 1.0× rg -e, wall): %d/%d (by CPU time: %d/%d)\n", pass, n, cpass, n }' "$RROWS"
	echo
	echo "First 100 hits of \`$GO_FREQ\` in GOROOT/src (\`sfsgrep --limit 100\`): **$lm ms** mean (σ $lsd ms, CPU $lcpu ms, $LIMIT_RUNS runs; target < 10 ms)"
	echo
	echo "Notes:"
	echo "- ours = \`sfsgrep [-i] WORD DIR\`, rg = \`rg -F -n --no-heading [-i] WORD DIR\`; both print every match to stdout (hyperfine -N discards it). Means over $RUNS runs after $WARMUP warmups."
	echo "- Files searched in GOROOT/src: both open the same $our_files non-hidden files (rg --files lists $rg_files); ours searched the text of $our_scanned and skipped $our_binary as binary. The $n_compressed .gz/.zst files ($compressed_mb MB, $decompressed_mb MB decompressed) are skipped as binary by rg (no -z) and decompressed and searched by ours, as ServerFS does for rotated logs: that extra work is in our times, and their hits make \"hits ours\" exceed \"hits rg\" (e.g. \`[0-9]{4}-[0-9]{2}\` in testdata/synthea_fhir.json.zst). They are: $(printf '%s\n' "$compressed" | tr '\n' ' ')"
	echo "- CPU = user + system time (hyperfine's means); wall and CPU ratios come from the same runs. load = the 1-minute load average before and after the cell: on a loaded machine rg (more threads) and ours are slowed differently, so trust ratios from a quiet machine (load < 1)."
	echo "- GOROOT/src = copy of $GOSRC ($GOVER); 1GiB file = one 1 MiB block of Go source repeated 1024×, \`$BIG_RARE\` injected 5×, \`$ABSENT\` absent; sfsgrep is given its directory, rg the same directory (it holds only that file)."
	echo "- $(nproc) CPUs, $(rg --version | head -1), $(hyperfine --version), $(date -u +%Y-%m-%dT%H:%MZ). Other work on the machine adds noise; compare σ."
	echo
	fi
	echo "## ServerFS reads vs tail and find"
	echo
	echo "| row | ours | reference | ours mean ms | ref mean ms | ours/ref | ours σ ms | ref σ ms |"
	echo "|---|---|---|--:|--:|--:|--:|--:|"
	awk -F'|' -v w="$WORK/" '{
		ratio = ($5 > 0) ? $4 / $5 : 0
		gsub(w, "", $2); gsub(w, "", $3); gsub("\047", "", $2); gsub("\047", "", $3)
		printf "| %s | `%s` | `%s` | %s | %s | %.2f | %s | %s |\n", $1, $2, $3, $4, $5, ratio, $6, $7
	}' "$DROWS"
	echo
	echo "- The same output checked before timing (tail: byte for byte; tree: the same set of paths). Means over $RUNS runs after $WARMUP warmups, $(nproc) CPUs, $(date -u +%Y-%m-%dT%H:%MZ)."
} >"$RES"

echo
cat "$RES"
echo
echo "(saved to $RES; raw hyperfine JSON in $WORK/json, logs in $WORK/logs)"
