/* tidepool join: MP4 segments (or frame-hash manifests) of one render, end to end. */
#include <stdio.h>

#include "cli/cli.h"
#include "cli/optrows.h"
#include "encode/encoder.h"

typedef struct join_opts {
	const char *out;
	int overwrite, quiet, partial;
} join_opts;

const cli_row cli_join_rows[] = {
	{"output", 'o', 1, 'o',
	 "  -o, --output OUT     the joined file (.mp4, .mov, or a .manifest)\n", 0},
	{"partial", 0, 0, 'P',
	 "      --partial        join a contiguous part of a render (frames missing at\n"
	 "                       its start or end are allowed)\n", 0},
	{"overwrite", 'y', 0, 'y', "  -y, --overwrite      replace OUT if it exists\n", 0},
	{"quiet", 'q', 0, 'q', "  -q, --quiet          no summary\n", 0},
	{"help", 'h', 0, 'h', "  -h, --help           show this help\n", 0},
	{0},
};

static int handle(void *ctx, const cli_row *row, const char *value)
{
	join_opts *o = ctx;
	switch (row->id) {
	case 'o': o->out = value; break;
	case 'y': o->overwrite = 1; break;
	case 'P': o->partial = 1; break;
	case 'q': o->quiet = 1; break;
	}
	return 0;
}

static const char head[] =
	"usage: tidepool join SEGMENTS... -o OUT.mp4 [options]\n"
	"\n"
	"Concatenates the MP4 segments written by 'tidepool render --range A-B' into one\n"
	"MP4 without re-encoding (faststart; the same segments give the same bytes). The\n"
	"segments are put in frame order and must be of one render (the same scene and\n"
	"options: each records their fingerprint, its frames and a checksum) and cover all\n"
	"its frames with one size, frame rate, codec and encoder setting; a gap (also at\n"
	"either end), an overlap, a damaged segment or a mismatch is refused naming the\n"
	"segment. Frame-hash manifests of consecutive ranges (.manifest, .tpmanifest) join\n"
	"the same way into one manifest.\n"
	"\n";

static const char tail[] =
	"\n"
	"Exit status: 0 done, 2 usage error, 3 a segment is damaged or does not fit the\n"
	"others, 4 a file cannot be read or written (or OUT exists, without -y).\n";

int cmd_join(int argc, char **argv)
{
	join_opts o = {0};
	const cli_rows opts = {.cmd = "join", .head = head, .rows = cli_join_rows, .tail = tail,
			       .handle = handle, .ctx = &o};
	int at = 0, rc = cli_rows_parse(&opts, argc, argv, &at);
	if (rc)
		return rc == 1 ? TP_EXIT_OK : rc;
	if (!o.out)
		return tp_cli_usage("join", "no output: give -o OUT.mp4");
	if (at >= argc)
		return tp_cli_usage("join", "no segments given");
	tp_err err = {""};
	int first, frames;
	rc = enc_join((const char *const *)argv + at, argc - at, o.out, o.overwrite, o.partial, &first,
		      &frames, &err);
	if (rc < 0)
		return tp_cli_fail(rc, &err);
	if (!o.quiet)
		fprintf(stderr, "joined %d segment%s: frames %d-%d (%d) to %s\n", argc - at,
			argc - at == 1 ? "" : "s", first, first + frames - 1, frames, o.out);
	return TP_EXIT_OK;
}
