#!/bin/sh
# Doc tests: runs every ```sh block of the given Markdown files, as written, and checks its
# exit status (docs/CONTRIBUTING.md describes the convention for writers).
#
# Usage: tests/doctest.sh path/to/tidepool FILE.md...   (from the repository root)
#
# Each FILE gets a fresh temporary directory holding a copy of the repository's scenes/
# (a copy, not a link: scenes name outputs such as "../out/pond.mp4" relative to
# themselves, which must land in the temporary directory) and a bin/ with `tidepool`,
# first on PATH. The file's blocks run there in order, each with `sh -e` (the first
# failing command ends the block), so a later block may use what an earlier one wrote.
#
#   ```sh          runs; it must exit 0
#   ```sh norun    is not run (recipes that need ssh hosts, a cluster, or `make`)
#   a last command line ending in "# exit N" says the block must exit with status N
#   ```bash, ```shell and ```console are refused: write ```sh (or ```text for output)
#
# Prints one line per failing block (FILE:LINE: ...) with the end of its output, and exits
# 1 if any block failed, 0 otherwise.
set -u

[ $# -ge 2 ] || { echo "usage: $0 TIDEPOOL FILE.md..." >&2; exit 2; }
case "$1" in
/*) bin=$1 ;;
*) bin=$(pwd)/$1 ;;
esac
shift
[ -x "$bin" ] || { echo "doctest: $bin is not executable" >&2; exit 2; }
root=$(pwd)
TIMEOUT=${TP_DOCTEST_TIMEOUT:-600}
fail=0
blocks=0

for md in "$@"; do
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/tp-doctest.XXXXXX")
	mkdir "$tmp/bin" "$tmp/.blocks"
	ln -s "$bin" "$tmp/bin/tidepool"
	cp -R "$root/scenes" "$tmp/scenes"
	# Split the file into .blocks/LLLLLL.sh (LLLLLL: the line of the opening fence).
	if ! awk -v dir="$tmp/.blocks" -v md="$md" '
		BEGIN { inb = 0; bad = 0 }
		/^[ \t]*```/ {
			if (inb) { inb = 0; if (out != "") close(out); out = ""; next }
			inb = 1; out = ""
			info = $0; sub(/^[ \t]*```[ \t]*/, "", info)
			n = split(info, w, /[ \t]+/)
			if (w[1] == "bash" || w[1] == "shell" || w[1] == "console") {
				printf "%s:%d: fence ```%s: write ```sh (run), ```sh norun or ```text\n", md, NR, w[1] > "/dev/stderr"
				bad = 1
			}
			if (w[1] == "sh" && w[2] != "norun")
				out = sprintf("%s/%06d.sh", dir, NR)
			next
		}
		inb && out != "" { print > out }
		END { exit bad }
	' "$md"; then
		fail=1
	fi
	for b in "$tmp"/.blocks/*.sh; do
		[ -e "$b" ] || continue
		blocks=$((blocks + 1))
		line=$(basename "$b" .sh | sed 's/^0*//')
		want=$(grep -v '^[[:space:]]*$' "$b" | tail -n 1 | sed -n 's/.*#[[:space:]]*exit[[:space:]]\{1,\}\([0-9]\{1,\}\)[[:space:]]*$/\1/p')
		want=${want:-0}
		(cd "$tmp" && PATH="$tmp/bin:$PATH" timeout "$TIMEOUT" sh -e "$b") >"$b.log" 2>&1
		got=$?
		if [ "$got" -ne "$want" ]; then
			echo "$md:$line: the block exited with status $got, expected $want; its output ends:"
			tail -n 15 "$b.log" | sed 's/^/    /'
			fail=1
		fi
	done
	rm -rf "$tmp"
done
echo "doctest: $blocks blocks in $# files"
exit $fail
