"""Checks that the manual page shows its underscores as written in its source.

usage: man_underscores.py MAN.scd RENDERED.txt ROOT

scdoc makes _text_ italic only where an underscore starts or ends a word, so an
underscore meant as markup can print (`W_x_H` for _W_x_H_) and one meant as text can
vanish (`out/disp%04d.exr_` for _out/disp_%04d.exr_). RENDERED.txt is the page as a
reader sees it (`man -l`, no line wrapping). Fails, one line each, for
- stray underscores: a word of the rendered page with an underscore must be a name the
  program really has (found in ROOT's src/, include/, scenes/ or completion/);
- dropped underscores: an italic _X_ of the source (one word) whose X holds an odd number
  of unescaped underscores (so they cannot all be markup) must show X whole."""
import glob
import re
import sys

scd_path, rendered_path, root = sys.argv[1:4]
scd = open(scd_path).read()
text = open(rendered_path).read()
# groff prints hyphens and quotes as typographic characters.
for a, b in (("\u2010", "-"), ("\u2212", "-"), ("\u2019", "'"), ("\u2018", "`")):
    text = text.replace(a, b)

corpus = ""
for pat in ("src/**/*.[ch]", "include/*.h", "scenes/**/*.json", "completion/*"):
    for f in glob.glob("%s/%s" % (root, pat), recursive=True):
        corpus += open(f, errors="replace").read()

bad = []
for word in sorted(set(re.findall(r"[\w{}%./-]*_[\w{}%./-]*", text))):
    name = word.strip("./-")
    if name.startswith("_") or name.endswith("_") or name not in corpus:
        bad.append("stray underscore: %r is not a name in the program's sources" % word)

for m in re.finditer(r"(?<![\w\\])_(\S*)_(?!\w)", scd):
    inner = m.group(1)
    if len(re.findall(r"(?<!\\)_", inner)) % 2 and inner.replace("\\_", "_") not in text:
        line = scd.count("\n", 0, m.start()) + 1
        bad.append("dropped underscore: %s:%d: _%s_ does not print as %r"
                   % (scd_path, line, inner, inner))

for b in bad:
    print(b)
sys.exit(1 if bad else 0)
