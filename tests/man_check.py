"""Checks that the manual page covers the program.

usage: man_check.py TIDEPOOL MAN.scd SRCDIR

- every command `TIDEPOOL --help` lists has a "## tidepool COMMAND" section, and every
  option `TIDEPOOL COMMAND --help` prints (-x and --long, in its option column) appears in
  that section in bold (*--option*); the top-level options in the whole page;
- every exit status of src/core/util/error.h (TP_EXIT_*) is listed under EXIT STATUS;
- every environment variable the sources read (getenv("NAME")) is under ENVIRONMENT.
A command or option added later without its manual entry fails here by name. Prints one
line per omission and exits 1 if there is any."""
import glob
import re
import subprocess
import sys

tidepool, man_path, src = sys.argv[1:4]
man = open(man_path).read()
missing = []


def section(text, heading):
    """The text under a heading ("# EXIT STATUS", "## tidepool render") up to the next
    heading of the same or a higher level, or None."""
    level = heading.split(" ")[0]
    m = re.search(r"^" + re.escape(heading) + r"[ \t]*$", text, re.M)
    if not m:
        return None
    rest = text[m.end():]
    stop = re.search(r"^#{1,%d} " % len(level), rest, re.M)
    return rest[:stop.start()] if stop else rest


def run(*args):
    return subprocess.run([tidepool, *args], capture_output=True, text=True).stdout


top = run("--help")
commands = re.findall(r"^  ([a-z][a-z0-9-]*) ", top.split("commands:", 1)[1], re.M)
if not commands:
    missing.append("no commands found in `tidepool --help`")
for tok in re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", top.split("Options:", 1)[-1]):
    if "*%s*" % tok not in man:
        missing.append("tidepool %s: not in the manual page" % tok)

for cmd in commands:
    sec = section(man, "## tidepool %s" % cmd)
    if sec is None:
        missing.append("command %s: no \"## tidepool %s\" section" % (cmd, cmd))
        continue
    helptext = run(cmd, "--help")
    opts = []
    for line in helptext.splitlines():
        m = re.match(r"^\s{2,}((?:-[A-Za-z0-9](?:, |\s))?\s*(?:--[a-z][a-z0-9-]*)?)", line)
        if m and m.group(1).strip():
            opts += re.findall(r"--?[A-Za-z0-9][a-z0-9-]*", m.group(1))
    if not opts:
        missing.append("command %s: no options found in its --help" % cmd)
    for o in opts:
        if "*%s*" % o not in sec:
            missing.append("tidepool %s %s: not in the manual page's section" % (cmd, o))

exits = section(man, "# EXIT STATUS") or ""
for name, value in re.findall(r"(TP_EXIT_\w+)\s*=\s*(\d+)", open(src + "/core/util/error.h").read()):
    if "*%s*" % value not in exits:
        missing.append("exit status %s (%s): not under EXIT STATUS" % (value, name))

env = section(man, "# ENVIRONMENT") or ""
names = set()
for path in glob.glob(src + "/**/*.c", recursive=True):
    names |= set(re.findall(r'getenv\("([A-Z_][A-Z0-9_]*)"\)', open(path).read()))
for n in sorted(names):
    if "*%s*" % n not in env:
        missing.append("environment variable %s: not under ENVIRONMENT" % n)

for m in missing:
    print(m)
print("man_check: %d commands, %d omissions" % (len(commands), len(missing)))
sys.exit(1 if missing else 0)
