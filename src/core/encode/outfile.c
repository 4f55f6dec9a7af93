/* outfile.c - the output-path helpers every file encoder shares (encoder.h); apart from
 * registry.c so the libav plugin (avplugin.h) can have them without every encoder. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "encode/encoder.h"
#include "util/fsutil.h"

int enc_check_output(const char *path, int overwrite, tp_err *err)
{
	return tp_check_output(path, overwrite, 0, err);
}

void enc_temp_name(const char *path, char *buf, size_t n)
{
	char dir[4096];
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	tp_path_dir(path, dir, sizeof dir);
	/* Hidden and pid-tagged: never mistaken for output, never shared by two renders. */
	snprintf(buf, n, "%s/.%s.tmp-%ld", dir, base, (long)getpid());
}
