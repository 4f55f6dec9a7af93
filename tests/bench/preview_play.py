"""make bench, preview page playback: the rate headless Chromium achieves playing a scene.

usage: preview_play.py TIDEPOOL SCENE [WxH]   (scripts/bench.sh runs it; default 640x360)

`tidepool preview SCENE --size WxH` in a temporary directory, its page opened in headless
Chromium (selenium and chromedriver, as tests/browser), playing as it does when it opens:
several frames asked for ahead, decoded by createImageBitmap off the main thread. After
the server's stats walk finished and a warm-up of TP_BENCH_PLAY_WARMUP seconds (default
3), the frames the page shows while playing (its `data-played` counter) over
TP_BENCH_PLAY_SECONDS (default 10) of wall time: the achieved rate against the scene's
rate, and the rate the page itself displays. The target (issue 42): pond.json at 640x360
plays at 27 frames per second or more on a quiet 2-core machine. Prints a table row and
a line; exits 0 whatever the rate (benchmarks report), 77 when Chromium is missing."""
import json
import os
import shutil
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "preview"))
os.environ.setdefault("TP_BIN", os.path.abspath(sys.argv[1]))
from pvserver import Preview  # noqa: E402

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
except ImportError:
    print("preview play: skipped (python3-selenium not installed)")
    sys.exit(77)

scene, size = sys.argv[2], (sys.argv[3] if len(sys.argv) > 3 else "640x360")
WARMUP = float(os.environ.get("TP_BENCH_PLAY_WARMUP", "3"))
SECONDS = float(os.environ.get("TP_BENCH_PLAY_SECONDS", "10"))
chromium = next((p for p in ("/usr/bin/chromium", "/usr/bin/chromium-browser",
                             "/usr/bin/google-chrome") if os.path.exists(p)), None)
if not chromium:
    print("preview play: skipped (no chromium installed)")
    sys.exit(77)

name = os.path.splitext(os.path.basename(scene))[0]
p = Preview(os.path.basename(scene), args=("--size", size, "-q"), text=open(scene).read())
profile = tempfile.mkdtemp(prefix="tp-bench-chromium-")
d = None
try:
    t0 = time.monotonic()
    while True:  # the stats worker's walk done: it would share the cores
        s = json.loads(p.get("/stats.json"))
        if s["done"] >= s["frames"] or time.monotonic() - t0 > 300:
            break
        time.sleep(0.1)
    fps = float(json.loads(p.get("/status.json"))["fps"])
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for a in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
              "--disable-background-networking", "--disable-component-update", "--disable-sync",
              "--disable-dev-shm-usage", "--window-size=1100,860", "--user-data-dir=" + profile):
        opts.add_argument(a)
    d = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"),
                         options=opts)
    d.get(p.url)

    def played():
        return int(d.execute_script("return document.body.dataset.played || '0'"))

    t0 = time.monotonic()
    while played() == 0:
        if time.monotonic() - t0 > 60:
            raise RuntimeError("the page did not start playing within 60 s")
        time.sleep(0.05)
    time.sleep(WARMUP)
    n0, t0 = played(), time.monotonic()
    time.sleep(SECONDS)
    n1, t1 = played(), time.monotonic()
    shown_rate = d.execute_script("return document.getElementById('rate').textContent")
    rate = (n1 - n0) / (t1 - t0)
    print("| %-34s | %-22s | %12.2f %-8s | %12.2f | %7.2fx |" % (
        "preview %s %s page playback" % (name, size), "frames/s in Chromium", rate, "fps", fps,
        rate / fps), flush=True)
    print("preview play: %s %s: %d frames shown in %.1f s: %.1f fps (target >= 27 on a quiet "
          "2-core machine); the page says \"%s\"" % (name, size, n1 - n0, t1 - t0, rate,
                                                   shown_rate), flush=True)
finally:
    if d:
        d.quit()
    shutil.rmtree(profile, ignore_errors=True)
    p.stop()
