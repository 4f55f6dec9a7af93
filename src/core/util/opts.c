#include "util/opts.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static void store(void *priv, const tp_option *o, double v)
{
	char *p = (char *)priv + o->offset;
	if (o->type == TP_OPT_DOUBLE)
		memcpy(p, &v, sizeof v);
	else {
		int i = (int)v;
		memcpy(p, &i, sizeof i);
	}
}

void tp_opts_defaults(void *priv, const tp_option *opts)
{
	for (const tp_option *o = opts; o && o->name; o++)
		store(priv, o, o->def);
}

const tp_option *tp_opts_find(const tp_option *opts, const char *name)
{
	for (const tp_option *o = opts; o && o->name; o++)
		if (!strcmp(o->name, name))
			return o;
	return NULL;
}

int tp_opts_set(void *priv, const tp_option *o, double v, tp_err *err)
{
	if (!isfinite(v))
		return tp_errf(err, TP_EINPUT, "%s: must be a finite number", o->name);
	if (o->type != TP_OPT_DOUBLE && v != floor(v))
		return tp_errf(err, TP_EINPUT, "%s: must be a whole number (got %g)", o->name, v);
	if (v < o->min || v > o->max) {
		char r[256];
		tp_opts_range(o, r, sizeof r);
		return tp_errf(err, TP_EINPUT, "%s: must be in %s (got %g)", o->name, r, v);
	}
	store(priv, o, v);
	return 0;
}

double tp_opts_get(const void *priv, const tp_option *o)
{
	const char *p = (const char *)priv + o->offset;
	if (o->type == TP_OPT_DOUBLE) {
		double d;
		memcpy(&d, p, sizeof d);
		return d;
	}
	int i;
	memcpy(&i, p, sizeof i);
	return i;
}

void tp_opts_scale(void *priv, const tp_option *opts, double s)
{
	if (s == 1)
		return;
	for (const tp_option *o = opts; o && o->name; o++) {
		double f = o->unit == TP_UNIT_LENGTH ? s
			 : o->unit == TP_UNIT_AREA ? s * s
			 : o->unit == TP_UNIT_PER_LENGTH ? 1 / s
							 : 1;
		if (f == 1 || (o->type != TP_OPT_DOUBLE && o->type != TP_OPT_INT))
			continue;
		char *p = (char *)priv + o->offset;
		if (o->type == TP_OPT_DOUBLE) {
			double d;
			memcpy(&d, p, sizeof d);
			d *= f;
			memcpy(p, &d, sizeof d);
		} else {
			int i;
			memcpy(&i, p, sizeof i);
			double v = floor(i * f + 0.5);
			int r = i > 0 && v < 1 ? 1 : v > INT_MAX ? INT_MAX : (int)v;
			memcpy(p, &r, sizeof r);
		}
	}
}

void tp_opts_range(const tp_option *o, char *buf, size_t n)
{
	if (o->type == TP_OPT_BOOL) {
		snprintf(buf, n, "true or false");
	} else if (o->type == TP_OPT_ENUM) {
		size_t used = (size_t)snprintf(buf, n, "one of ");
		for (int i = 0; o->choices[i] && used < n; i++)
			used += (size_t)snprintf(buf + used, n - used, "%s%s", i ? ", " : "", o->choices[i]);
	} else {
		snprintf(buf, n, "%g..%g", o->min, o->max);
	}
}
