/* tidepool info: what tidepool's files say about themselves (encode/record.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/optrows.h"
#include "encode/record.h"

static const char head[] =
	"usage: tidepool info [--json] FILE...\n"
	"\n"
	"Prints what each file says about itself: the record every PNG, OpenEXR and MP4 that\n"
	"tidepool writes carries (version, fingerprint, mode, frame and frames, loop, fps,\n"
	"units and scale, texel and tile size, axes, the normal map's convention), the header\n"
	"of a frame-hash manifest or a checkpoint, an MP4 segment's frames. The keys are\n"
	"listed in docs/textures.md, \"What each file records\".\n"
	"\n";

const cli_row cli_info_rows[] = {
	{"json", 0, 0, 'j',
	 "  --json               one JSON object per file and line: {\"path\", \"kind\",\n"
	 "                       \"tidepool\": true, \"record\": {...}}, or \"tidepool\": false\n"
	 "                       and \"reason\" for a file tidepool did not write\n", 0},
	{"help", 'h', 0, 'h', "  -h, --help           show this help\n", 0},
	{0},
};

static const char tail[] =
	"\n"
	"A file tidepool did not write (or whose record is damaged) is said so on stdout.\n"
	"Exit status: 0 every file is tidepool's, 2 usage error, 3 a file is not tidepool's,\n"
	"is damaged or is not a regular file (a directory), 4 a file cannot be read\n"
	"(missing, unreadable); every file is still reported, and the highest status wins.\n";

static int handle(void *ctx, const cli_row *row, const char *value)
{
	(void)value;
	if (row->id == 'j')
		*(int *)ctx = 1;
	return 0;
}

/* One value on a text line: strings as they are, anything else as JSON. */
static void print_value(const cJSON *v)
{
	if (cJSON_IsString(v)) {
		fputs(v->valuestring, stdout);
		return;
	}
	char *s = cJSON_PrintUnformatted(v);
	fputs(s ? s : "?", stdout);
	free(s);
}

static void print_text(const char *path, const char *kind, const cJSON *rec)
{
	printf("%s: %s written by tidepool\n", path, kind);
	for (const cJSON *k = rec->child; k; k = k->next) {
		printf("  %-18s ", k->string);
		print_value(k);
		putchar('\n');
	}
}

static void print_json(const char *path, const char *kind, cJSON *rec, const char *reason)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return;
	cJSON_AddStringToObject(o, "path", path);
	cJSON_AddStringToObject(o, "kind", kind);
	cJSON_AddBoolToObject(o, "tidepool", rec != NULL);
	if (rec)
		cJSON_AddItemReferenceToObject(o, "record", rec);
	else
		cJSON_AddStringToObject(o, "reason", reason);
	char *s = cJSON_PrintUnformatted(o);
	if (s)
		puts(s);
	free(s);
	cJSON_Delete(o);
}

int cmd_info(int argc, char **argv)
{
	int json = 0, at = 0;
	const cli_rows opts = {.cmd = "info", .head = head, .rows = cli_info_rows, .tail = tail,
			       .handle = handle, .ctx = &json};
	int prc = cli_rows_parse(&opts, argc, argv, &at);
	if (prc)
		return prc == 1 ? TP_EXIT_OK : prc;
	if (at >= argc)
		return tp_cli_usage("info", "no file given");
	int status = TP_EXIT_OK;
	for (int i = at; i < argc; i++) {
		const char *path = argv[i], *kind = "unknown";
		cJSON *rec = NULL;
		tp_err err = {""};
		int rc = enc_record_read(path, &rec, &kind, &err);
		if (rc == TP_EINPUT) {
			/* not tidepool's: the answer to the question, on stdout */
			const size_t n = strlen(path);
			const char *why =
				!strncmp(err.msg, path, n) && !strncmp(err.msg + n, ": ", 2)
					? err.msg + n + 2
					: err.msg;
			if (json)
				print_json(path, kind, NULL, why);
			else
				printf("%s: %s\n", path, why);
		} else if (rc < 0) {
			tp_cli_fail(rc, &err);
		} else if (json) {
			print_json(path, kind, rec, NULL);
		} else {
			print_text(path, kind, rec);
		}
		cJSON_Delete(rec);
		const int st = tp_exit_code(rc);
		if (st > status)
			status = st;
	}
	return status;
}
