/* tp_scene_reuse_checkpoints: an edited scene keeps the in-memory checkpoints of the old
 * version made before the edit's first effect (scene/diverge.c), and its frames are the
 * bits a fresh load of the edited scene gives, wherever a seek starts from. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tidepool.h"

enum { EVERY = 2 }; /* checkpoint spacing in frames: one before every even frame */

static tp_scene *load2(const char *path, const char *base, const char *set, int every)
{
	const char *sets[2];
	int n = 0;
	if (base)
		sets[n++] = base;
	if (set)
		sets[n++] = set;
	tp_load_options o = {.size = sizeof(tp_load_options),
			     .scale = 0.125,
			     .checkpoint_every = every,
			     .sets = sets,
			     .nsets = n};
	tp_scene *s = NULL;
	tp_error e = TP_ERROR_INIT;
	int rc = tp_scene_load_file(path, &o, &s, &e);
	cr_assert_eq(rc, 0, "%s %s %s: %s", path, base ? base : "", set ? set : "", e.text);
	return s;
}

static tp_scene *load(const char *path, const char *set, int every)
{
	return load2(path, NULL, set, every);
}

static uint64_t frame_hash(tp_scene *s, int n)
{
	tp_format f = TP_FORMAT_INIT;
	tp_error e = TP_ERROR_INIT;
	cr_assert_eq(tp_scene_format(s, TP_MODE_COLOR, &f, &e), 0, "%s", e.text);
	size_t bytes = (size_t)f.width * f.height * f.channels * f.bytes_per_sample;
	uint8_t *buf = malloc(bytes);
	cr_assert_eq(tp_scene_render(s, n, TP_MODE_COLOR, buf, 0, &e), 0, "frame %d: %s", n,
		     e.text);
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < bytes; i++)
		h = (h ^ buf[i]) * 1099511628211ull;
	free(buf);
	return h;
}

/* The checkpoints (one before each even frame k, holding the state after frame k - 1 at
 * time (k - 1) / fps) made before `until`. */
static int expected(const tp_scene_info *in, double until)
{
	int n = 0;
	for (int k = EVERY; k < in->frames; k += EVERY)
		n += (double)(k - 1) / in->fps < until;
	return n;
}

/* Plays the scene to its end (making every checkpoint), loads it with `set`, moves the
 * checkpoints over and checks how many were kept, then that frames sought backwards (each
 * seek starts from the nearest kept checkpoint) equal a fresh load's. */
static void check_from(const char *path, const char *base, const char *set, double until)
{
	tp_scene *old = load2(path, base, NULL, EVERY);
	tp_scene_info in = TP_SCENE_INFO_INIT;
	tp_error e = TP_ERROR_INIT;
	tp_scene_get_info(old, &in);
	cr_assert_eq(tp_scene_seek(old, in.frames - 1, &e), 0, "%s", e.text);

	tp_scene *edited = load2(path, base, set, EVERY);
	int moved = tp_scene_reuse_checkpoints(edited, old);
	cr_assert_eq(moved, expected(&in, until), "%s with %s: %d checkpoints kept, not %d", path,
		     set, moved, expected(&in, until));
	cr_assert_eq(tp_scene_reuse_checkpoints(edited, old), 0, "the old scene keeps none");
	tp_scene_free(old);

	tp_scene *fresh = load2(path, base, set, 0);
	enum { STRIDE = 11 };
	uint64_t want[64];
	int n = 0;
	for (int k = 0; k < in.frames && n < 64; k += STRIDE)
		want[n++] = frame_hash(fresh, k);
	for (int i = n - 1; i >= 0; i--)
		cr_assert_eq(frame_hash(edited, i * STRIDE), want[i],
			     "%s with %s: frame %d differs from a fresh load's", path, set,
			     i * STRIDE);
	tp_scene_free(fresh);
	tp_scene_free(edited);
}

static void check(const char *path, const char *set, double until)
{
	check_from(path, NULL, set, until);
}

Test(reuse, a_moved_drop_keeps_the_states_before_it, .timeout = 120)
{
	check("scenes/pond.json", "drops.3.at=[260, 250]", 3.5);   /* ripple */
	check("scenes/wind_pool.json", "drops.1.strength=2", 3.5); /* airy */
	/* sph, whose capacity counts the drops' sizes: the same sizes elsewhere or later */
	check_from("scenes/sph_box.json",
		   "drops=[{\"t\": 1, \"at\": [300, 150], \"radius\": 8, \"strength\": 1}, "
		   "{\"t\": 3, \"at\": [200, 150], \"radius\": 8, \"strength\": 2}]",
		   "drops.1.at=[400, 140]", 3.0);
}

/* sph sizes its particle buffers, and its automatic stiffness, from the whole timeline:
 * an edit that changes that size (or the turning tank) keeps nothing, one that does not
 * keeps the states before it. */
Test(reuse, sph_keeps_states_only_when_its_size_is_unchanged, .timeout = 300)
{
	/* key 4 (t = 2.9) moved: the path changes from key 3 (t = 2.3) on */
	check("scenes/sph_box.json", "boxes.0.path.4.at=[120, 230]", 2.3);
	const char *two = "drops=[{\"t\": 1, \"at\": [300, 150], \"radius\": 8, \"strength\": 1}, "
			  "{\"t\": 3, \"at\": [200, 150], \"radius\": 8, \"strength\": 2}]";
	check_from("scenes/sph_box.json", two, "drops.1.radius=9", -INFINITY); /* more water */
	check_from("scenes/sph_box.json", two, "drops.1.strength=1", -INFINITY);
	check("scenes/sph_box.json", "drops=[{\"t\": 4, \"at\": [300, 150], \"radius\": 6}]",
	      -INFINITY); /* a new drop */
	/* a tank that starts turning at its last keyframe (t = 4.5) */
	check("scenes/sph_tip.json", "tank.path.4.angle=10", 3.5);
	check("scenes/sph_slosh.json", "tank.path.20.angle=5", -INFINITY);
}

Test(reuse, a_picture_setting_keeps_every_state, .timeout = 120)
{
	check("scenes/pond.json", "render.tint=\"#ff2000\"", INFINITY);
	check("scenes/rain.json", "background.scale=20", INFINITY);
	check("scenes/sph_box.json", "render.tint_strength=0.6", INFINITY);
	/* a loop (its checkpoints hold the cross-fade's saved frames too) */
	check("scenes/textures/caustics_loop.json", "maps.caustics.intensity=0.5", INFINITY);
}

Test(reuse, a_keyframe_keeps_the_path_up_to_the_keyframe_before_it, .timeout = 120)
{
	/* key 5 (t = 4.6) moved: the path changes from key 4 (t = 3.2) on */
	check("scenes/shallow_drag.json", "boxes.0.path.5.at=[430, 150]", 3.2);
}

Test(reuse, rain_keeps_the_states_before_its_change, .timeout = 120)
{
	check("scenes/rain.json", "emitters.0.to=5", 5.0);
	check("scenes/rain.json", "emitters.0.rate=20", 0.0); /* rains from 0 */
	check("scenes/rain.json", "seed=8", 0.0);               /* the rain's random streams */
}

Test(reuse, what_the_solver_starts_from_keeps_nothing, .timeout = 120)
{
	check("scenes/pond.json", "params.damping=5", -INFINITY);
	check("scenes/wind_pool.json", "ambient.wind=4", -INFINITY);
	check("scenes/pond.json", "seed=2", INFINITY); /* no rain: the seed is not used */
	check("scenes/textures/caustics_loop.json", "loop.crossfade=0.4", -INFINITY);
	check("scenes/sph_box.json", "params.spacing=5", -INFINITY);
}

Test(reuse, arguments)
{
	tp_scene *s = load("scenes/pond.json", NULL, 0);
	cr_assert_eq(tp_scene_reuse_checkpoints(s, s), TP_ERROR_ARGUMENT);
	cr_assert_eq(tp_scene_reuse_checkpoints(NULL, s), TP_ERROR_ARGUMENT);
	cr_assert_eq(tp_scene_reuse_checkpoints(s, NULL), TP_ERROR_ARGUMENT);
	tp_scene_free(s);
}

/* tp_scene_same_until: what tp_scene_reuse_checkpoints() goes by, for a caller (the
 * preview) that keeps what it computed from the simulation (its stats) when it is the same. */
Test(reuse, same_until_says_how_long_two_versions_simulate_alike)
{
	tp_scene *a = load("scenes/pond.json", NULL, 0);
	tp_scene *colour = load("scenes/pond.json", "render.tint=#ff0000", 0);
	tp_scene *drop = load("scenes/pond.json", "drops.3.at=[100,100]", 0);
	tp_scene *damp = load("scenes/pond.json", "params.damping=3", 0);
	cr_expect(isinf(tp_scene_same_until(colour, a)) && tp_scene_same_until(colour, a) > 0);
	double t = tp_scene_same_until(drop, a);
	cr_expect(t > 3 && t <= 3.5 + 1e-9, "drop 3 is at 3.5 s: %g", t);
	cr_expect(tp_scene_same_until(damp, a) <= 0);
	cr_expect(isinf(tp_scene_same_until(NULL, a)) && tp_scene_same_until(NULL, a) < 0);
	tp_scene_free(a);
	tp_scene_free(colour);
	tp_scene_free(drop);
	tp_scene_free(damp);
}
