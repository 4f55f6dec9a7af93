#include "scene/scene.h"

#include <stdlib.h>

/* Linear interpolation between keyframes, holding the first key before it and the last
 * after it:  p(t) = p_i + (p_{i+1} - p_i) * (t - t_i) / (t_{i+1} - t_i),  t_i <= t < t_{i+1}.
 * Keys are few per box, but a binary search keeps long recorded paths cheap. */
void scene_path_eval(const scene_path *p, double t, double *x, double *y, double *angle)
{
	const scene_key *k = p->keys;
	double ox = 0, oy = 0, oa = 0;
	if (p->n < 1 || !k) {
		/* nothing to follow: the origin */
	} else if (p->n == 1 || !(t > k[0].t)) {
		ox = k[0].x, oy = k[0].y, oa = k[0].angle;
	} else if (t >= k[p->n - 1].t) {
		ox = k[p->n - 1].x, oy = k[p->n - 1].y, oa = k[p->n - 1].angle;
	} else {
		int lo = 0, hi = p->n - 1; /* invariant: k[lo].t <= t < k[hi].t */
		while (hi - lo > 1) {
			int mid = lo + (hi - lo) / 2;
			if (k[mid].t <= t)
				lo = mid;
			else
				hi = mid;
		}
		double u = (t - k[lo].t) / (k[hi].t - k[lo].t);
		ox = k[lo].x + (k[hi].x - k[lo].x) * u;
		oy = k[lo].y + (k[hi].y - k[lo].y) * u;
		oa = k[lo].angle + (k[hi].angle - k[lo].angle) * u;
	}
	if (x)
		*x = ox;
	if (y)
		*y = oy;
	if (angle)
		*angle = oa;
}

typedef struct drop_key {
	double t;
	int i;
} drop_key;

static int by_time(const void *a, const void *b)
{
	const drop_key *p = a, *q = b;
	if (p->t != q->t)
		return p->t < q->t ? -1 : 1;
	return p->i - q->i; /* stable: file order breaks ties */
}

int *scene_drop_order(const scene *s)
{
	const size_t n = (size_t)s->ndrops;
	int *o = malloc((n + 1) * sizeof *o);
	drop_key *k = malloc((n + 1) * sizeof *k);
	if (!o || !k) {
		free(o);
		free(k);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		k[i] = (drop_key){s->drops[i].t, (int)i};
	qsort(k, n, sizeof *k, by_time);
	for (size_t i = 0; i < n; i++)
		o[i] = k[i].i;
	free(k);
	return o;
}
