#!/bin/sh
# fuzz-long.sh [TARGET...] - the long fuzz runs of docs/limits.md ("Fuzzing"): each target
# (all of FUZZ_TARGETS if none given) for FUZZ_RUNS executions (10 million unless set),
# one after the other, one process each, `nice -n 19`, with the limits of `make
# fuzz-smoke`; FUZZ_MAX_TIME=S also stops each after S seconds (the row then says how
# many executions were done). Meant for a quiet machine: a 5 s timeout can fire on a loaded one for an
# input that takes milliseconds alone. Run it from the tree's root after `make fuzz`
# (`make fuzz-long` does both).
#
# Each target works on its own corpus, build/fuzz/long/TARGET (seeded from
# tests/fuzz/corpus/TARGET, kept between runs), with findings in build/fuzz/artifacts/.
# The results, one table row per target as docs/limits.md shows them (executions, time,
# rate, edges and features at the end, findings), go to build/fuzz/long/results.md,
# with the load average before and after each run. A target that finds something stops
# there (libFuzzer's way); the others still run; the exit status is 1 if any found.
set -u

FUZZ_BUILD=${FUZZ_BUILD:-build/fuzz}
FUZZ_RUNS=${FUZZ_RUNS:-10000000}
FUZZ_MAX_TIME=${FUZZ_MAX_TIME:-0}
TARGETS=${*:-$(sed -n 's/^FUZZ_TARGETS = //p' Makefile)}
OUT=$FUZZ_BUILD/long
RES=$OUT/results.md
mkdir -p "$OUT" "$FUZZ_BUILD/artifacts"

load() { cut -d' ' -f1-3 /proc/loadavg; }

if [ ! -f "$RES" ]; then
	printf '| target | executions | time | executions/s | cov (edges) | ft (features) | findings | load before / after | date |\n' >"$RES"
	printf '|---|---|---|---|---|---|---|---|---|\n' >>"$RES"
fi
status=0
for t in $TARGETS; do
	bin=$FUZZ_BUILD/fuzz_$t
	[ -x "$bin" ] || { echo "fuzz-long: no $bin (run make fuzz)" >&2; exit 2; }
	mkdir -p "$OUT/$t"
	log=$OUT/$t.log
	before=$(load)
	start=$(date +%s)
	echo "  FUZZ    $t: $FUZZ_RUNS executions (log: $log)"
	env ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
		UBSAN_OPTIONS=print_stacktrace=1 OMP_NUM_THREADS=1 \
		nice -n 19 "$bin" -malloc_limit_mb=512 -rss_limit_mb=2048 -timeout=5 \
		-dict="tests/fuzz/$t.dict" -runs="$FUZZ_RUNS" -max_total_time="$FUZZ_MAX_TIME" -print_final_stats=1 \
		-artifact_prefix="$FUZZ_BUILD/artifacts/$t-" "$OUT/$t" "tests/fuzz/corpus/$t" \
		>"$log" 2>&1
	rc=$?
	secs=$(($(date +%s) - start))
	[ $secs -gt 0 ] || secs=1
	n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	n=${n:-0}
	last=$(grep -E '^#[0-9]+' "$log" | tail -1)
	cov=$(echo "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
	ft=$(echo "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
	if [ $rc -eq 0 ]; then
		found=none
	else
		status=1
		art=$(sed -n 's/.*Test unit written to \(.*\)/\1/p' "$log" | tail -1)
		why=$(grep -m1 -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error)' "$log" | cut -c1-120)
		found="exit $rc: ${why:-see $log} (${art:-no input saved})"
	fi
	printf '| `fuzz_%s` | %s | %d s | %d | %s | %s | %s | %s / %s | %s |\n' "$t" "$n" "$secs" \
		$((n / secs)) "${cov:--}" "${ft:--}" "$found" "$before" "$(load)" \
		"$(date -u +%Y-%m-%dT%H:%MZ)" >>"$RES"
	tail -1 "$RES"
done
exit $status
