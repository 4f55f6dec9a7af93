/* tidepool info, end to end through TP_BIN: the record of every kind of file tidepool
 * writes (PNG, OpenEXR, MP4, MP4 segment, frame-hash manifest, checkpoint), --json, and
 * files tidepool did not write (said so, exit status 3; an unreadable file 4). */
#include <criterion/criterion.h>
#include <stdio.h>

#include "cli_util.h"
#include "tmpdir.h"

static char dir[64], errpath[128], outpath[128];

static void setup(void)
{
	tp_tmpdir_make(dir, sizeof dir, "info");
	snprintf(errpath, sizeof errpath, "%s/err.txt", dir);
	snprintf(outpath, sizeof outpath, "%s/out.txt", dir);
}

static void teardown(void)
{
	tp_tmpdir_remove(dir);
}

TestSuite(info, .init = setup, .fini = teardown, .timeout = 300);

#define RAIN "scenes/rain.json --size 64x36 --frames 4 -q -y"

static void has(const char *text, const char *what)
{
	cr_expect(strstr(text, what), "no %s in:\n%s", what, text);
}

Test(info, png_and_exr_maps)
{
	cr_assert_eq(
		run_tp(NULL, errpath,
		       "render scenes/textures/ocean_choppy.json --size 64x64 --range 2-2 -q -y "
		       "-o height=%s/h%%d.png -o displacement=%s/d%%d.exr",
		       dir, dir),
		0, "%s", slurp(errpath));
	cr_assert_eq(run_tp(outpath, errpath, "info --json %s/h2.png %s/d2.exr", dir, dir), 0, "%s",
		     slurp(errpath));
	const char *t = slurp(outpath);
	has(t, "\"kind\":\"PNG\",\"tidepool\":true");
	has(t, "\"mode\":\"height\",\"frame\":2,\"frames\":64,\"fps\":16,\"loopFrames\":64");
	has(t, "\"scale\":1024,\"offset\":32768");
	has(t, "\"srgbChunk\":false");
	has(t, "\"kind\":\"OpenEXR\",\"tidepool\":true");
	has(t, "\"framesPerSecond\":[16,1]");
	has(t, "\"wrapmodes\":\"periodic,periodic\"");
	has(t, "\"mode\":\"displacement\"");
	has(t, "\"units\":\"m\"");
	has(t, "\"tileMetres\":[64,64]");
	/* two files, two lines */
	int lines = 0;
	for (const char *p = t; (p = strchr(p, '\n')); p++)
		lines++;
	cr_expect_eq(lines, 2, "%s", t);
	/* the text form names the kind and lists the keys */
	cr_assert_eq(run_tp(outpath, errpath, "info %s/d2.exr", dir), 0, "%s", slurp(errpath));
	t = slurp(outpath);
	has(t, "d2.exr: OpenEXR written by tidepool\n");
	has(t, "\n  texelMetres        [1,1]\n");
	has(t, "\n  loopFrames         64\n");
}

Test(info, mp4_segment_manifest_and_checkpoint)
{
	cr_assert_eq(
		run_tp(NULL, errpath, "render " RAIN " -o %s/m.mp4 --hash %s/m.manifest", dir, dir),
		0, "%s", slurp(errpath));
	cr_assert_eq(run_tp(NULL, errpath, "render " RAIN " --range 2-3 -o %s/s.mp4", dir), 0, "%s",
		     slurp(errpath));
	cr_assert_eq(run_tp(NULL, errpath, "cache " RAIN " --every 2 -O %s/ck", dir), 0, "%s",
		     slurp(errpath));
	cr_assert_eq(run_tp(outpath, errpath,
			    "info --json %s/m.mp4 %s/s.mp4 %s/m.manifest %s/ck/frame-00000002.tpck",
			    dir, dir, dir, dir),
		     0, "%s", slurp(errpath));
	const char *t = slurp(outpath);
	/* the whole MP4: the record in the container's metadata */
	has(t, "\"kind\":\"MP4\",\"tidepool\":true,\"record\":{\"format\":\"tidepool-record/1\","
	       "\"software\":\"tidepool 0.2.0\",\"version\":\"0.2.0\",\"fingerprint\":\"");
	has(t, "\"mode\":\"color\",\"first\":0,\"last\":3,\"frames\":4,\"fps\":30,"
	       "\"loopFrames\":null");
	has(t, "\"colorSpace\":\"sRGB\"");
	/* a segment: its frames and the provenance line join checks */
	has(t, "\"kind\":\"MP4 segment\"");
	has(t, "\"first\":2,\"last\":3,\"frames\":4");
	has(t, "\"provenance\":\"tidepool frames 2-3 of 4; fingerprint ");
	has(t, "\"kind\":\"frame-hash manifest\"");
	has(t, "\"pixfmt\":\"rgb24\",\"hash\":\"xxh128\",\"first\":0,\"last\":3,\"fingerprint\"");
	has(t, "\"kind\":\"checkpoint\"");
	has(t, "\"width\":64,\"height\":36,\"frame\":2,\"frames\":4,\"solver\":\"hooke\"");
}

Test(info, files_tidepool_did_not_write)
{
	char png[160], exr[160], txt[160], cmd[1024];
	snprintf(png, sizeof png, "%s/other.png", dir);
	snprintf(exr, sizeof exr, "%s/other.exr", dir);
	snprintf(txt, sizeof txt, "%s/notes.txt", dir);
	/* a PNG and an OpenEXR from another program (OpenImageIO) */
	snprintf(cmd, sizeof cmd,
		 "/usr/bin/python3 -c \"import OpenImageIO as o; b = o.ImageBuf(o.ImageSpec(8, 8, "
		 "3, o.UINT8)); b.write('%s'); c = o.ImageBuf(o.ImageSpec(8, 8, 1, o.HALF)); "
		 "c.write('%s')\"",
		 png, exr);
	cr_assert_eq(system(cmd), 0);
	FILE *f = fopen(txt, "w");
	cr_assert(f);
	fputs("hello\n", f);
	fclose(f);
	cr_assert_eq(run_tp(NULL, errpath, "render " RAIN " -o %s/c%%d.png", dir), 0, "%s",
		     slurp(errpath));
	/* every file is reported, ours too; the status says one is not ours */
	cr_expect_eq(run_tp(outpath, errpath, "info %s %s/c0.png %s %s", png, dir, exr, txt), 3,
		     "%s", slurp(errpath));
	const char *t = slurp(outpath);
	has(t, "other.png: not written by tidepool (a PNG without a tidepool record)");
	has(t, "c0.png: PNG written by tidepool");
	has(t, "  srgbChunk          true");
	has(t, "other.exr: not written by tidepool (an OpenEXR file without tidepool attributes)");
	has(t, "notes.txt: not written by tidepool (not a file kind tidepool writes)");
	cr_expect_eq(run_tp(outpath, errpath, "info --json %s", txt), 3);
	has(slurp(outpath), "{\"path\":\"");
	has(slurp(outpath), "\"kind\":\"unknown\",\"tidepool\":false,\"reason\":\"not written by "
			    "tidepool (not a file kind tidepool writes)\"}");
	/* a missing file is an I/O error (4), reported on stderr; the others still print */
	cr_expect_eq(run_tp(outpath, errpath, "info %s/none.png %s %s/c1.png", dir, txt, dir), 4);
	has(slurp(errpath), "none.png");
	has(slurp(outpath), "c1.png: PNG written by tidepool");
	/* a directory is no file of tidepool's */
	cr_expect_eq(run_tp(outpath, errpath, "info %s", dir), 3);
	has(slurp(outpath), "is a directory");
	/* usage */
	cr_expect_eq(run_tp(NULL, errpath, "info"), 2);
	has(slurp(errpath), "no file given");
}

/* The pictures tidepool makes about renders say what they are too: compare's difference
 * images and batch's contact sheet (sRGB, with an sRGB chunk). */
Test(info, difference_images_and_contact_sheets)
{
	cr_assert_eq(run_tp(NULL, errpath, "render " RAIN " -o %s/a%%d.png", dir), 0, "%s",
		     slurp(errpath));
	cr_assert_eq(run_tp(NULL, errpath,
			    "render " RAIN " --set render.tint_strength=0.6 -o %s/b%%d.png", dir),
		     0, "%s", slurp(errpath));
	cr_assert_eq(run_tp(NULL, errpath, "compare %s/a%%d.png %s/b%%d.png -q --diff %s/d", dir,
			    dir, dir),
		     1, "%s", slurp(errpath));
	cr_assert_eq(run_tp(outpath, errpath, "info --json %s/d/diff-000003.png", dir), 0, "%s",
		     slurp(errpath));
	has(slurp(outpath), "\"kind\":\"PNG\",\"tidepool\":true,\"record\":{\"format\":"
			    "\"tidepool-record/1\",\"software\":\"tidepool 0.2.0\",\"version\":"
			    "\"0.2.0\",\"image\":\"difference image\",\"colorSpace\":\"sRGB\"");
	has(slurp(outpath), "\"srgbChunk\":true");
	cr_assert_eq(
		run_tp(NULL, errpath,
		       "batch scenes/rain.json --size 32x18 --frames 2 --vary seed=1,2 -q -O %s/v",
		       dir),
		0, "%s", slurp(errpath));
	cr_assert_eq(run_tp(outpath, errpath, "info %s/v/contact.png", dir), 0, "%s",
		     slurp(errpath));
	has(slurp(outpath), "\n  image              contact sheet\n");
}
