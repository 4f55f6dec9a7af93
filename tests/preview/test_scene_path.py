"""The preview never blocks on the scene path (docs/preview.md "Security and limits"): the
scene replaced by a FIFO, a directory or a symbolic link, or deleted, is said on the page
and recovers when the file is back; nothing of a file a link points to reaches an answer;
SIGTERM and SIGINT stop the server within a second whatever it is doing."""
import os
import signal
import threading
import time

import pytest

from pvserver import Preview, save_atomic

MARK = "tp-environ-marker-7c1f0e"


@pytest.fixture
def pv(monkeypatch):
    monkeypatch.setenv("TP_TEST_MARKER", MARK)  # reaches /proc/self/environ of the server
    p = Preview("pond.json")
    p.good = p.text()
    p.wait(lambda s: s["loaded"] and not s["error"], what="the first load")
    yield p
    code, err = p.stop()
    assert code == 0, err


def answers(pv):
    """Every JSON answer and the page, as bytes, each within 2 s (nothing waits on a lock)."""
    out = b""
    for path in ("/status.json", "/scene.json", "/stats.json", "/"):
        t0 = time.monotonic()
        status, _, body = pv.request(path, timeout=5)
        assert time.monotonic() - t0 < 2, path
        out += body
    return out


def error_text(pv, pred, what):
    s = pv.wait(lambda s: s["error"] is not None and pred(s["error"]["text"]), what=what)
    assert s["loaded"]  # the last good scene keeps playing
    assert pv.request("/frame/0.png", timeout=5)[0] == 200
    return s


def recovers(pv, before):
    save_atomic(pv.scene, pv.good)
    s = pv.wait(lambda s: s["error"] is None and s["generation"] > before, what="recovery")
    assert s["loaded"]


def test_a_fifo_renamed_over_the_scene(pv):
    fifo = os.path.join(pv.dir, ".f")
    os.mkfifo(fifo)
    os.rename(fifo, pv.scene)
    s = error_text(pv, lambda t: "is a FIFO" in t, "a FIFO")
    assert "pond.json" in s["error"]["text"]
    answers(pv)
    recovers(pv, s["generation"])


def test_a_fifo_made_in_place(pv):
    os.remove(pv.scene)
    os.mkfifo(pv.scene)
    s = error_text(pv, lambda t: "is a FIFO" in t, "a FIFO")
    answers(pv)
    os.remove(pv.scene)
    recovers(pv, s["generation"])


def test_a_fifo_with_a_writer_that_never_writes(pv):
    os.remove(pv.scene)
    os.mkfifo(pv.scene)
    fd = os.open(pv.scene, os.O_RDWR)  # holds the FIFO open: a blocking read would hang
    try:
        s = error_text(pv, lambda t: "is a FIFO" in t, "a FIFO")
        answers(pv)
    finally:
        os.close(fd)
    os.remove(pv.scene)
    recovers(pv, s["generation"])


def test_deletion_is_said_and_the_scene_back_recovers(pv):
    os.remove(pv.scene)
    s = error_text(pv, lambda t: "pond.json: is gone" in t, "the scene gone")
    recovers(pv, s["generation"])


def test_a_directory_in_place(pv):
    os.remove(pv.scene)
    os.mkdir(pv.scene)
    s = error_text(pv, lambda t: "is a directory" in t, "a directory")
    os.rmdir(pv.scene)
    recovers(pv, s["generation"])


@pytest.mark.parametrize("target", ["/etc/passwd", "/proc/self/environ"])
def test_a_link_renamed_over_the_scene_is_not_followed(pv, target):
    secret = open(target, "rb").read().split(b"\n")[0][:20] if target == "/etc/passwd" \
        else MARK.encode()
    assert secret
    link = os.path.join(pv.dir, ".l")
    os.symlink(target, link)
    os.rename(link, pv.scene)
    s = error_text(pv, lambda t: "symbolic link" in t, "a link refused")
    assert s["error"]["source_line"] is None
    body = answers(pv)
    assert secret not in body
    assert b"root:" not in body and MARK.encode() not in body
    recovers(pv, s["generation"])


def test_the_quoted_line_is_the_parsed_one(pv):
    bad = pv.good.replace('"fps"', '"fpz"', 1)
    line = next(l for l in bad.split("\n") if '"fpz"' in l)
    save_atomic(pv.scene, bad)
    s = error_text(pv, lambda t: "fpz" in t, "the bad key")
    assert s["error"]["source_line"] == line
    recovers(pv, s["generation"])


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_the_server_within_a_second_while_it_works(sig):
    p = Preview("pond.json", args=("--size", "1920x1080"))  # its last frame takes seconds
    try:
        p.wait(lambda s: s["loaded"], what="the first load")
        frames = p.status()["frames"]
        # a far seek simulates the whole scene; a FIFO in place makes every reload fail
        def far():
            try:
                p.request("/frame/%d.png?mode=caustics" % (frames - 1), timeout=30)
            except OSError:
                pass  # the server stopped under it
        t = threading.Thread(target=far)
        t.daemon = True
        t.start()
        os.remove(p.scene)
        os.mkfifo(p.scene)
        time.sleep(0.3)
        assert t.is_alive()  # the frame is still being made
        t0 = time.monotonic()
        p.proc.send_signal(sig)
        p.proc.wait(timeout=10)
        took = time.monotonic() - t0
        assert p.proc.returncode == 0
        assert took < 1.0, took
    finally:
        if p.proc.poll() is None:
            p.proc.kill()
        p.stop()
