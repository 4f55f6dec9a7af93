"""Reads the record tidepool writes into its files (docs/textures.md, "What each file
records") with independent readers: OpenImageIO (Debian's python3-openimageio) for the
OpenEXR attributes and the PNG text, and the PNG's own chunks for sRGB. Exits 0 if every
check holds, 1 (printing why) if not.

usage:
  record_check.py exr EXR EXPECTED_JSON
      every key of EXPECTED_JSON is the attribute tidepool:KEY with that value (pairs as
      v2d, null as int 0), and the standard attributes are there: framesPerSecond as the
      rational of EXPECTED's fps, wrapmodes (periodic when "tiles"), software
  record_check.py png PNG EXPECTED_JSON SRGB
      the iTXt record holds every key of EXPECTED_JSON with that value (and none whose
      expected value is "__absent__"); the file has an
      sRGB chunk if SRGB is 1 and none if it is 0
  record_check.py heights PNG EXR
      the heights the 16-bit PNG's record decodes ((v - offset) / scale height units)
      are the EXR's float heights (metres / metresPerUnit) to within one level
"""
import json
import struct
import sys
from fractions import Fraction

import numpy as np
import OpenImageIO as oiio


def attrs(path):
    inp = oiio.ImageInput.open(path)
    if not inp:
        sys.exit("%s: %s" % (path, oiio.geterror()))
    spec = inp.spec()
    inp.close()
    return {a.name: a.value for a in spec.extra_attribs}, spec


def same(a, b):
    if isinstance(b, list):
        return len(a) == len(b) and all(abs(x - y) <= 1e-9 * max(1, abs(y)) for x, y in zip(a, b))
    if isinstance(b, float) or isinstance(a, float):
        return abs(a - b) <= 1e-9 * max(1, abs(b))
    return a == b


def exr(path, expected):
    got, _ = attrs(path)
    want = json.loads(expected)
    bad = []
    for k, v in want.items():
        name = "tidepool:" + k
        if name not in got:
            bad.append("%s missing" % name)
            continue
        g = got[name]
        if v is None:
            v = 0
        if isinstance(v, bool):
            v = int(v)
        if isinstance(v, list):
            g = list(g)
        if not same(g, v):
            bad.append("%s: %r, not %r" % (name, g, v))
    fp = str(got.get("tidepool:fingerprint", ""))
    if len(fp) != 64 or any(c not in "0123456789abcdef" for c in fp):
        bad.append("tidepool:fingerprint: %r" % fp)
    fps = got.get("framesPerSecond")
    if fps is None or Fraction(fps[0], fps[1]) != Fraction(want["fps"]).limit_denominator(1001):
        bad.append("framesPerSecond: %r" % (fps,))
    wrap = "periodic,periodic" if want.get("tiles") else "clamp,clamp"
    if got.get("wrapmodes") != wrap:
        bad.append("wrapmodes: %r, not %r" % (got.get("wrapmodes"), wrap))
    if not str(got.get("software", "")).startswith("tidepool "):
        bad.append("software: %r" % got.get("software"))
    print("%s: %d attributes checked" % (path, len(want) + 3))
    if bad:
        sys.exit("\n".join(bad))


def png_chunks(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit("%s: not a PNG" % path)
    i, out = 8, []
    while i < len(data):
        n, = struct.unpack(">I", data[i:i + 4])
        out.append(data[i + 4:i + 8].decode("latin-1"))
        i += 12 + n
    return out


def png(path, expected, srgb):
    got, _ = attrs(path)
    if "tidepool-record" not in got:
        sys.exit("%s: no tidepool-record text (%s)" % (path, sorted(got)))
    rec = json.loads(got["tidepool-record"])
    want = json.loads(expected)
    bad = ["%s: %r, not %r" % (k, rec.get(k), v) for k, v in want.items()
           if v != "__absent__" and (k not in rec or not same(rec[k], v))]
    bad += ["%s: present (%r)" % (k, rec[k]) for k, v in want.items()
            if v == "__absent__" and k in rec]
    chunks = png_chunks(path)
    if ("sRGB" in chunks) != (srgb == "1"):
        bad.append("sRGB chunk %s (chunks %s)" % ("missing" if srgb == "1" else "present", chunks))
    if "iTXt" not in chunks:
        bad.append("no iTXt chunk (chunks %s)" % chunks)
    print("%s: %d keys checked, chunks %s" % (path, len(want), chunks))
    if bad:
        sys.exit("\n".join(bad))


def heights(png_path, exr_path):
    got, _ = attrs(png_path)
    rec = json.loads(got["tidepool-record"])
    raw = oiio.ImageBuf(png_path).get_pixels(oiio.UINT16).astype(np.float64)
    h = (raw - rec["offset"]) / rec["scale"]
    e = oiio.ImageBuf(exr_path).get_pixels(oiio.FLOAT).astype(np.float64)
    erec, _ = attrs(exr_path)
    want = e / erec["tidepool:metresPerUnit"]
    err = np.abs(h - want).max()
    level = 1.0 / rec["scale"]
    print("%s: scale %.6g levels per unit, max |decoded - exr| %.3g, one level %.3g, spread %.3g"
          % (png_path, rec["scale"], err, level, want.std()))
    if want.std() < 20 * level:
        sys.exit("the heights are flat: nothing to compare")
    if err > level:
        sys.exit("decoded heights differ from the EXR's by more than one level")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "exr":
        exr(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 5 and sys.argv[1] == "png":
        png(sys.argv[2], sys.argv[3], sys.argv[4])
    elif len(sys.argv) == 4 and sys.argv[1] == "heights":
        heights(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
