#include "util/trig.h"

#include <math.h>

void tp_sincos_deg(double deg, double *sn, double *cs)
{
	double a = fmod(deg, 360.0); /* exact */
	if (a < 0)
		a += 360.0;
	int q = (int)((a + 45.0) / 90.0);
	double r = (a - 90.0 * q) * (3.14159265358979323846 / 180.0), r2 = r * r;
	/* |r| <= pi/4: terms up to r^13 / 13! and r^12 / 12! leave < 1e-16 */
	double s = r * (1 + r2 * (-1.0 / 6 + r2 * (1.0 / 120 + r2 * (-1.0 / 5040 + r2 * (1.0 / 362880 +
		   r2 * (-1.0 / 39916800 + r2 / 6227020800.0))))));
	double c = 1 + r2 * (-0.5 + r2 * (1.0 / 24 + r2 * (-1.0 / 720 + r2 * (1.0 / 40320 +
		   r2 * (-1.0 / 3628800 + r2 / 479001600.0)))));
	switch (q & 3) {
	case 0: *sn = s; *cs = c; break;
	case 1: *sn = c; *cs = -s; break;
	case 2: *sn = -s; *cs = -c; break;
	default: *sn = -c; *cs = s; break;
	}
}
