/* Every image tidepool writes describes itself (encode/record.h, docs/textures.md "What
 * each file records"): the OpenEXR attributes and the PNG record read back with
 * OpenImageIO (tests/record_check.py), the sRGB chunk on colour frames only, 16-bit heights
 * recovered from a PNG's own record, and the same bytes whatever the thread count. */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>

#include "cli_util.h"
#include "tmpdir.h"

static char dir[64], errpath[128], outpath[128];

static void setup(void)
{
	tp_tmpdir_make(dir, sizeof dir, "record");
	snprintf(errpath, sizeof errpath, "%s/err.txt", dir);
	snprintf(outpath, sizeof outpath, "%s/out.txt", dir);
}

static void teardown(void)
{
	tp_tmpdir_remove(dir);
}

TestSuite(record, .init = setup, .fini = teardown, .timeout = 300);

/* tests/record_check.py ARGS; 0 when every check holds (its output in outpath). */
static int check(const char *fmt, ...)
{
	char args[3072], cmd[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(args, sizeof args, fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof cmd, "/usr/bin/python3 tests/record_check.py %s >%s 2>&1", args,
		 outpath);
	return system(cmd);
}

/* What every map of the ocean example at 64x64 records: a 64 m tile of 512 scene units
 * (1 m texels at this size), 64 frames at 16 fps that loop and tile. */
#define OCEAN_COMMON                                                                               \
	"\"format\":\"tidepool-record/1\",\"version\":\"0.2.0\",\"frame\":2,\"frames\":64,"        \
	"\"fps\":16,\"loopFrames\":64,\"width\":64,\"height\":64,\"colorSpace\":\"data\","         \
	"\"axes\":\"X right, Y up the image, Z up\",\"tiles\":true,\"texelSize\":[8,8],"           \
	"\"tileSize\":[512,512],\"metresPerUnit\":0.125,\"texelMetres\":[1,1],"                    \
	"\"tileMetres\":[64,64],\"encoding\":\"float\""

Test(record, exr_maps_carry_every_attribute)
{
	cr_assert_eq(run_tp(NULL, errpath,
			    "render scenes/textures/ocean_choppy.json --size 64x64 --range 2-2 -q "
			    "-y -o displacement=%s/d%%d.exr -o normal=%s/n%%d.exr "
			    "-o height=%s/h%%d.exr -o foam=%s/f%%d.exr -o caustics=%s/k%%d.exr "
			    "--set maps.normal.convention=directx",
			    dir, dir, dir, dir, dir),
		     0, "%s", slurp(errpath));
	static const char *const want[][2] = {
		{"d",
		 "\"mode\":\"displacement\",\"units\":\"m\",\"values\":\"displacement X, Y, Z\""},
		{"h", "\"mode\":\"height\",\"units\":\"m\",\"values\":\"height\""},
		{"n", "\"mode\":\"normal\",\"units\":\"1\",\"normalConvention\":\"directx\","
		      "\"normalStrength\":1"},
		{"f", "\"mode\":\"foam\",\"units\":\"1\""},
		{"k", "\"mode\":\"caustics\",\"units\":\"1\",\"causticsTone\":\"soft\","
		      "\"causticsIntensity\":0.25,\"causticsDepth\":160"},
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		cr_expect_eq(check("exr %s/%s2.exr '{" OCEAN_COMMON ",%s}'", dir, want[i][0],
				   want[i][1]),
			     0, "%s: %s", want[i][0], slurp(outpath));
}

Test(record, png_maps_record_and_srgb_on_colour_only)
{
	cr_assert_eq(run_tp(NULL, errpath,
			    "render scenes/rain.json --size 64x36 --frames 2 -q -y "
			    "-o color=%s/c%%d.png -o height=%s/h%%d.png -o normal=%s/n%%d.png "
			    "-o caustics=%s/k%%d.png",
			    dir, dir, dir, dir),
		     0, "%s", slurp(errpath));
	/* hooke has no length scale: nothing in metres; 640x360 scene units at 64x36 */
	const char *common = "\"frame\":1,\"frames\":2,\"fps\":30,\"loopFrames\":null,"
			     "\"tiles\":false,\"texelSize\":[10,10],\"tileSize\":[640,360],"
			     "\"metresPerUnit\":\"__absent__\",\"texelMetres\":\"__absent__\"";
	cr_expect_eq(check("png %s/c1.png '{%s,\"mode\":\"color\",\"colorSpace\":\"sRGB\"}' 1", dir,
			   common),
		     0, "%s", slurp(outpath));
	cr_expect_eq(
		check("png %s/h1.png '{%s,\"mode\":\"height\",\"colorSpace\":\"data\","
		      "\"bits\":16,\"scale\":1024,\"offset\":32768,\"units\":\"height units\"}' 0",
		      dir, common),
		0, "%s", slurp(outpath));
	cr_expect_eq(check("png %s/n1.png '{%s,\"mode\":\"normal\",\"colorSpace\":\"data\","
			   "\"bits\":8,\"normalConvention\":\"opengl\",\"normalStrength\":4,"
			   "\"scale\":127.5,\"offset\":127.5}' 0",
			   dir, common),
		     0, "%s", slurp(outpath));
	cr_expect_eq(check("png %s/k1.png '{%s,\"mode\":\"caustics\",\"colorSpace\":\"data\","
			   "\"bits\":8}' 0",
			   dir, common),
		     0, "%s", slurp(outpath));
}

/* With "scale": "auto" the levels chosen go into each PNG, so a reader gets the heights
 * back without the render's stderr. */
Test(record, auto_levelled_heights_decode_from_the_png)
{
	cr_assert_eq(run_tp(NULL, errpath,
			    "render scenes/textures/ocean_choppy.json --size 64x64 --range 0-1 -q "
			    "-y --set maps.height.scale=auto --set maps.exr.type=float "
			    "-o height=%s/h%%d.png -o height=%s/e%%d.exr",
			    dir, dir),
		     0, "%s", slurp(errpath));
	for (int f = 0; f < 2; f++)
		cr_expect_eq(check("heights %s/h%d.png %s/e%d.exr", dir, f, dir, f), 0, "%s",
			     slurp(outpath));
	/* the chosen scale, not the default's 1024 */
	cr_expect_neq(check("png %s/h0.png '{\"scale\":1024}' 0", dir), 0, "%s", slurp(outpath));
}

/* No date, host or thread count in the record: the same scene gives the same bytes. */
Test(record, files_are_the_same_bytes_with_any_thread_count)
{
	for (int t = 1; t <= 2; t++)
		cr_assert_eq(run_tp(NULL, errpath,
				    "render scenes/textures/ocean_choppy.json --size 64x64 --range "
				    "0-1 -q -y --threads %d -o displacement=%s/t%d/d%%d.exr "
				    "-o height=%s/t%d/h%%d.png",
				    t, dir, t, dir, t),
			     0, "%s", slurp(errpath));
	static const char *const names[] = {"d0.exr", "d1.exr", "h0.png", "h1.png"};
	for (int i = 0; i < 4; i++) {
		char a[128], b[128];
		snprintf(a, sizeof a, "%s/t1/%s", dir, names[i]);
		snprintf(b, sizeof b, "%s/t2/%s", dir, names[i]);
		cr_expect(files_equal(a, b), "%s differs between 1 and 2 threads", names[i]);
	}
}
