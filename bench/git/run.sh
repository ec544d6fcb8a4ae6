#!/usr/bin/env bash
# bench/git/run.sh — ServerFS's in-process git status and commit against the
# git CLI on one generated repository, side by side with hyperfine (issue 7
# targets: status <= 1.5x git status --porcelain=v2, a 10-path commit <= 2x
# git add + git commit). Prints a markdown table and the ratios.
#
# Environment: FILES (default 50000), RUNS (default 10), BENCH_DIR (default a
# fresh mktemp dir).
set -euo pipefail
die() { echo "bench/git/run.sh: $*" >&2; exit 1; }
for tool in go git hyperfine; do command -v "$tool" >/dev/null || die "'$tool' not found"; done
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
FILES=${FILES:-50000}
RUNS=${RUNS:-10}
WORK=${BENCH_DIR:-$(mktemp -d /tmp/sfsgitbench.XXXXXX)}
mkdir -p "$WORK"
REPO=$WORK/repo
BIN=$WORK/sfsgit
export HOME=$WORK/home GIT_CONFIG_NOSYSTEM=1
mkdir -p "$HOME"
git config --global user.name Bench
git config --global user.email bench@example.invalid
(cd "$ROOT" && go build -o "$BIN" ./bench/git)

if [ ! -d "$REPO/.git" ]; then
	echo "generating $FILES files in $REPO" >&2
	mkdir -p "$REPO"
	(cd "$REPO" && git init -q -b main)
	dirs=$((FILES / 100))
	for ((d = 0; d < dirs; d++)); do
		sub=$REPO/d$((d % 50))/e$d
		mkdir -p "$sub"
		for ((f = 0; f < 100; f++)); do printf 'file %d %d\n' "$d" "$f" > "$sub/f$f.txt"; done
	done
	printf '*.log\nbuild/\n' > "$REPO/.gitignore"
	(cd "$REPO" && git add -A && git commit -qm base)
fi
cd "$REPO"
git status --porcelain=v2 >/dev/null # a refreshed index for both sides
echo "files: $(git ls-files | wc -l)" >&2

# The ten paths a commit changes; prepare rewrites them before every run.
PATHS=$(git ls-files | grep -v '^\.' | awk 'NR % 4999 == 1' | head -10 | tr '\n' ' ')
PREP="for p in $PATHS; do printf '%s\n' \$RANDOM\$RANDOM >> \$p; done"

# Status in the two states an index is usually in: right after a commit
# (its cache tree is valid: HEAD's tree need not be read) and after a
# `git add` (the cache tree's root is invalid: HEAD's tree is read).
git add -A && git commit -q --no-verify -m settle >/dev/null 2>&1 || true
git status --porcelain=v2 >/dev/null
hyperfine -N -w 2 -r "$RUNS" --export-markdown "$WORK/status.md" \
	-n 'git status --porcelain=v2 (after a commit)' 'git status --porcelain=v2' \
	-n 'serverfs status (after a commit)' "$BIN status $REPO"
first=${PATHS%% *}
printf 'staged\n' >> "$first" && git add -- "$first"
hyperfine -N -w 2 -r "$RUNS" --export-markdown "$WORK/status-staged.md" \
	-n 'git status --porcelain=v2 (after git add)' 'git status --porcelain=v2' \
	-n 'serverfs status (after git add)' "$BIN status $REPO"
git commit -q --no-verify -m staged
hyperfine -w 1 -r "$RUNS" --export-markdown "$WORK/commit.md" \
	--prepare "$PREP" -n 'git add + git commit (10 paths)' "git add -- $PATHS && git commit -q --no-verify -m bench" \
	--prepare "$PREP" -n 'serverfs commit (10 paths)' "$BIN commit $REPO bench $PATHS"
cat "$WORK/status.md" "$WORK/status-staged.md" "$WORK/commit.md"
