/* loop.c - seamless loops by running past the loop and cross-fading the surface (loop.h). */
#include "sim/loop.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/wire.h"

struct sim_loop {
	const scene *sc;
	stepper *st;
	int on;
	int frames, fade, start; /* F, B, S of loop.h */
	int next;                /* output frames given so far */
	int w, h;
	uint32_t *saved;         /* fade * w * h samples: s[S + k], int32 or float bits */
	uint32_t *blend;         /* w * h: the blended surface */
	double *rows;            /* 5 sums per row */
	int warmed;              /* frames simulated by the warm-up in this process */
};

int loop_create(const scene *sc, int threads, sim_loop **out, tp_err *err)
{
	*out = NULL;
	sim_loop *lp = calloc(1, sizeof *lp);
	if (!lp)
		return tp_errf(err, TP_EIO, "out of memory");
	lp->sc = sc;
	lp->w = sc->width;
	lp->h = sc->height;
	int rc = 0;
	if (sc->loop.on) {
		lp->on = 1;
		lp->frames = sc->loop.frames;
		lp->fade = sc->loop.fade_frames;
		lp->start = sc->loop.start_frame;
		/* A surface that repeats exactly every loop needs no cross-fade: frame F is
		 * frame 0 again. */
		const tp_solver *sv = solver_of_kind(sc->solver);
		if (sv->loops_exactly && sv->loops_exactly(sc))
			lp->fade = 0;
		if (sc->solver->caps & TP_SOLVER_PARTICLES) {
			rc = scene_errf(sc, err, TP_EINPUT, "loop", "needs a height-field solver (%s has particles)",
					sc->solver->name);
			goto fail;
		}
		size_t px = (size_t)lp->w * (size_t)lp->h;
		double bytes = (double)px * 4.0 * (lp->fade + 1);
		if (bytes > LOOP_MAX_BYTES) {
			rc = scene_errf(sc, err, TP_EINPUT, scene_has(sc, "loop.crossfade") ? "loop.crossfade" : "loop",
				     "the cross-fade keeps %d frames of %dx%d (%.1f GiB, over the %.0f GiB "
				     "limit); shorten \"crossfade\" or the size",
				     lp->fade, lp->w, lp->h, bytes / (1 << 30), LOOP_MAX_BYTES / (1 << 30));
			goto fail;
		}
		lp->saved = malloc(px * (size_t)(lp->fade ? lp->fade : 1) * sizeof *lp->saved);
		lp->blend = malloc(px * sizeof *lp->blend);
		lp->rows = malloc((size_t)lp->h * 5 * sizeof *lp->rows);
		if (!lp->saved || !lp->blend || !lp->rows) {
			rc = tp_errf(err, TP_EIO, "out of memory for the loop's cross-fade");
			goto fail;
		}
	}
	rc = stepper_create(sc, threads, &lp->st, err);
	if (rc < 0)
		goto fail;
	*out = lp;
	return 0;
fail:
	loop_destroy(lp);
	return rc;
}

void loop_destroy(sim_loop *lp)
{
	if (!lp)
		return;
	stepper_destroy(lp->st);
	free(lp->saved);
	free(lp->blend);
	free(lp->rows);
	free(lp);
}

stepper *loop_stepper(sim_loop *lp) { return lp->st; }

/* Both sample types are 4 bytes; rows are copied bit for bit. */
static void save_surface(const tp_surface *s, uint32_t *dst)
{
	for (int y = 0; y < s->h; y++)
		memcpy(dst + (size_t)y * s->w, (const uint32_t *)s->data + (ptrdiff_t)y * s->stride,
		       (size_t)s->w * sizeof *dst);
}

static inline double sample(const uint32_t *p, size_t i, int is_int)
{
	if (is_int)
		return (double)((const int32_t *)(const void *)p)[i];
	return (double)((const float *)(const void *)p)[i];
}

/*
 * out = m + g * (a (E - mE) + b (L - mL)),  m = a mE + b mL,  b = 1 - a,
 * where E is the early frame, L the late one, and g = sqrt(vT / vB) scales the blend's
 * variance vB = a^2 vE + b^2 vL + 2ab cov(E, L) to vT = a vE + b vL: two unrelated wave
 * fields keep their amplitude through the fade (a plain mix would lose 30% of it halfway,
 * which shows in caustics), and identical fields blend to themselves (g = 1). Sums are
 * per row in double, added in row order, so the result does not depend on threads.
 */
static void blend(sim_loop *lp, const uint32_t *early, const tp_surface *late, double a)
{
	const int w = lp->w, h = lp->h, is_int = late->type == TP_SAMPLE_I32;
	const double b = 1.0 - a;
#pragma omp parallel for schedule(static)
	for (int y = 0; y < h; y++) {
		const uint32_t *e = early + (size_t)y * w;
		const uint32_t *l = (const uint32_t *)late->data + (ptrdiff_t)y * late->stride;
		double se = 0, sl = 0, see = 0, sll = 0, sel = 0;
		for (int x = 0; x < w; x++) {
			double ve = sample(e, (size_t)x, is_int), vl = sample(l, (size_t)x, is_int);
			se += ve;
			sl += vl;
			see += ve * ve;
			sll += vl * vl;
			sel += ve * vl;
		}
		double *r = lp->rows + (size_t)y * 5;
		r[0] = se, r[1] = sl, r[2] = see, r[3] = sll, r[4] = sel;
	}
	double t[5] = { 0, 0, 0, 0, 0 };
	for (int y = 0; y < h; y++)
		for (int i = 0; i < 5; i++)
			t[i] += lp->rows[(size_t)y * 5 + i];
	double n = (double)w * h, me = t[0] / n, ml = t[1] / n;
	double ve = fmax(t[2] / n - me * me, 0), vl = fmax(t[3] / n - ml * ml, 0);
	double cov = t[4] / n - me * ml;
	double vb = a * a * ve + b * b * vl + 2 * a * b * cov, vt = a * ve + b * vl;
	double g = vb > 1e-30 * (vt + 1e-30) ? sqrt(vt / vb) : 1.0;
	g = g > 2.0 ? 2.0 : g; /* only strongly anti-correlated fields get near this */
	const double m = a * me + b * ml;
#pragma omp parallel for schedule(static)
	for (int y = 0; y < h; y++) {
		const uint32_t *e = early + (size_t)y * w;
		const uint32_t *l = (const uint32_t *)late->data + (ptrdiff_t)y * late->stride;
		uint32_t *o = lp->blend + (size_t)y * w;
		for (int x = 0; x < w; x++) {
			double v = m + g * (a * (sample(e, (size_t)x, is_int) - me) +
					    b * (sample(l, (size_t)x, is_int) - ml));
			if (is_int) {
				v = floor(v + 0.5);
				v = v < INT32_MIN ? INT32_MIN : v > INT32_MAX ? INT32_MAX : v;
				((int32_t *)(void *)o)[x] = (int32_t)v;
			} else {
				((float *)(void *)o)[x] = (float)v;
			}
		}
	}
}

int loop_next(sim_loop *lp, tp_surface *surf, tp_err *err)
{
	int rc;
	if (!lp->on) {
		if ((rc = stepper_next(lp->st, err)) < 0)
			return rc;
		stepper_surface(lp->st, surf);
		return 0;
	}
	if (lp->next == 0) {
		/* Warm up to the start, keeping s[S .. S + B) for the fade. */
		for (int f = 0; f < lp->start + lp->fade; f++) {
			if ((rc = stepper_next(lp->st, err)) < 0)
				return rc;
			if (f >= lp->start) {
				tp_surface s;
				stepper_surface(lp->st, &s);
				save_surface(&s, lp->saved + (size_t)(f - lp->start) * lp->w * lp->h);
			}
		}
		lp->warmed = lp->start + lp->fade;
	}
	int j = lp->next++;
	if ((rc = stepper_next(lp->st, err)) < 0)
		return rc;
	stepper_surface(lp->st, surf);
	int k = j - (lp->frames - lp->fade);
	/* past the loop's last frame (k >= fade) the simulation simply continues */
	if (k < 0 || k >= lp->fade)
		return 0;
	blend(lp, lp->saved + (size_t)k * lp->w * lp->h, surf, (double)(k + 1) / (lp->fade + 1));
	surf->data = lp->blend;
	surf->stride = lp->w;
	surf->spans = NULL;
	return 0;
}

int loop_pass(sim_loop *lp, tp_err *err)
{
	tp_surface s;
	if (lp->on)
		return loop_next(lp, &s, err);
	int rc = stepper_next(lp->st, err);
	if (rc == 0 && !stepper_surface_optional(lp->st))
		stepper_surface(lp->st, &s);
	return rc;
}

int loop_position(const sim_loop *lp) { return lp->next; }

int loop_warmup_frames(const sim_loop *lp) { return lp->warmed; }

int loop_loaded_frame(const sim_loop *lp)
{
	const int sf = stepper_frame(lp->st);
	if (!lp->on)
		return sf + 1;
	/* output frame j is the stepper's frame S + B + j (loop_next's warm-up) */
	return lp->next > 0 && sf == lp->start + lp->fade + lp->next - 1 ? lp->next : -1;
}

/* ---- checkpoints ---- */

static const char LOOP_MAGIC[8] = { 'T', 'P', 'L', 'O', 'O', 'P', '0', '1' };

int loop_save(const sim_loop *lp, FILE *f, tp_err *err)
{
	int rc = tp_wr_bytes(f, LOOP_MAGIC, 8);
	rc |= tp_wr_i32(f, lp->on) | tp_wr_i32(f, lp->next);
	if (lp->on) {
		rc |= tp_wr_i32(f, lp->fade) | tp_wr_i32(f, lp->w) | tp_wr_i32(f, lp->h);
		/* the early frames exist once the first output frame was made */
		if (lp->next > 0)
			rc |= tp_wr_i32s(f, (const int32_t *)(const void *)lp->saved,
					 (size_t)lp->fade * lp->w * lp->h);
	}
	if (rc)
		return tp_errf(err, TP_EIO, "checkpoint: write failed");
	return stepper_save(lp->st, f, err);
}

int loop_load(sim_loop *lp, FILE *f, tp_err *err)
{
	char magic[8];
	int on, next, fade = 0, w = 0, h = 0;
	int rc = tp_rd_bytes(f, magic, 8) | tp_rd_int(f, &on) | tp_rd_int(f, &next);
	if (!rc && on)
		rc |= tp_rd_int(f, &fade) | tp_rd_int(f, &w) | tp_rd_int(f, &h);
	if (rc)
		return tp_errf(err, TP_EIO, "checkpoint: truncated");
	if (memcmp(magic, LOOP_MAGIC, 8))
		return tp_errf(err, TP_EINPUT, "checkpoint: no loop section");
	if (on != lp->on || next < 0 || (on && (fade != lp->fade || w != lp->w || h != lp->h)))
		return tp_errf(err, TP_EINPUT, "checkpoint: made for another \"loop\" setting");
	if (on && next > 0 &&
	    tp_rd_i32s(f, (int32_t *)(void *)lp->saved, (size_t)lp->fade * lp->w * lp->h))
		return tp_errf(err, TP_EIO, "checkpoint: truncated");
	if ((rc = stepper_load(lp->st, f, err)) < 0)
		return rc;
	lp->next = next;
	return 0;
}
