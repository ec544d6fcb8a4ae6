#!/usr/bin/env bash
# bench/git/history.sh — read_repo_history's log, show and blame (in
# process, bench/git's sfsgit) against the git CLI on one generated history,
# side by side with hyperfine in one run (issue 18 targets: <= 2x git for log
# and show, <= 3x for blame). Prints hyperfine's markdown table, then each
# pair's wall and CPU (user + system) means and ratios, with the load
# average before and after (a shared machine distorts wall ratios most).
#
# The repository (sfsgit gen-history, git fast-import, git repack -ad): 5,200
# commits with a merge every 250, 1,000 files in 10 directories, a commit
# changing all 1,000 (tag wide), blame.txt of 2,000 lines edited by one
# commit in 12, hot/path.txt by one in 20.
#
# Environment: COMMITS (default 5200), RUNS (default 10), BENCH_DIR (default
# a fresh mktemp dir).
set -euo pipefail
die() { echo "bench/git/history.sh: $*" >&2; exit 1; }
for tool in go git hyperfine jq; do command -v "$tool" >/dev/null || die "'$tool' not found"; done
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
COMMITS=${COMMITS:-5200}
RUNS=${RUNS:-10}
WORK=${BENCH_DIR:-$(mktemp -d /tmp/sfshistbench.XXXXXX)}
mkdir -p "$WORK"
REPO=$WORK/history
BIN=$WORK/sfsgit
(cd "$ROOT" && go build -o "$BIN" ./bench/git)
export HOME=$WORK/home GIT_CONFIG_NOSYSTEM=1
mkdir -p "$HOME"
if [ ! -d "$REPO/.git" ]; then
	echo "generating $COMMITS commits in $REPO" >&2
	mkdir -p "$REPO"
	(cd "$REPO" && git init -q -b main && "$BIN" gen-history "$COMMITS" | git fast-import --quiet && git checkout -q -f main && git repack -adq)
fi
cd "$REPO"
echo "commits: $(git rev-list --count --all), touching blame.txt: $(git rev-list --count HEAD -- blame.txt)" >&2
F='--format=%H%x00%P%x00%an%x00%ae%x00%at%x00%cn%x00%ce%x00%ct%x00%s%x00%b' # the fields log answers
LOAD_BEFORE=$(cat /proc/loadavg 2>/dev/null || echo unknown)
hyperfine -N -w 2 -r "$RUNS" --export-markdown "$WORK/history.md" --export-json "$WORK/history.json" \
	-n 'git log -n 100 --name-status' "git log -n 100 --no-renames --name-status $F" \
	-n 'serverfs log limit 100' "$BIN log $REPO 100" \
	-n 'git log -n 100 --name-status -- hot/path.txt' "git log -n 100 --no-renames --name-status $F -- hot/path.txt" \
	-n 'serverfs log limit 100 paths hot/path.txt' "$BIN log $REPO 100 hot/path.txt" \
	-n 'git show --numstat -p wide (1,000 files)' "git show --no-renames --numstat -p wide" \
	-n 'serverfs show wide (1,000 files)' "$BIN show $REPO wide" \
	-n 'git blame --porcelain -L1,500 blame.txt' "git blame --porcelain -L1,500 blame.txt" \
	-n 'serverfs blame blame.txt lines 1-500' "$BIN blame $REPO blame.txt 1 500"
LOAD_AFTER=$(cat /proc/loadavg 2>/dev/null || echo unknown)
cat "$WORK/history.md"
echo
echo "RUNS=$RUNS; load average before: $LOAD_BEFORE; after: $LOAD_AFTER"
echo
echo "| pair (git, then serverfs) | git wall [ms] | serverfs wall [ms] | wall ratio | git CPU [ms] | serverfs CPU [ms] | CPU ratio | target |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
# Rows come in pairs: git's command, then serverfs's.
jq -r --argjson targets '[2, 2, 2, 3]' '
	[.results[] | {name: .command, wall: (.mean * 1000), cpu: ((.user + .system) * 1000)}] as $r
	| range(0; $r | length; 2) as $i
	| $r[$i] as $g | $r[$i + 1] as $s
	| "| \($s.name) | \($g.wall * 10 | round / 10) | \($s.wall * 10 | round / 10) | \($s.wall / $g.wall * 100 | round / 100)× | \($g.cpu * 10 | round / 10) | \($s.cpu * 10 | round / 10) | \($s.cpu / $g.cpu * 100 | round / 100)× | \($targets[$i / 2])× |"
' "$WORK/history.json"
