#!/bin/sh
# farm-test.sh BIN - the farm render on real engines (run once by `make test-long`):
#   1. a single-machine render of an example scene (the reference frame-hash manifest);
#   2. the same scene in chunks through GNU parallel (cache step, chunks with 2 jobs,
#      joins), checked against the reference by manifest, and the joined MP4 by ffprobe;
#   3. the same as a Slurm job array through `tidepool tasks --slurm` on a single-node
#      Slurm started by scripts/slurm-local.sh, checked the same way.
# Any failure, including Slurm not starting, fails with the reason. Slurm is stopped
# again at the end (only the daemons slurm-local.sh started).
set -eu

BIN=$(realpath "${1:-build/tidepool}")
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SCENE=$ROOT/scenes/pond.json
WORK=$(mktemp -d /tmp/tidepool-farm.XXXXXX)
export TP_SLURM_DIR="$WORK/slurm"
export SLURM_CONF="$TP_SLURM_DIR/slurm.conf"
started=0

cleanup() {
	if [ $started -eq 1 ]; then
		sh "$ROOT/scripts/slurm-local.sh" stop || true
	fi
	rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

fail() {
	echo "farm-test: FAIL: $*" >&2
	exit 1
}

# 30 frames in chunks of 8 (the last one shorter), an MP4 and a hash manifest.
OPTS="--frames 30 --threads 1 --crf 23 --preset veryfast"
frames() { ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 "$1"; }

# shellcheck disable=SC2086 # $OPTS is several words on purpose
check() { # DIR: the chunked run's outputs against the reference
	"$BIN" compare "$WORK/ref.manifest" "$1/out/pond.manifest" -q ||
		fail "$1: frames differ from the single-machine render"
	n=$(frames "$1/out/pond.mp4") || fail "$1/out/pond.mp4: ffprobe cannot read it"
	[ "$n" = 30 ] || fail "$1/out/pond.mp4: $n frames, expected 30"
	[ -z "$("$BIN" tasks "$SCENE" $OPTS --chunk 8 --cache cache -o out/pond.mp4 --hash out/pond.manifest --missing)" ] ||
		fail "$1: tasks --missing still lists work after a complete run"
}

cd "$WORK"
# shellcheck disable=SC2086
"$BIN" render "$SCENE" $OPTS -o null --hash ref.manifest -q || fail "reference render failed"

# GNU parallel, two jobs at a time.
command -v parallel >/dev/null || fail "GNU parallel is not installed (scripts/install-deps.sh installs it)"
mkdir -p par && cd par
T="$BIN tasks $SCENE $OPTS --chunk 8 --cache cache -o out/pond.mp4 --hash out/pond.manifest --bin $BIN"
$T --step cache | sh || fail "parallel: the cache step failed"
$T --step render | parallel --will-cite --halt now,fail=1 -j 2 || fail "parallel: a chunk failed"
$T --step join | sh || fail "parallel: the join failed"
check "$WORK/par"
echo "farm-test: GNU parallel: 4 chunks + join match the single-machine render"
cd "$WORK"

# Slurm: a single-node cluster, the driver script from tasks --slurm, jobs waited for.
started=1
sh "$ROOT/scripts/slurm-local.sh" start >/dev/null || fail "Slurm did not start (reason above)"
mkdir -p slurm-run && cd slurm-run
$T --slurm >farm.sh || fail "tasks --slurm failed"
grep -q -- "--array=0-3" farm.sh || fail "farm.sh has no 4-task job array"
timeout 600 sh farm.sh --wait >submit.log 2>&1 || { cat submit.log >&2; fail "slurm: a job failed (see above)"; }
check "$WORK/slurm-run"
echo "farm-test: Slurm: cache job, 4-task array and join job match the single-machine render"
