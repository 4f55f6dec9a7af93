#include "util/progress.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

double tp_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void tp_progress_start(tp_progress *p, const char *label, int total, int quiet)
{
	p->label = label;
	p->total = total;
	p->quiet = quiet;
	p->tty = isatty(STDERR_FILENO);
	p->start = p->last = tp_now();
	p->shown = 0;
}

static void fmt_eta(double s, char *buf, size_t n)
{
	long t = (long)(s + 0.5);
	if (t >= 3600)
		snprintf(buf, n, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
	else
		snprintf(buf, n, "%ld:%02ld", t / 60, t % 60);
}

void tp_progress_update(tp_progress *p, int done)
{
	if (p->quiet)
		return;
	double now = tp_now();
	double interval = p->tty ? 0.1 : 5.0;
	/* The last frame's line is left to the summary, whose fps is the same measure over
	 * the whole run (encoders finished): two figures for one run would disagree. */
	if (now - p->last < interval || done >= p->total)
		return;
	p->last = now;
	double el = now - p->start;
	double fps = el > 0 ? done / el : 0;
	char eta[32] = "--:--";
	if (fps > 0)
		fmt_eta((p->total - done) / fps, eta, sizeof eta);
	double pct = p->total > 0 ? 100.0 * done / p->total : 100.0;
	if (p->tty) {
		fprintf(stderr, "\r\033[K%s: frame %d/%d  %5.1f%%  %6.1f fps  ETA %s", p->label, done,
			p->total, pct, fps, eta);
		p->shown = 1;
	} else {
		fprintf(stderr, "%s: frame %d/%d (%.1f%%), %.1f fps, ETA %s\n", p->label, done,
			p->total, pct, fps, eta);
	}
	fflush(stderr);
}

void tp_progress_done(tp_progress *p, const char *summary)
{
	if (p->shown)
		fprintf(stderr, "\r\033[K");
	p->shown = 0;
	if (!p->quiet && summary)
		fprintf(stderr, "%s\n", summary);
}
