#!/bin/sh
# make check-preview, first step: starts `tidepool preview --port 0` on an example scene,
# reads the URL from its first line of output, fetches the page, /status.json and a frame,
# and stops it with SIGTERM (exit 0 expected). Usage: tests/preview/smoke.sh TIDEPOOL
set -eu
BIN=$1
work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT INT TERM
"$BIN" preview scenes/pond.json --port 0 -q >"$work/out" 2>"$work/err" &
pid=$!
i=0
until [ -s "$work/out" ]; do
	i=$((i + 1))
	if [ "$i" -gt 300 ] || ! kill -0 "$pid" 2>/dev/null; then
		echo "preview smoke: no URL printed"; cat "$work/err"; exit 1
	fi
	sleep 0.1
done
url=$(head -n 1 "$work/out")
case "$url" in http://127.0.0.1:*/\?token=*) ;; *) echo "preview smoke: not a URL: $url"; exit 1 ;; esac
base=${url%%\?*}
token=${url#*token=}
curl -sf "$url" | grep -q '<title>tidepool preview</title>'
[ "$(curl -s -o /dev/null -w '%{http_code}' "${base}status.json")" = 403 ] # no secret
curl -sf -H "X-Tidepool-Token: $token" "${base}status.json" | grep -q '"error":null'
curl -sf -o "$work/f.png" "${base}frame/10.png?token=$token"
[ "$(head -c 4 "$work/f.png" | od -An -c | tr -d ' ')" = "211PNG" ]
kill -TERM "$pid"
wait "$pid"
echo "  PREVIEW $base: page, status and a frame served; stopped cleanly"
