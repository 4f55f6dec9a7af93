"""Starts `tidepool preview` for the tests (tests/preview, tests/browser) and talks to it.

A Preview runs `TP_BIN preview SCENE --port 0 ...` on a copy of the scene in a temporary
directory (the tests save over it), reads the URL from the first line of stdout and stops
the server with SIGTERM, checking that it exits 0."""
import http.client
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TP_BIN = os.path.abspath(os.environ.get("TP_BIN", os.path.join(ROOT, "build", "tidepool")))


def scene_path(name):
    return os.path.join(ROOT, "scenes", name)


def save_atomic(path, text):
    """Saves as editors do: a temporary file in the same directory, renamed over."""
    tmp = os.path.join(os.path.dirname(path), "." + os.path.basename(path) + ".swp")
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, path)


def save_in_place(path, text):
    with open(path, "w") as f:
        f.write(text)


class Preview:
    def __init__(self, scene="pond.json", args=(), text=None, port="0", copy=True):
        """copy=False previews scenes/SCENE itself, from the repository's root (for tests
        that do not save over it)."""
        self.dir = tempfile.mkdtemp(prefix="tp-preview-")
        self.scene = os.path.join(self.dir, os.path.basename(scene))
        if not copy:
            self.scene = os.path.join("scenes", scene)
        elif text is None:
            shutil.copy(scene_path(scene), self.scene)
        else:
            save_in_place(self.scene, text)
        self.cmd = [TP_BIN, "preview", self.scene, "--port", port, *args]
        self.proc = subprocess.Popen(self.cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, cwd=ROOT)
        self.url = self.proc.stdout.readline().strip()
        if not self.url.startswith("http://"):
            err = self.proc.stderr.read() if self.proc.poll() is not None else ""
            self.proc.kill()
            raise RuntimeError("preview did not print its URL: %r %s" % (self.url, err))
        u = urllib.parse.urlparse(self.url)
        self.host, self.port = u.hostname, u.port
        # the run's secret, which every request must carry (docs/preview.md)
        self.token = urllib.parse.parse_qs(u.query)["token"][0]
        self.origin = "http://%s:%d" % (self.host, self.port)

    def request(self, path, method="GET", headers=None, timeout=30, secret=True, body=None):
        """(status, headers dict, body bytes) of one request on a fresh connection; with
        the secret in an X-Tidepool-Token header unless secret=False."""
        h = dict(headers or {})
        if secret:
            h.setdefault("X-Tidepool-Token", self.token)
        c = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        try:
            c.request(method, path, headers=h, body=body)
            r = c.getresponse()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
        finally:
            c.close()

    def get(self, path):
        status, _, body = self.request(path)
        assert status == 200, (path, status, body[:300])
        return body

    def status(self):
        return json.loads(self.get("/status.json"))

    def wait(self, pred, timeout=10.0, what="condition"):
        """Polls /status.json until pred(status) is true; returns that status."""
        t0 = time.monotonic()
        while True:
            s = self.status()
            if pred(s):
                return s
            if time.monotonic() - t0 > timeout:
                raise AssertionError("timed out waiting for %s; last status %r" % (what, s))
            time.sleep(0.01)

    def text(self):
        with open(self.scene) as f:
            return f.read()

    def scene_version(self):
        """The X-Tidepool-Version of /scene.json: what an edit must be made over."""
        status, headers, _ = self.request("/scene.json")
        assert status == 200
        return headers["x-tidepool-version"]

    def edit(self, ops, version=None, headers=None, secret=True):
        """POST /edit as the page does; (status, answer JSON)."""
        h = {"Origin": self.origin, "Content-Type": "application/json",
             "Sec-Fetch-Site": "same-origin"}
        h.update(headers or {})
        body = json.dumps({"version": version or self.scene_version(), "ops": ops})
        status, _, out = self.request("/edit", method="POST", headers=h, body=body,
                                      secret=secret)
        return status, json.loads(out) if out.startswith(b"{") else out

    def stop(self):
        """SIGTERM; returns (exit status, stderr)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            _, err = self.proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
            shutil.rmtree(self.dir, ignore_errors=True)
            raise AssertionError("preview did not stop within 20 s of SIGTERM")
        shutil.rmtree(self.dir, ignore_errors=True)
        # under ASan/UBSan (TP_BIN=build/asan/tidepool) any report fails the test
        for bad in ("AddressSanitizer", "LeakSanitizer", "runtime error:"):
            assert bad not in err, err
        return self.proc.returncode, err
