/* tidepool-bench: runs the registered workloads (all, or those named) and prints a table.
 * scripts/bench.sh runs it as part of `make bench`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/bench.h"

extern const bench_entry bench_render;
extern const bench_entry bench_ripple, bench_hooke;
extern const bench_entry bench_shallow;
extern const bench_entry bench_sph;
extern const bench_entry bench_airy;

/* One line per workload. */
static const bench_entry *const entries[] = {
	&bench_render, &bench_ripple, &bench_hooke, &bench_shallow, &bench_sph, &bench_airy, NULL,
};

double bench_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void bench_row(const char *workload, const char *metric, double value, const char *unit,
	       double baseline, int higher_is_better)
{
	if (!(value > 0 && baseline > 0)) { /* a measurement with no same-run baseline */
		printf("| %-34s | %-22s | %12.2f %-8s | %12s | %8s |\n", workload, metric, value,
		       unit, "-", "-");
		fflush(stdout);
		return;
	}
	double ratio = higher_is_better ? value / baseline : baseline / value;
	printf("| %-34s | %-22s | %12.2f %-8s | %12.2f | %7.2fx |\n", workload, metric, value, unit,
	       baseline, ratio);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "--seed-port")) {
		int w, h;
		if (argc != 5 || sscanf(argv[3], "%dx%d", &w, &h) != 2 || w < 2 || h < 2 ||
		    atoi(argv[4]) < 1) {
			fprintf(stderr, "usage: tidepool-bench --seed-port SCENE WxH FRAMES\n");
			return 2;
		}
		return bench_seed_port(argv[2], w, h, atoi(argv[4]));
	}
	if (argc >= 3 && !strcmp(argv[1], "--png-decode"))
		return bench_png_decode(argc - 2, argv + 2);
	printf("| %-34s | %-22s | %21s | %12s | %8s |\n", "workload", "metric", "value", "baseline",
	       "ratio");
	printf("|%s|%s|%s|%s|%s|\n", "------------------------------------",
	       "------------------------", "-----------------------", "--------------",
	       "----------");
	for (int i = 0; entries[i]; i++) {
		int want = argc < 2;
		for (int a = 1; a < argc; a++)
			want |= !strcmp(argv[a], entries[i]->name);
		if (want)
			entries[i]->run();
	}
	return 0;
}
