#include "util/image.h"

#include <stdlib.h>
#include <string.h>

#include "util/error.h"

int tp_pixfmt_channels(tp_pixfmt f)
{
	switch (f) {
	case TP_RGB8: case TP_RGB16: return 3;
	case TP_RGBA8: return 4;
	default: return 1;
	}
}

int tp_pixfmt_bytes(tp_pixfmt f)
{
	switch (f) {
	case TP_RGB8: return 3;
	case TP_RGBA8: return 4;
	case TP_GRAY16: return 2;
	case TP_RGB16: return 6;
	default: return 1;
	}
}

const char *tp_pixfmt_name(tp_pixfmt f)
{
	switch (f) {
	case TP_RGB8: return "rgb24";
	case TP_RGBA8: return "rgba";
	case TP_GRAY16: return "gray16";
	case TP_RGB16: return "rgb48";
	default: return "gray";
	}
}

int tp_image_alloc(tp_image *img, int w, int h, tp_pixfmt fmt)
{
	memset(img, 0, sizeof *img);
	if (w <= 0 || h <= 0)
		return TP_EIO;
	size_t stride = ((size_t)w * (size_t)tp_pixfmt_bytes(fmt) + 63) & ~(size_t)63;
	void *p = NULL;
	if (posix_memalign(&p, 64, stride * (size_t)h) != 0)
		return TP_EIO;
	memset(p, 0, stride * (size_t)h);
	img->w = w;
	img->h = h;
	img->stride = (ptrdiff_t)stride;
	img->fmt = fmt;
	img->pixels = p;
	return 0;
}

void tp_image_free(tp_image *img)
{
	if (!img)
		return;
	free(img->pixels);
	img->pixels = NULL;
}
