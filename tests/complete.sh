#!/bin/bash
# Runs the bash completion (completion/tidepool.bash, or $TP_COMPLETION) on a command
# line as bash would, and prints the completions one per line.
# usage: tests/complete.sh "tidepool render --thr"   (tidepool must be on PATH)
source "${TP_COMPLETION:-completion/tidepool.bash}"
COMP_LINE=$1
COMP_POINT=${#COMP_LINE}
# bash's own words: split at blanks, with = and : words of their own (COMP_WORDBREAKS)
read -r -a COMP_WORDS <<<"$(printf '%s' "$COMP_LINE" | sed 's/\([=:]\)/ \1 /g')"
[[ $COMP_LINE == *[[:space:]=] ]] && COMP_WORDS+=("")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
_tidepool
printf '%s\n' "${COMPREPLY[@]}"
