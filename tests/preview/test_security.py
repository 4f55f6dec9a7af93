"""The preview server's security and limits (docs/preview.md "Security and limits"):
each rule tried from outside, on a running `tidepool preview`."""
import json
import socket
import subprocess
import time

import pytest

from pvserver import ROOT, TP_BIN, Preview


@pytest.fixture(scope="module")
def pv():
    p = Preview("pond.json")
    yield p
    code, err = p.stop()
    assert code == 0, err


def raw(pv, data, timeout=10):
    """Sends raw bytes on a new connection; returns the whole answer (until close or a
    complete response's first 64 KiB)."""
    s = socket.create_connection((pv.host, pv.port), timeout=timeout)
    try:
        s.sendall(data)
        out = b""
        while True:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                break
            if not chunk:
                break
            out += chunk
            if b"\r\n\r\n" in out and len(out) > 65536:
                break
        return out
    finally:
        s.close()


def status_of(answer):
    return int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/") else None


def test_listens_on_loopback_only(pv):
    # the listening socket of the server's port is bound to 127.0.0.1
    ss = subprocess.run(["ss", "-Hltn", "sport = :%d" % pv.port], capture_output=True,
                        text=True)
    if ss.returncode == 0 and ss.stdout.strip():
        assert all(l.split()[3] == "127.0.0.1:%d" % pv.port for l in ss.stdout.splitlines())
    else:  # no ss: read /proc/net/tcp (state 0A = LISTEN, address in host byte order hex)
        rows = [l.split() for l in open("/proc/net/tcp").read().splitlines()[1:]]
        mine = [r[1] for r in rows if r[3] == "0A" and int(r[1].split(":")[1], 16) == pv.port]
        assert mine == ["0100007F:%04X" % pv.port]


@pytest.mark.parametrize("host", ["localhost:{port}", "127.0.0.1:{port}", "LOCALHOST:{port}"])
def test_loopback_host_is_served(pv, host):
    status, _, _ = pv.request("/status.json", headers={"Host": host.format(port=pv.port)})
    assert status == 200


@pytest.mark.parametrize("host", [
    "evil.example:{port}",        # DNS rebinding: a name that resolves to 127.0.0.1
    "evil.example",
    "localhost",                  # no port
    "127.0.0.1:{other}",          # another port
    "localhost.evil.example:{port}",
    "127.0.0.1.nip.io:{port}",
    "192.168.1.10:{port}",        # not the loopback (not --listen)
    "localhost:{port}x",
    "",
])
def test_other_hosts_are_refused(pv, host):
    h = host.format(port=pv.port, other=pv.port + 1)
    for path in ("/", "/status.json", "/frame/0.png"):
        status, _, body = pv.request(path, headers={"Host": h})
        assert status in (400, 421), (h, path, status)
        assert b"<html" not in body and b"\x89PNG" not in body


def test_no_host_header_is_refused(pv):
    assert status_of(raw(pv, b"GET /status.json HTTP/1.0\r\n\r\n")) in (400, 421)
    assert status_of(raw(pv, b"GET /status.json HTTP/1.1\r\nConnection: close\r\n\r\n")) == 400


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE"])
def test_only_get_and_head(pv, method):
    for path in ("/", "/status.json", "/frame/0.png", "/nothing"):
        status, headers, _ = pv.request(path, method=method)
        assert status == 405, (method, path)
        assert headers["allow"] == "GET, HEAD"


@pytest.mark.parametrize("path", [
    "/../../../etc/passwd", "/..%2f..%2fetc%2fpasswd", "/%2e%2e/%2e%2e/etc/passwd",
    "/etc/passwd", "//etc/passwd", "/frame/../status.json", "/frame/..%2f..%2fMakefile",
    "/scenes/pond.json", "/Makefile", "/src/preview/page/app.js", "/page/index.html",
    "/.git/config", "/static/", "/index.html/..", "/app.js/", "/frame/", "/frame/1",
    "/frame/1.png/..", "/proc/self/environ",
])
def test_no_path_reaches_the_file_system(pv, path):
    answer = raw(pv, ("GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-Tidepool-Token: %s\r\n"
                      "Connection: close\r\n\r\n" % (path, pv.port, pv.token)).encode())
    assert status_of(answer) in (404, 400), (path, answer[:200])
    assert b"root:" not in answer and b"[core]" not in answer and b"tidepool-scene" not in answer


def test_only_the_page_and_the_api_are_served(pv):
    for path, kind in (("/", "text/html"), ("/index.html", "text/html"),
                       ("/app.js", "text/javascript"), ("/style.css", "text/css"),
                       ("/overlays.js", "text/javascript"), ("/plot.js", "text/javascript"),
                       ("/status.json", "application/json"), ("/frame/0.png", "image/png")):
        status, headers, _ = pv.request(path)
        assert status == 200 and headers["content-type"].startswith(kind), path
        assert "default-src 'none'" in headers["content-security-policy"]
        assert headers["x-content-type-options"] == "nosniff"


def test_a_request_body_is_refused(pv):
    answer = raw(pv, b"GET /status.json HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Length: 5\r\n"
                     b"X-Tidepool-Token: %s\r\nConnection: close\r\n\r\nhello"
                 % (pv.port, pv.token.encode()))
    assert status_of(answer) == 413


def test_oversized_request_headers_are_refused(pv):
    big = b"X-Junk: " + b"a" * 40000 + b"\r\n"
    answer = raw(pv, b"GET /status.json HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n%sConnection: close\r\n\r\n"
                 % (pv.port, big))
    assert status_of(answer) in (413, 431) or answer == b""
    assert pv.request("/status.json")[0] == 200


def test_100_idle_connections_and_the_page_still_answers(pv):
    idle = []
    try:
        for _ in range(100):
            idle.append(socket.create_connection((pv.host, pv.port), timeout=5))
        # half of them with a request begun and never finished (slowloris)
        for s in idle[::2]:
            s.sendall(b"GET /status.json HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-Slow: " % pv.port)
        time.sleep(0.5)
        t0 = time.monotonic()
        for path in ("/", "/app.js", "/status.json", "/frame/7.png"):
            status, _, body = pv.request(path, timeout=5)
            assert status == 200 and body
        assert time.monotonic() - t0 < 5
        assert json.loads(pv.get("/status.json"))["loaded"] is True
    finally:
        for s in idle:
            s.close()


def test_listen_elsewhere_checks_the_host():
    p = Preview("pond.json", args=["--listen", "127.0.0.2"])
    try:
        assert p.url.startswith("http://127.0.0.2:")
        assert p.request("/status.json")[0] == 200  # Host 127.0.0.2:PORT
        assert p.request("/status.json", headers={"Host": "evil.example:%d" % p.port})[0] == 421
    finally:
        code, err = p.stop()
    assert code == 0
    assert "warning" not in err  # 127.0.0.0/8 is loopback: test_limits.py


@pytest.mark.parametrize("addr", ["example.com", "localhost", "127.0.0.1:80", "300.1.1.1", ""])
def test_listen_needs_a_numeric_address(addr):
    r = subprocess.run([TP_BIN, "preview", "scenes/pond.json", "--port", "0", "--listen", addr],
                       capture_output=True, text=True, timeout=30, cwd=ROOT)
    assert r.returncode == 2 and "numeric" in r.stderr and r.stdout == ""
