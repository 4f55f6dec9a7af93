/* outfile.c - the output-path helpers every file encoder shares (encoder.h); apart from
 * registry.c so the libav plugin (avplugin.h) can have them without every encoder. */
#include "encode/encoder.h"
#include "util/fsutil.h"

int enc_check_output(const char *path, int overwrite, tp_err *err)
{
	return tp_check_output(path, overwrite, 0, err);
}
