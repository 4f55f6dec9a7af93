"""make bench, preview rows: what `tidepool preview` serves a page, over HTTP.

usage: preview_bench.py TIDEPOOL SCENE...   (scripts/bench.sh runs it)

For each scene, a server at the page's default size, the scene fitted into 640x360
(`--port 0`: 640x360 for the 16:9 example scenes, 360x360 for the square textures), the
scene copied to a temporary directory:
- playback: GET /frame/N.png for every frame in order on one keep-alive connection, as
  the page plays (PNG bytes received; the page's decode and draw are not included). Timed
  after the stats worker finished its walk (once per reload), best of REPS passes.
  Baseline: the 30 fps target; the ratio is fps / 30.
- seek: after one pass (the in-memory checkpoints exist), GET of SEEKS random frames
  (fixed seed); the row is the slowest, the line after it the median. Baseline: the
  200 ms target.
- reload: the scene saved as editors do (a temporary file renamed over it) with a drop
  added, timed until GET /frame/N.png at the page's position (the middle frame) returns
  the new scene's frame (its X-Tidepool-Generation); median of RELOADS saves. Two rows: the
  drop at the middle frame's time ("edit position": the states simulated before it are
  kept) and at t = 0 ("edit start": all simulated again). Baseline: the 300 ms target.
- draft: the same saves, timed until GET /frame/N.png?draft=1 (the scene simulated at a
  quarter of the size, which the page shows first) returns the new scene's frame, asked
  for on a second connection while the first waits for the full frame, as the page does
  (the two compete for the cores). Two rows again; baseline the 300 ms target.
- a last line per scene and edit kind: the first picture (the draft or the full frame,
  whichever came first) against 300 ms, and after every scene a summary of them all.
  The page itself adds its /status.json poll (up to 50 ms) and, before it asks for the
  draft, 50 ms (app.js POLL_MS, DRAFT_MS); these rows are the server's part.
Environment: TP_BENCH_PREVIEW_REPS (2), TP_BENCH_PREVIEW_SEEKS (20),
TP_BENCH_PREVIEW_RELOADS (5), TP_BENCH_PREVIEW_FRAMES (all: frames per playback pass)."""
import http.client
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

tp, scenes = sys.argv[1], sys.argv[2:]
REPS = int(os.environ.get("TP_BENCH_PREVIEW_REPS", "2"))
SEEKS = int(os.environ.get("TP_BENCH_PREVIEW_SEEKS", "20"))
RELOADS = int(os.environ.get("TP_BENCH_PREVIEW_RELOADS", "5"))
MAXF = int(os.environ.get("TP_BENCH_PREVIEW_FRAMES", "0"))


def row(workload, metric, value, unit, baseline, ratio):
    print("| %-34s | %-22s | %12.2f %-8s | %12.2f | %7.2fx |" % (workload, metric, value, unit,
                                                                   baseline, ratio), flush=True)


class Server:
    def __init__(self, scene):
        self.dir = tempfile.mkdtemp(prefix="tp-bench-preview-")
        self.scene = os.path.join(self.dir, os.path.basename(scene))
        shutil.copy(scene, self.scene)
        self.proc = subprocess.Popen([tp, "preview", self.scene, "--port", "0", "-q"],
                                     stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True)
        url = self.proc.stdout.readline().strip()
        hostport, self.token = url.split("//", 1)[1].split("/?token=")
        self.host, port = hostport.rsplit(":", 1)
        self.port = int(port)
        self.conn = http.client.HTTPConnection(self.host, self.port, timeout=120)
        self.conn2 = http.client.HTTPConnection(self.host, self.port, timeout=120)

    def get(self, path):
        self.conn.request("GET", path, headers={"X-Tidepool-Token": self.token})
        r = self.conn.getresponse()
        body = r.read()
        if r.status != 200:
            raise RuntimeError("%s: HTTP %d %s" % (path, r.status, body[:200]))
        return r, body

    def json(self, path):
        return json.loads(self.get(path)[1])

    def stop(self):
        self.conn.close()
        self.conn2.close()
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=30)
        shutil.rmtree(self.dir, ignore_errors=True)


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


summary = []
for scene in scenes:
    name = os.path.splitext(os.path.basename(scene))[0]
    s = Server(scene)
    try:
        t0 = time.monotonic()
        st = s.json("/status.json")
        while not st["loaded"] and time.monotonic() - t0 < 60:  # the first load, under way
            time.sleep(0.05)
            st = s.json("/status.json")
        if not st["loaded"]:
            raise RuntimeError("%s: %s" % (scene, st["error"] and st["error"]["text"]))
        frames = st["frames"] if not MAXF else min(MAXF, st["frames"])
        t0 = time.monotonic()
        while s.json("/stats.json")["done"] < st["frames"] and time.monotonic() - t0 < 300:
            time.sleep(0.05)
        best = None
        for _ in range(REPS):
            t0 = time.monotonic()
            for n in range(frames):
                s.get("/frame/%d.png" % n)
            dt = time.monotonic() - t0
            best = dt if best is None else min(best, dt)
        fps = frames / best
        row("preview %s %dx%d playback" % (name, st["width"], st["height"]), "frames/s, GET in order", fps, "fps", 30,
            fps / 30)
        rng = random.Random(1)
        times = []
        for _ in range(SEEKS):
            n = rng.randrange(st["frames"])
            t0 = time.monotonic()
            s.get("/frame/%d.png" % n)
            times.append(1000 * (time.monotonic() - t0))
        worst = max(times)
        row("preview %s seek (random frame)" % name, "slowest of %d, ms" % SEEKS, worst, "ms", 200,
            200 / worst if worst > 0 else 0)
        print("preview: %s: seek median %.1f ms" % (name, median(times)), flush=True)
        text = open(s.scene).read()
        scene_json = json.loads(text)
        mid = st["frames"] // 2
        fps = float(st["fps"])
        w, h = scene_json["size"]
        # Two kinds of save: an edit at the page's position (a drop added at the middle
        # frame's time, where an author adjusts what they look at: the states before it are
        # kept), and an edit from the start (a drop at t = 0: everything is simulated again).
        for kind, t_drop in (("at the position", mid / fps), ("from the start", 0.0)):
            lat, draft, first = [], [], []
            for i in range(RELOADS):
                gen = s.json("/status.json")["generation"]
                sc = dict(scene_json)
                drop = {"t": t_drop, "at": [w * (0.3 + 0.1 * i), h * 0.5], "radius": 6,
                        "strength": 1.5}
                sc["drops"] = list(scene_json.get("drops", [])) + [drop]
                tmp = os.path.join(s.dir, ".%s.tmp" % os.path.basename(s.scene))
                t0 = time.monotonic()
                with open(tmp, "w") as f:
                    f.write(json.dumps(sc, indent=2))
                os.rename(tmp, s.scene)
                # the draft (a quarter of the size) on the second connection, as the page
                # asks for it while the full frame is on its way
                got = {}

                def get_draft():
                    try:
                        while True:
                            s.conn2.request("GET", "/frame/%d.png?draft=1" % mid,
                                            headers={"X-Tidepool-Token": s.token})
                            r = s.conn2.getresponse()
                            r.read()
                            if r.status != 200:  # no draft for this size
                                return
                            if int(r.getheader("X-Tidepool-Generation")) > gen:
                                got["draft"] = 1000 * (time.monotonic() - t0)
                                return
                            if time.monotonic() - t0 > 30:
                                return
                            time.sleep(0.002)
                    except Exception as e:  # reported below
                        got["error"] = e
                th = threading.Thread(target=get_draft)
                th.start()
                while True:
                    r, _ = s.get("/frame/%d.png" % mid)
                    if int(r.getheader("X-Tidepool-Generation")) > gen:
                        break
                    if time.monotonic() - t0 > 30:
                        raise RuntimeError("no reload within 30 s")
                    time.sleep(0.002)
                lat.append(1000 * (time.monotonic() - t0))
                th.join()
                if "error" in got:
                    raise got["error"]
                if "draft" in got:
                    draft.append(got["draft"])
                first.append(min(lat[-1], got.get("draft", lat[-1])))
                time.sleep(0.6)  # let the stats worker start, as it would after a real save
            m = median(lat)
            row("preview %s reload, edit %s" % (name, kind.split()[-1]), "save to new frame, ms",
                m, "ms", 300, 300 / m if m else 0)
            print("preview: %s: reload after an edit %s: median %.0f ms of %s" %
                  (name, kind, m, ", ".join("%.0f" % x for x in lat)), flush=True)
            if draft:
                m = median(draft)
                row("preview %s draft, edit %s" % (name, kind.split()[-1]),
                    "save to first picture, ms", m, "ms", 300, 300 / m if m else 0)
                print("preview: %s: draft after an edit %s: median %.0f ms of %s" %
                      (name, kind, m, ", ".join("%.0f" % x for x in draft)), flush=True)
            m = median(first)
            summary.append((name, kind, m))
            print("preview: %s: first picture after an edit %s: median %.0f ms, slowest %.0f "
                  "(target <= 300 ms)" % (name, kind, m, max(first)), flush=True)
    finally:
        s.stop()
over = [x for x in summary if x[2] > 300]
names = " ".join(os.path.splitext(os.path.basename(x))[0] for x in scenes)
print("preview: first picture after a save within 300 ms (median), %s: %d of %d scene x edit "
      "kinds%s" % (names, len(summary) - len(over), len(summary),
                   "" if not over else "; over: " + ", ".join("%s %s %.0f ms" % x for x in over)),
      flush=True)
