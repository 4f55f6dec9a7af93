/*
 * exr_pack.h - the byte work of an OpenEXR ZIP chunk, done by tidepool (exr.c) instead
 * of OpenEXRCore's encode pipeline, with the same bytes: 32-bit floats to 16-bit halves
 * exactly as OpenEXRCore 3.1 converts them, and ZIP's predictor. The pipeline converted
 * one sample at a time through a branchy routine and allocated every chunk's buffers
 * anew; these convert eight samples an instruction where the CPU has F16C and work in
 * the caller's buffers. tests/test_exr.c checks them against Imath's half (the routine
 * OpenEXRCore copies) and against the predictor written out byte by byte.
 *
 * Pure functions of their inputs: no state, no allocation, no errors.
 */
#ifndef TP_ENCODE_EXR_PACK_H
#define TP_ENCODE_EXR_PACK_H

#include <stddef.h>
#include <stdint.h>

/* One float to half as OpenEXRCore's float_to_half (internal_coding.h; Imath's
 * imath_float_to_half without F16C): round to nearest even, overflow to infinity, and a
 * NaN keeps its sign and top ten payload bits (at least one of them set). */
uint16_t exr_half(float f);

/* out[i] = exr_half(in[i]) for i < n. */
void exr_half_row(const float *in, uint16_t *out, size_t n);

/* ZIP's predictor (OpenEXR's Technical Introduction; ImfZip.cpp): the n bytes of raw
 * split into the even-indexed then the odd-indexed ones, then each byte after the first
 * replaced by its difference from the one before plus 128 (mod 256); into out, which
 * must not overlap raw. What zlib then compresses. */
void exr_zip_predict(const uint8_t *raw, size_t n, uint8_t *out);

#endif
