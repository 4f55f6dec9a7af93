/* PNG reader: any bytes, decoded to one of the pixel formats tidepool asks for. Checks
 * the error contract and, on success, that the image is within the documented limits.
 * In this build those limits are lower (util/png.h: 256 a side, 128x128 pixels), so
 * that no input decodes a 16384x4096 image: the same checks, reachable from both sides
 * (corpus/png/limit-fuzz-*.png sit at them), at a cost per input the fuzzer can afford. */
#include "util/png.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const tp_pixfmt fmts[] = {TP_RGB8, TP_RGBA8, TP_GRAY16, TP_RGB16, TP_GRAY8};
	fuzz_init();
	const char *path = fuzz_file("in.png", data, size);
	tp_image img;
	tp_err err = {""};
	/* The format comes from the length, so the PNG signature stays the fuzzer's to keep. */
	int rc = tp_png_read(path, fmts[size % 5], &img, &err);
	if (rc < 0) {
		fuzz_check_error(rc, &err);
		return 0;
	}
	if (img.w < 1 || img.h < 1 || img.w > TP_PNG_MAX_SIDE || img.h > TP_PNG_MAX_SIDE ||
	    (double)img.w * img.h > TP_PNG_MAX_PIXELS)
		abort();
	/* Touch every row so ASan sees the whole buffer. */
	unsigned sum = 0;
	for (int y = 0; y < img.h; y++)
		sum += tp_image_row(&img, y)[0];
	(void)sum;
	tp_image_free(&img);
	return 0;
}
