#!/bin/sh
# docs/stills/compare_report.png: a screenshot of `tidepool compare --html`, taken by
# headless Chromium (Debian chromium, chromium-driver, python3-selenium).
# Usage: scripts/compare-still.sh [path/to/tidepool]
set -eu
BIN=${1:-build/tidepool}
PY=${PYTHON:-/usr/bin/python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# The golden frames, and the same scene with a little more refraction: the rings move.
"$BIN" render scenes/pond.json -q -y --size 480x270 --frames 60 -o "$tmp/golden/%04d.png"
"$BIN" render scenes/pond.json -q -y --size 480x270 --frames 60 --set render.refraction=1.25 \
	-o "$tmp/out/%04d.png"
BIN=$(realpath "$BIN")
(cd "$tmp" && "$BIN" compare golden out --max-flip 0.002 --ignore 0,0,96,28 -q --html report.html) || true

"$PY" - "$tmp/report.html" docs/stills/compare_report.png "$tmp/profile" <<'EOF'
import sys
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import WebDriverWait

page, out, profile = sys.argv[1:4]
o = webdriver.ChromeOptions()
o.binary_location = "/usr/bin/chromium"
for a in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
          "--disable-background-networking", "--disable-component-update", "--disable-sync",
          "--hide-scrollbars", "--force-device-scale-factor=1", "--window-size=1400,1180",
          "--user-data-dir=" + profile):
    o.add_argument(a)
d = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=o)
d.get("file://" + page)
WebDriverWait(d, 10).until(lambda d: d.execute_script("return document.body.dataset.ready") == "1")
# Frame 56, whose rings moved most visibly, in the side-by-side view.
import time
from selenium.webdriver.common.by import By
sel = d.find_element(By.ID, "pick")
d.execute_script("arguments[0].value = '56'; arguments[0].dispatchEvent(new Event('change'))", sel)
time.sleep(0.5)
d.save_screenshot(out)
d.quit()
EOF
echo "wrote docs/stills/compare_report.png"
