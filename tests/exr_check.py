"""Reads tidepool's OpenEXR maps with an independent reader (OpenImageIO, Debian's
python3-openimageio) and checks them. Exits 0 if every check holds, 1 (printing why) if not.

usage:
  exr_check.py values EXR PNG KIND LEVELS METRES
      the EXR holds what the 16-bit PNG of the same frame says, within the PNG's
      quantization (and half's rounding): KIND height or displacement (PNG v = c * LEVELS
      + 32768 with c in height units; EXR c * METRES, metres per height unit), foam (PNG
      v = f * 65535, EXR f)
  exr_check.py sequence PATTERN FRAMES
      a looped sequence tiles (the step across the left/right and top/bottom seams is no
      larger than 1.25 x the largest step between neighbouring columns or rows inside) and
      loops (the step from the last frame to the first is no larger than the largest step
      between neighbouring frames)
"""
import sys

import numpy as np
import OpenImageIO as oiio


def read(path):
    buf = oiio.ImageBuf(path)
    if buf.has_error:
        sys.exit("%s: %s" % (path, buf.geterror()))
    return buf.get_pixels(oiio.FLOAT), buf.spec()


def values(exr, png, kind, levels, metres):
    e, spec = read(exr)
    p = oiio.ImageBuf(png)
    raw = p.get_pixels(oiio.UINT16).astype(np.float64)
    if e.shape != raw.shape:
        sys.exit("shapes differ: %s %s" % (e.shape, raw.shape))
    half = spec.channelformat(0) == oiio.HALF
    if kind == "foam":
        want = raw / 65535.0
        quant = 0.5 / 65535.0
    else:
        want = (raw - 32768.0) / levels * metres
        quant = 0.5 / levels * metres
    # half keeps 11 significant bits: its rounding is at most 2^-11 of the value
    tol = quant + (np.abs(want) * 2.0 ** -11 if half else 0) + 1e-7
    err = np.abs(e - want)
    bad = err > tol
    print("%s: max |exr - png| %.3g, tolerance %.3g..%.3g, spread %.3g" %
          (exr, err.max(), tol.min() if np.ndim(tol) else tol, np.max(tol), np.std(want)))
    if np.std(want) <= 10 * quant:
        sys.exit("the map is flat: nothing to compare")
    if bad.any():
        sys.exit("%d samples differ beyond the PNG's quantization" % bad.sum())


def seam_ratio(a):
    cols = np.abs(np.diff(a, axis=1)).max()
    rows = np.abs(np.diff(a, axis=0)).max()
    seam_x = np.abs(a[:, 0] - a[:, -1]).max()
    seam_y = np.abs(a[0, :] - a[-1, :]).max()
    return max(seam_x / max(cols, 1e-12), seam_y / max(rows, 1e-12))


def sequence(pattern, frames):
    f = [read(pattern % k)[0] for k in range(frames)]
    for k in (0, frames - 1):
        r = seam_ratio(f[k])
        print("frame %d: seam %.3f x the largest inner step" % (k, r))
        if r > 1.25:
            sys.exit("%s does not tile" % (pattern % k))
    steps = [np.abs(f[k + 1] - f[k]).max() for k in range(frames - 1)]
    wrap = np.abs(f[0] - f[-1]).max()
    print("last -> first %.4g, neighbouring frames up to %.4g" % (wrap, max(steps)))
    if max(steps) <= 0:
        sys.exit("the sequence does not move")
    if wrap > max(steps):
        sys.exit("the loop jumps from its last frame to its first")


if __name__ == "__main__":
    if sys.argv[1] == "values":
        values(sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5]), float(sys.argv[6]))
    elif sys.argv[1] == "sequence":
        sequence(sys.argv[2], int(sys.argv[3]))
    else:
        sys.exit(__doc__)
