/*
 * bench.h - the benchmark driver's registry. Each workload file defines one or more
 * bench_entry functions and is listed once in tests/bench/main.c. A workload measures
 * itself and its same-run baseline and prints rows through bench_row(). Benchmarks never
 * fail on speed; they only report.
 */
#ifndef TP_BENCH_H
#define TP_BENCH_H

typedef struct bench_entry {
	const char *name;  /* selects it on the command line: tidepool-bench NAME... */
	void (*run)(void);
} bench_entry;

/* Seconds on a monotonic clock. */
double bench_now(void);

/* Prints one table row: workload, what was measured, its value and unit, the baseline's
 * value, and the ratio (value/baseline when higher is better, baseline/value otherwise). */
void bench_row(const char *workload, const char *metric, double value, const char *unit,
	       double baseline, int higher_is_better);

/* `tidepool-bench --seed-port SCENE WxH FRAMES` (seed_port.c): the seed ports doing what
 * `tidepool render` does, as a process to time. Returns the exit status. */
int bench_seed_port(const char *path, int w, int h, int frames);
/* `tidepool-bench --png-decode FILE...` (bench_png.c): tidepool's PNG reader (libpng)
 * against libspng on the same files, in alternating rounds. */
int bench_png_decode(int n, char **paths);

#endif
