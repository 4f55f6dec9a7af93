/* tidepool join: MP4 segments (or frame-hash manifests) of one render, end to end. */
#include <getopt.h>
#include <stdio.h>

#include "cli/cli.h"
#include "encode/encoder.h"

static const char usage[] =
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
	"\n"
	"  -o, --output OUT     the joined file (.mp4, .mov, or a .manifest)\n"
	"      --partial        join a contiguous part of a render (frames missing at\n"
	"                       its start or end are allowed)\n"
	"  -y, --overwrite      replace OUT if it exists\n"
	"  -q, --quiet          no summary\n"
	"  -h, --help           show this help\n"
	"\n"
	"Exit status: 0 done, 2 usage error, 3 a segment is damaged or does not fit the\n"
	"others, 4 a file cannot be read or written (or OUT exists, without -y).\n";

int cmd_join(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},
		{"overwrite", no_argument, NULL, 'y'},
		{"partial", no_argument, NULL, 'P'},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *out = NULL;
	int overwrite = 0, quiet = 0, partial = 0, c;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":o:yqh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'y': overwrite = 1; break;
		case 'P': partial = 1; break;
		case 'q': quiet = 1; break;
		case 'h': fputs(usage, stdout); return TP_EXIT_OK;
		case ':': return tp_cli_usage("join", "%s needs a value", argv[optind - 1]);
		default: return tp_cli_usage("join", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (!out)
		return tp_cli_usage("join", "no output: give -o OUT.mp4");
	if (optind >= argc)
		return tp_cli_usage("join", "no segments given");
	tp_err err = {""};
	int first, frames;
	int rc = enc_join((const char *const *)argv + optind, argc - optind, out, overwrite, partial, &first,
			  &frames, &err);
	if (rc < 0)
		return tp_cli_fail(rc, &err);
	if (!quiet)
		fprintf(stderr, "joined %d segment%s: frames %d-%d (%d) to %s\n", argc - optind,
			argc - optind == 1 ? "" : "s", first, first + frames - 1, frames, out);
	return TP_EXIT_OK;
}
