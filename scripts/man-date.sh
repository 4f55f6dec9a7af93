#!/bin/sh
# The manual page's date, as SOURCE_DATE_EPOCH for scdoc: the last commit of its source,
# or the source file's own time outside a git checkout. The page is then the same bytes
# whenever and wherever it is built (scdoc would otherwise write today's date), and
# tests/test_install.c rebuilds it the same way to check it is not stale.
src=${1:-docs/tidepool.1.scd}
t=$(git log -1 --format=%ct -- "$src" 2>/dev/null)
[ -n "$t" ] || t=$(stat -c %Y "$src")
echo "$t"
