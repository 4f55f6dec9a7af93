#!/usr/bin/python3
"""Writes src/compare/magma.inc: matplotlib's "magma" colour map (CC0; Stefan van der
Walt and Nathaniel Smith), the 256 entries rounded to 8 bits, for FLIP's error maps.

usage: /usr/bin/python3 scripts/gen-magma.py > src/compare/magma.inc
(Debian: python3-matplotlib; only needed to make the file again.)"""
from matplotlib._cm_listed import _magma_data

rows = ["{%d,%d,%d}" % tuple(int(round(c * 255)) for c in rgb) for rgb in _magma_data]
for i in range(0, 256, 8):
    print("\t" + ", ".join(rows[i:i + 8]) + ",")
