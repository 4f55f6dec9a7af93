#!/bin/sh
# make bench: every workload with its throughput, the same run's baseline and the ratio.
# Usage: scripts/bench.sh [BUILD_DIR]   (default: build)
#   TP_BENCH_ONLY="mp4 sph" runs only the named workloads (render ripple hooke shallow sph
#   airy e2e aa textures shallowrate ocean mp4 mp4k compare flip farm preview; `make bench ONLY="mp4 sph"` sets it).
# Benchmarks report; they never fail on speed.
set -eu
BUILD=${1:-build}
TP="$BUILD/tidepool"
BENCH="$BUILD/tidepool-bench"
# Like the tidepool binary itself (src/main.c): idle OpenMP workers spin briefly (about
# 0.3 ms) and then sleep, so the solvers neither wait on a wake-up between their loops nor
# fight x264's threads for the two cores. A caller's OMP_WAIT_POLICY or GOMP_SPINCOUNT wins.
if [ -z "${OMP_WAIT_POLICY:-}" ] && [ -z "${GOMP_SPINCOUNT:-}" ]; then
	export GOMP_SPINCOUNT=5000
fi
for f in "$TP" "$BENCH"; do
	[ -x "$f" ] || { echo "bench: $f is missing (make first, or: make bench)" >&2; exit 2; }
done
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT INT TERM

echo "tidepool benchmarks on $(nproc) cores ($(uname -m)); ratio > 1 means tidepool is faster"
echo
ONLY=${TP_BENCH_ONLY:-}
want() { [ -z "$ONLY" ] || case " $ONLY " in *" $1 "*) true ;; *) false ;; esac; }

# --- C workloads: solvers and renderer against tests/reference/ ports --------------------
C_NAMES=""
for n in render ripple hooke shallow sph airy; do want "$n" && C_NAMES="$C_NAMES $n"; done
# The table header always; "-" names no workload, so only the chosen ones run.
# shellcheck disable=SC2086 # the names are words
if [ -z "$ONLY" ]; then "$BENCH"; else "$BENCH" - $C_NAMES; fi

# --- command-level workloads ------------------------------------------------------------
# (each section prints rows in the same table format)

# --- e2e: whole processes, `tidepool render -o null` against the seed ports ----------------
# `tidepool render SCENE --size WxH --frames N -o null --threads 2`, and the same with
# `--hash` (the CI path: every frame hashed into a manifest), against `tidepool-bench
# --seed-port SCENE WxH N`: the plain single-threaded ports of the seed loops simulating
# the same steps per frame and rendering with the seed's nearest-pixel refraction
# (tests/bench/seed_port.c). Frames per second of wall time, process start to exit. Runs
# alternate (-o null and --hash in turn first), best of TP_BENCH_E2E_REPS (default 4)
# each. Targets: 4x the seed ports at 1920x1080 for the ripple (pond) and hooke (rain)
# scenes, 8x for the busy storms; --hash at most 10% on top. A row named "aa off" draws
# with --set render.antialias=false (one lookup a pixel, as the seed ports draw).
e2e_time() { # command...: runs it, prints elapsed seconds
	t0=$(date +%s.%N)
	"$@" >/dev/null
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
}
e2e_min() { awk -v a="$1" -v b="$2" 'BEGIN { print (b == "" || a + 0 < b + 0) ? a : b }'; }
e2e_scene() { # scene size frames [label extra-render-arguments...]
	sc=$1 size=$2 n=$3 name=$(basename "$1" .json)
	shift 3
	if [ $# -gt 0 ]; then name="$name $1"; shift; fi
	tp="" th="" sp=""
	i=0
	while [ "$i" -lt "${TP_BENCH_E2E_REPS:-4}" ]; do
		sp=$(e2e_min "$(e2e_time "$BENCH" --seed-port "$sc" "$size" "$n")" "$sp")
		# -o null and --hash take turns going first: a process's first touch of memory
		# the one before it did not free costs more (transparent huge pages in a VM)
		for what in $([ $((i % 2)) = 0 ] && echo "null hash" || echo "hash null"); do
			if [ "$what" = null ]; then
				tp=$(e2e_min "$(e2e_time "$TP" render "$sc" -q -y --size "$size" --frames "$n" -o null --threads 2 "$@")" "$tp")
			else
				th=$(e2e_min "$(e2e_time "$TP" render "$sc" -q -y --size "$size" --frames "$n" -o null --threads 2 \
					"$@" --hash "$WORK/e2e.manifest")" "$th")
			fi
		done
		i=$((i + 1))
	done
	awk -v w="$name $size -o null" -v t="$tp" -v s="$sp" -v n="$n" 'BEGIN {
		printf "| %-34s | %-22s | %12.2f %-8s | %12.2f | %7.2fx |\n", w, "frames/s vs seed ports", n / t, "fps", n / s, s / t }'
	awk -v w="$name $size -o null --hash" -v t="$th" -v s="$sp" -v n="$n" 'BEGIN {
		printf "| %-34s | %-22s | %12.2f %-8s | %12.2f | %7.2fx |\n", w, "frames/s vs seed ports", n / t, "fps", n / s, s / t }'
	awk -v w="$name $size" -v t="$tp" -v h="$th" 'BEGIN {
		printf "e2e: %s: --hash adds %.1f%% to -o null (target <= 10%%)\n", w, 100 * (h / t - 1) }'
	rm -f "$WORK/e2e.manifest"
}
if want e2e; then
	e2e_scene scenes/pond.json 1920x1080 "${TP_BENCH_E2E_FRAMES:-120}"
	e2e_scene scenes/rain.json 1920x1080 "${TP_BENCH_E2E_FRAMES:-120}"
	e2e_scene scenes/pond.json 3840x2160 "${TP_BENCH_E2E_4K_FRAMES:-30}"
	# Busy water (issue 29's rows, target 8x): 1080p-native storms, drops everywhere at
	# t = 0 and rain everywhere for the whole run, so calm-water skipping saves nothing.
	e2e_scene tests/bench/storm_ripple.json 1920x1080 "${TP_BENCH_E2E_FRAMES:-120}"
	e2e_scene tests/bench/storm_hooke.json 1920x1080 "${TP_BENCH_E2E_FRAMES:-120}"
	# The same storms drawn as the seed ports draw them, one lookup a pixel (anti-aliasing
	# off): the work the issue's comparison names; the rows above pay for the default
	# anti-aliasing, which supersamples about a quarter of a storm's pixels.
	e2e_scene tests/bench/storm_ripple.json 1920x1080 "${TP_BENCH_E2E_FRAMES:-120}" "aa off" \
		--set render.antialias=false
	e2e_scene tests/bench/storm_hooke.json 1920x1080 "${TP_BENCH_E2E_FRAMES:-120}" "aa off" \
		--set render.antialias=false
fi

# --- aa: anti-aliased refraction (render.antialias, src/core/render/refract_aa.c) ------------
# `tidepool render SCENE --size 1920x1080 --frames N -o null --threads 2` with the default
# anti-aliasing against the same with --set render.antialias=false, frames per second of
# wall time (simulation included, as a user sees it); runs alternate, best of
# TP_BENCH_AA_REPS (default 4) each. TP_BENCH_AA_FRAMES (default 120) frames.
aa_scene() { # scene [method: render.antialias, default true]
	name=$(basename "$1" .json) n=${TP_BENCH_AA_FRAMES:-120} on="" off="" i=0
	m=${2:-true} label=${2:-on}
	[ "$m" = true ] || m="\"$m\""
	while [ "$i" -lt "${TP_BENCH_AA_REPS:-4}" ]; do
		off=$(e2e_min "$(e2e_time "$TP" render "$1" -q -y --size 1920x1080 --frames "$n" -o null \
			--threads 2 --set render.antialias=false)" "$off")
		on=$(e2e_min "$(e2e_time "$TP" render "$1" -q -y --size 1920x1080 --frames "$n" -o null \
			--threads 2 --set "render.antialias=$m")" "$on")
		i=$((i + 1))
	done
	awk -v w="$name 1920x1080 antialias $label" -v t="$on" -v s="$off" -v n="$n" 'BEGIN {
		printf "| %-34s | %-22s | %12.2f %-8s | %12.2f | %7.2fx |\n", w, "frames/s vs off", n / t, "fps", n / s, s / t }'
}
if want aa; then
	aa_scene scenes/pond.json
	aa_scene scenes/rain.json
	# the footprint boxes (render.antialias "footprint", footprint.c) and a busy storm
	aa_scene scenes/rain.json footprint
	aa_scene tests/bench/storm_ripple.json
	aa_scene tests/bench/storm_ripple.json footprint
fi

# --- textures: a 1024x1024 tileable caustics loop of 64 frames, end to end -------------------
# scenes/textures/caustics_loop.json at 1024x1024 (the 256x256 scene scaled 4x), a loop of
# 64 frames (2.1333 s at 30 fps) written as 8-bit PNGs: output frames per second of wall
# time, the loop's warm-up and cross-fade included. Baseline: the same run in color mode
# (the refracted picture), so the ratio is what caustics cost relative to it. Runs
# alternate, best of TP_BENCH_TEX_REPS (default 2) each.
tex_time() { # command...: runs it, prints elapsed seconds
	t0=$(date +%s.%N)
	"$@"
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
}
tex_min() { awk -v a="$1" -v b="$2" 'BEGIN { print (b == "" || a + 0 < b + 0) ? a : b }'; }
tex_render() { # mode
	"$TP" render scenes/textures/caustics_loop.json -q -y --size 1024x1024 \
		--set loop.duration=2.1333333 -o "$1=$WORK/tex/%04d.png"
}
TEX_REPS=${TP_BENCH_TEX_REPS:-2}
if want textures; then
mkdir -p "$WORK/tex"
tex_best="" col_best=""
i=0
while [ "$i" -lt "$TEX_REPS" ]; do
	col_best=$(tex_min "$(tex_time tex_render color)" "$col_best")
	tex_best=$(tex_min "$(tex_time tex_render caustics)" "$tex_best")
	i=$((i + 1))
done
tex_frames=$(ls "$WORK/tex" | wc -l)
awk -v n="$tex_frames" -v t="$tex_best" -v c="$col_best" 'BEGIN {
	printf "| %-34s | %-22s | %12.2f %-8s | %12.2f | %7.2fx |\n", "caustics loop 1024x1024 x" n,
	       "frames/s vs color mode", n / t, "fps", n / c, c / t }'
rm -rf "$WORK/tex"
fi

# --- shallowrate: the shallow solver's default rate cap against the seed's ----------------
# scenes/shallow_drag.json at 640x360, 60 frames simulated and 1 rendered (-o null, 1
# thread): the default cap 0.4 (7 internal steps a frame) against the former default
# `params.rate=0.1` (13 steps) and the seed's `params.rate=0.005` (56 steps) in the same
# run. Frames per second of wall time, best of TP_BENCH_SHRATE_REPS (default 3), runs
# alternating.
shrate_run() { # extra args...
	e2e_time "$TP" render scenes/shallow_drag.json -q -y --size 640x360 --frames 60 --range 59-59 \
		-o null --threads 1 "$@"
}
if want shallowrate; then
	shr_new="" shr_mid="" shr_old=""
	i=0
	while [ "$i" -lt "${TP_BENCH_SHRATE_REPS:-3}" ]; do
		shr_new=$(e2e_min "$(shrate_run)" "$shr_new")
		shr_mid=$(e2e_min "$(shrate_run --set params.rate=0.1)" "$shr_mid")
		shr_old=$(e2e_min "$(shrate_run --set params.rate=0.005)" "$shr_old")
		i=$((i + 1))
	done
	awk -v t="$shr_new" -v m="$shr_mid" -v o="$shr_old" 'BEGIN {
		printf "| %-34s | %-22s | %12.2f %-8s | %12.2f | %7.2fx |\n", "shallow_drag 640x360 rate cap 0.4",
		       "frames/s vs rate 0.1", 60 / t, "fps", 60 / m, m / t
		printf "| %-34s | %-22s | %12.2f %-8s | %12.2f | %7.2fx |\n", "shallow_drag 640x360 rate cap 0.4",
		       "frames/s vs rate 0.005", 60 / t, "fps", 60 / o, o / t }'
fi

# --- ocean: choppy ocean maps as OpenEXR, 512x512 x 64 frames, end to end -----------------
# scenes/textures/ocean_choppy.json as written: 512x512, a 64-frame exact loop of choppy
# JONSWAP waves with foam, written as displacement, normal and foam OpenEXR sequences (half,
# ZIP): output frames per second of wall time, the foam's warm-up included. Baseline: the
# same three maps as 16-bit PNGs in the same run. Target: 30 frames/s on 2 cores. Runs
# alternate, best of TP_BENCH_OCEAN_REPS (default 3) each. The previous run's files are
# removed (untimed) first: replacing a file by rename makes ext4 flush the new one and
# free (discard) the old one inside rename(2), which the first run never paid.
ocean_render() { # ext
	"$TP" render scenes/textures/ocean_choppy.json -q -y -o "displacement=$WORK/ocean/d%04d.$1" \
		-o "normal=$WORK/ocean/n%04d.$1" -o "foam=$WORK/ocean/f%04d.$1"
}
if want ocean; then
mkdir -p "$WORK/ocean"
exr_best="" png_best=""
i=0
while [ "$i" -lt "${TP_BENCH_OCEAN_REPS:-3}" ]; do
	rm -f "$WORK"/ocean/*
	png_best=$(tex_min "$(tex_time ocean_render png)" "$png_best")
	rm -f "$WORK"/ocean/*
	exr_best=$(tex_min "$(tex_time ocean_render exr)" "$exr_best")
	i=$((i + 1))
done
ocean_frames=$(ls "$WORK/ocean" | grep -c 'd.*exr$')
awk -v n="$ocean_frames" -v t="$exr_best" -v c="$png_best" 'BEGIN {
	printf "| %-34s | %-22s | %12.2f %-8s | %12.2f | %7.2fx |\n", "ocean EXR d+n+f 512x512 x" n,
	       "frames/s vs 16-bit PNG", n / t, "fps", n / c, c / t }'
rm -rf "$WORK/ocean"
fi

# --- mp4: `tidepool render` to H.264 against ffmpeg encoding the same frames --------------
# scenes/pond.json at 1920x1080, 300 frames (TP_BENCH_MP4_FRAMES overrides), and the busy
# scenes/rain.json at 1920x1080 with the presets medium and veryfast. The baseline
# is ffmpeg reading the identical RGB frames from a pipe with identical settings (libx264
# medium, crf 18, 4 frame threads, BT.709 limited range, SEI stripped). tidepool converts
# RGB to yuv420p with its own fixed-point BT.709 code (src/core/util/image.c), ffmpeg with
# swscale (bit-exact flags), so the streams differ in the last bit of some samples; the
# PSNR between the two decoded videos is printed to show they are the same picture.
# Target: tidepool/ffmpeg wall time <= 1.00 (table ratio >= 1). Runs alternate in
# TP_BENCH_MP4_REPS pairs (default 5; 3 at 4K), so both see the same machine load; the row
# shows each side's median, and a line the ratio of each pair and their median. One run of
# each before the pairs is not counted (first runs pay for cold caches).
mp4_row() { # workload metric value unit baseline  (lower is better)
	awk -v w="$1" -v m="$2" -v v="$3" -v u="$4" -v b="$5" 'BEGIN {
		printf "| %-34s | %-22s | %12.2f %-8s | %12.2f | %7.2fx |\n", w, m, v, u, b, (v > 0 ? b / v : 0) }'
}
mp4_time() { # command...: runs it, prints elapsed seconds
	t0=$(date +%s.%N)
	"$@"
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
}
mp4_median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END {
	print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
mp4_ffmpeg() { # size preset out
	cat "$WORK/mp4.rgb" | ffmpeg -nostdin -v error -y -f rawvideo -pix_fmt rgb24 -s "$1" -r 30 -i - \
		-vf "scale=out_color_matrix=bt709:out_range=tv:flags=bilinear+accurate_rnd+bitexact,format=yuv420p,setsar=1" \
		-c:v libx264 -preset "$2" -crf 18 -threads 4 -color_range tv -colorspace bt709 \
		-color_primaries bt709 -color_trc bt709 -flags +bitexact -fflags +bitexact \
		-bsf:v filter_units=remove_types=6 -movflags +faststart -map_metadata -1 "$3"
}
mp4_tidepool() { # scene size frames preset out
	"$TP" render "$1" -q -y --size "$2" --frames "$3" --preset "$4" -o "$5"
}
# mp4_pair SCENE SIZE FRAMES PRESET REPS [NOTE]: the same frames rendered to PNG and unpacked to
# raw RGB (untimed), one untimed run of each, then ffmpeg and tidepool in turn, REPS pairs;
# prints the row (medians) and the pairs' ratios (and NOTE), and leaves the two videos in
# $WORK/tp.mp4 and $WORK/ff.mp4.
mp4_pair() {
	scene=$1
	shift
	mkdir -p "$WORK/mp4png"
	"$TP" render "$scene" -q -y --size "$1" --frames "$2" -o "$WORK/mp4png/%04d.png"
	ffmpeg -nostdin -v error -i "$WORK/mp4png/%04d.png" -f rawvideo -pix_fmt rgb24 "$WORK/mp4.rgb"
	rm -rf "$WORK/mp4png"
	tps="" ffs="" ratios=""
	mp4_ffmpeg "$1" "$3" "$WORK/ff.mp4" # a warm-up of each, not counted
	mp4_tidepool "$scene" "$1" "$2" "$3" "$WORK/tp.mp4"
	i=0
	while [ "$i" -lt "$4" ]; do
		f=$(mp4_time mp4_ffmpeg "$1" "$3" "$WORK/ff.mp4")
		t=$(mp4_time mp4_tidepool "$scene" "$1" "$2" "$3" "$WORK/tp.mp4")
		tps="$tps $t" ffs="$ffs $f"
		ratios="$ratios $(awk -v t="$t" -v f="$f" 'BEGIN { printf "%.3f", t / f }')"
		i=$((i + 1))
	done
	rm -f "$WORK/mp4.rgb"
	tp_med=$(echo "$tps" | mp4_median) ff_med=$(echo "$ffs" | mp4_median)
	label="mp4 $(basename "$scene" .json) $1 x$2"
	[ "$3" = medium ] || label="$label $3"
	mp4_row "$label" "wall time vs ffmpeg" "$tp_med" "s" "$ff_med"
	echo "$label: tidepool/ffmpeg wall time per pair:$ratios; median" \
		"$(echo "$ratios" | mp4_median)${5:-}"
}
MP4_FRAMES=${TP_BENCH_MP4_FRAMES:-300}
MP4_REPS=${TP_BENCH_MP4_REPS:-5}
if ! want mp4; then
	:
elif command -v ffmpeg >/dev/null 2>&1; then
	mp4_pair scenes/pond.json 1920x1080 "$MP4_FRAMES" medium "$MP4_REPS" " (target <= 1.00)"
	psnr=$(ffmpeg -nostdin -i "$WORK/tp.mp4" -i "$WORK/ff.mp4" -lavfi psnr -f null - 2>&1 |
		sed -n 's/.*PSNR.* average:\([0-9.inf]*\).*/\1/p' | tail -1)
	echo "mp4: PSNR of the two videos: $psnr dB"
	# A busy scene (issue 29): rain over the whole pool for the whole run, where the
	# encoder no longer hides the simulation and the render, at medium and veryfast.
	for preset in medium veryfast; do
		mp4_pair scenes/rain.json 1920x1080 "$MP4_FRAMES" "$preset" "$MP4_REPS" " (target <= 1.00)"
	done
	rm -f "$WORK/tp.mp4" "$WORK/ff.mp4"
else
	echo "mp4: skipped (ffmpeg not installed)"
fi

# --- mp4k: 3840x2160 to H.264 with preset veryfast, against ffmpeg ------------------------
# As the mp4 row, at 4K with `--preset veryfast` (and ffmpeg's -preset veryfast), 60 frames
# of scenes/pond.json (TP_BENCH_MP4K_FRAMES overrides), 5 pairs (TP_BENCH_MP4K_REPS).
if ! want mp4k; then
	:
elif command -v ffmpeg >/dev/null 2>&1; then
	mp4_pair scenes/pond.json 3840x2160 "${TP_BENCH_MP4K_FRAMES:-60}" veryfast "${TP_BENCH_MP4K_REPS:-5}"
	rm -f "$WORK/tp.mp4" "$WORK/ff.mp4"
else
	echo "mp4k: skipped (ffmpeg not installed)"
fi

# --- compare: `tidepool compare` against ImageMagick `compare -metric AE` ------------------
# Pairs of 3840x2160 PNGs made from scenes/pond.json: frames 6 and 7 (the first drop's
# rings: a local change), frame 7 against itself brightened by 1% (every pixel changed),
# and frame 7 against a copy (identical). Both tools decode both files and count the
# differing pixels; tidepool also computes max-diff, PSNR, SSIM and the changed rectangle.
# Target: tidepool no slower than ImageMagick (ratio >= 1). Runs alternate, best of
# TP_BENCH_CMP_REPS (default 3) each, so both see the same machine load.
cmp_time() { # command...: runs it (its exit status does not matter), prints elapsed seconds
	t0=$(date +%s.%N)
	"$@" >/dev/null 2>&1 || true
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
}
cmp_min() { awk -v a="$1" -v b="$2" 'BEGIN { print (b == "" || a + 0 < b + 0) ? a : b }'; }
CMP_REPS=${TP_BENCH_CMP_REPS:-3}
if ! want compare; then
	:
elif command -v compare >/dev/null 2>&1 && compare -version 2>/dev/null | grep -q ImageMagick; then
	C="$WORK/cmp"
	mkdir -p "$C"
	"$TP" render scenes/pond.json -q -y --size 3840x2160 --frames 8 -o "$C/%d.png"
	convert "$C/7.png" -evaluate add 1% "$C/all.png"
	cp "$C/7.png" "$C/same.png"
	for pair in "local:6.png:7.png" "all:7.png:all.png" "identical:7.png:same.png"; do
		name=${pair%%:*}
		rest=${pair#*:}
		a="$C/${rest%%:*}"
		b="$C/${rest#*:}"
		tp_best="" im_best=""
		i=0
		while [ "$i" -lt "$CMP_REPS" ]; do
			im_best=$(cmp_min "$(cmp_time compare -metric AE "$a" "$b" null:)" "$im_best")
			tp_best=$(cmp_min "$(cmp_time "$TP" compare -q "$a" "$b")" "$tp_best")
			i=$((i + 1))
		done
		awk -v w="compare 3840x2160 png, $name" -v v="$tp_best" -v b="$im_best" 'BEGIN {
			printf "| %-34s | %-22s | %12.2f %-8s | %12.2f | %7.2fx |\n", w, "wall time vs IM AE", v, "s", b,
			       (v > 0 ? b / v : 0) }'
	done
	# PNG decoding is most of a compare: tidepool's reader (libpng) against libspng on
	# the same two files (ratio > 1: libpng faster), pixels checked equal.
	"$BENCH" --png-decode "$C/7.png" "$C/all.png"
	rm -rf "$C"
else
	echo "compare: skipped (ImageMagick compare not installed)"
fi

# --- flip: `tidepool compare --metric flip` on 1920x1080 frames (docs/compare.md) ---------
# TP_BENCH_FLIP_FRAMES (default 10) frames of scenes/pond.json against the same frames
# rendered with render.tint_strength=0.45: every pixel differs, so FLIP's changed-rectangle
# shortcut does not apply (the worst case). The row: `compare --metric flip --threads 2`
# frames per second against the same comparison without FLIP (baseline: decoding and the
# other metrics). The line after it: FLIP alone, frames / (time with - time without).
# Target: FLIP alone >= 10 frames/s on 2 cores. Runs alternate, best of TP_BENCH_CMP_REPS.
FLIP_FRAMES=${TP_BENCH_FLIP_FRAMES:-10}
if want flip; then
	C="$WORK/flip"
	mkdir -p "$C"
	"$TP" render scenes/pond.json -q -y --size 1920x1080 --frames "$FLIP_FRAMES" -o "$C/a/%03d.png"
	"$TP" render scenes/pond.json -q -y --size 1920x1080 --frames "$FLIP_FRAMES" \
		--set render.tint_strength=0.45 -o "$C/b/%03d.png"
	with="" without=""
	i=0
	while [ "$i" -lt "$CMP_REPS" ]; do
		without=$(cmp_min "$(cmp_time "$TP" compare -q --threads 2 "$C/a" "$C/b")" "$without")
		with=$(cmp_min "$(cmp_time "$TP" compare -q --threads 2 --metric flip "$C/a" "$C/b")" "$with")
		i=$((i + 1))
	done
	awk -v w="compare --metric flip 1920x1080" -v t="$with" -v b="$without" -v n="$FLIP_FRAMES" 'BEGIN {
		printf "| %-34s | %-22s | %12.2f %-8s | %12.2f | %7.2fx |\n", w, "frames/s vs no FLIP", n / t, "fps",
		       n / b, b / t }'
	awk -v t="$with" -v b="$without" -v n="$FLIP_FRAMES" 'BEGIN {
		d = t - b; printf "flip: FLIP alone %.1f frames/s at 1920x1080 on 2 threads (target >= 10)\n", (d > 0 ? n / d : 0) }'
	rm -rf "$C"
fi

# --- farm: one MP4 rendered in 4 chunks by 2 GNU parallel workers, then joined -------------
# scenes/pond.json at 1920x1080, 600 frames (TP_BENCH_FARM_FRAMES overrides): the single-
# process render against `tidepool tasks --chunk 150 --cache` run as cache step, chunks
# through `parallel -j 2` and `tidepool join`, in the same run. Chunks run with --threads 1
# so two of them share the two cores; the single process uses every core. Also the cache
# step's own time and the size of its checkpoints. (docs/farm.md)
FARM_FRAMES=${TP_BENCH_FARM_FRAMES:-600}
if ! want farm; then
	:
elif command -v parallel >/dev/null 2>&1; then
	F="$WORK/farm"
	mkdir -p "$F"
	chunk=$(( (FARM_FRAMES + 3) / 4 ))
	far_t0=$(date +%s.%N)
	"$TP" render scenes/pond.json -q -y --size 1920x1080 --frames "$FARM_FRAMES" -o "$F/single.mp4"
	far_t1=$(date +%s.%N)
	T="$TP tasks scenes/pond.json --size 1920x1080 --frames $FARM_FRAMES --chunk $chunk --cache $F/cache --threads 1 -o $F/out/farm.mp4 --bin $TP"
	$T --step cache | sh
	far_t2=$(date +%s.%N)
	$T --step render | parallel --will-cite --halt now,fail=1 -j 2
	$T --step join | sh
	far_t3=$(date +%s.%N)
	nck=$(ls "$F/cache" | wc -l)
	bytes=$(du -sb "$F/cache" | cut -f1)
	awk -v a="$far_t0" -v b="$far_t1" -v c="$far_t2" -v d="$far_t3" -v n="$FARM_FRAMES" 'BEGIN {
		single = b - a; farm = d - b
		printf "| %-34s | %-22s | %12.2f %-8s | %12.2f | %7.2fx |\n", "farm pond 1920x1080 x" n " mp4",
		       "4 chunks -j2 + join", farm, "s", single, (farm > 0 ? single / farm : 0) }'
	awk -v b="$far_t1" -v c="$far_t2" -v k="$nck" -v s="$bytes" 'BEGIN {
		printf "farm: cache step %.2f s, %d checkpoints, %.1f MB in all (%.1f MB each); included in the farm time\n",
		       c - b, k, s / 1e6, (k > 0 ? s / 1e6 / k : 0) }'
	rm -rf "$F"
else
	echo "farm: skipped (GNU parallel not installed)"
fi

# --- preview: `tidepool preview` over HTTP at 640x360 (docs/preview.md) -------------------
# (the square texture scenes at the fitted 360x360)
# For the ripple (pond), hooke (rain), shallow (shallow_drag) and airy (wind_pool) example
# scenes: playback (every GET /frame/N.png in order, one keep-alive connection) against the
# 30 fps target, the slowest of 20 seeks to random frames against 200 ms (the in-memory
# checkpoints made by a first pass), and the time from a save (temporary file renamed over
# the scene) to the new scene's frame at the page's position against 300 ms, and to the
# draft's frame (the first picture the page shows) for every example scene. Details and
# knobs (TP_BENCH_PREVIEW_*): tests/bench/preview_bench.py. Then the page's own playback
# rate in headless Chromium (TP_BENCH_PLAY_*: tests/bench/preview_play.py).
if want preview; then
	/usr/bin/python3 tests/bench/preview_bench.py "$TP" scenes/pond.json scenes/rain.json \
		scenes/shallow_drag.json scenes/wind_pool.json
	# the first picture after a save (the draft) for the other example scenes too
	TP_BENCH_PREVIEW_FRAMES=${TP_BENCH_PREVIEW_FRAMES:-30} TP_BENCH_PREVIEW_SEEKS=${TP_BENCH_PREVIEW_SEEKS:-5} \
		/usr/bin/python3 tests/bench/preview_bench.py "$TP" scenes/boxes.json \
		scenes/rowing.json scenes/shallow_float.json scenes/shallow_rain.json \
		scenes/sph_box.json scenes/sph_dambreak.json scenes/sph_float.json \
		scenes/sph_nozzle.json scenes/sph_slosh.json scenes/sph_tip.json \
		scenes/textures/caustics_loop.json scenes/textures/height_sequence.json \
		scenes/textures/normal_flipbook.json scenes/textures/ocean_choppy.json \
		scenes/textures/pool_caustics.json
	# the page itself playing pond.json at 640x360 in headless Chromium (target 27 fps on a
	# quiet 2-core machine; tests/bench/preview_play.py)
	/usr/bin/python3 tests/bench/preview_play.py "$TP" scenes/pond.json 640x360 || true
fi
