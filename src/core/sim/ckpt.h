/*
 * ckpt.h - simulation checkpoints: the whole state the next frames depend on, in one
 * file per checkpoint, DIR/frame-NNNNNNNN.tpck (NNNNNNNN = the next output frame).
 *
 * A checkpoint at frame k holds the state just after output frame k-1 was made, so a
 * render of frames k.. loads it and continues bit for bit (the first frame after it
 * always runs the solver, so nothing derived need be stored). Format (all integers
 * little-endian, floats as IEEE-754 bits; docs/farm.md has the full table):
 *
 *     0   8  magic "TPCKPT01"
 *     8   4  u32 format version (CKPT_FORMAT)
 *     12  4  u32 header size (128)
 *     16 32  program version, ASCII, NUL-padded (TP_VERSION)
 *     48 32  scene fingerprint (scene_fingerprint(): SHA-256 of scene text + overrides)
 *     80  4  i32 width        84  4  i32 height
 *     88  4  i32 frame        92  4  i32 frames of the render
 *     96 16  solver name, NUL-padded
 *     112 8  u64 payload bytes
 *     120 8  u64 XXH3-64 of bytes 0..119 (the header before it) and then the payload
 *     128 .. payload: loop section, stepper section, solver section (sim/loop.h,
 *            sim/stepper.h, the solver's save())
 *     end 8  trailer "TPCKEND\n"
 *
 * Writing is atomic (a temporary name in DIR, renamed when complete), so a checkpoint
 * exists whole or not at all. Loading verifies, in this order, the magic and format, the
 * program version, the size, the fingerprint, the frame, the frame count and solver, then
 * the payload's length, trailer and checksum (of the header too, so that no single-bit
 * flip anywhere passes); after the sections are read, that the state is at the header's
 * frame (each reader bounds its own values); only a regular file is opened; any mismatch is refused with TP_EINPUT and a message giving the reason.
 */
#ifndef TP_SIM_CKPT_H
#define TP_SIM_CKPT_H

#include <stddef.h>
#include <stdint.h>

#include "scene/scene.h"
#include "sim/loop.h"
#include "util/error.h"

#define CKPT_FORMAT 3
#define CKPT_HEADER 128

typedef struct ckpt_info {
	char version[33];
	uint8_t fingerprint[32];
	int w, h, frame, frames;
	char solver[17];
	uint64_t payload;
	uint64_t sum; /* XXH3-64 of the payload */
} ckpt_info;

/* What a checkpoint must match: the scene as loaded, its fingerprint. */
typedef struct ckpt_key {
	const scene *sc;
	uint8_t fingerprint[32];
} ckpt_key;

/* DIR/frame-%08d.tpck */
int ckpt_path(const char *dir, int frame, char *buf, size_t n);
/* Writes the state of lp (whose next output frame is `frame`) atomically; *bytes gets
 * the file's size. */
int ckpt_write(const char *dir, const ckpt_key *key, sim_loop *lp, int frame, uint64_t *bytes,
	       tp_err *err);
/* Reads and checks the header of `path` against key and frame (frame < 0: any); the
 * message names the file and the reason. */
int ckpt_check(const char *path, const ckpt_key *key, int frame, ckpt_info *info, tp_err *err);
/* ckpt_check(), then loads the state into a fresh lp. */
int ckpt_load(const char *path, const ckpt_key *key, int frame, sim_loop *lp, tp_err *err);
/* The latest checkpoint frame k with 0 < k <= at_most in dir (by name), or 0 if none.
 * TP_EIO if dir cannot be read. */
int ckpt_find(const char *dir, int at_most, int *frame, tp_err *err);

#endif
