"""`tidepool preview` as a command: options, usage errors, the URL line, stopping."""
import os
import signal
import socket
import subprocess
import time

import pytest

from pvserver import ROOT, TP_BIN, Preview


def run(*args, timeout=30, **kw):
    return subprocess.run([TP_BIN, "preview", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, **kw)


def test_help_lists_the_options():
    r = run("--help")
    assert r.returncode == 0
    for opt in ("--port", "--size", "--scale", "--set", "--open", "--listen", "--threads"):
        assert opt in r.stdout


@pytest.mark.parametrize("args,what", [
    ([], "no scene file"),
    (["scenes/pond.json", "--port", "70000"], "--port"),
    (["scenes/pond.json", "--port", "x"], "--port"),
    (["scenes/pond.json", "--size", "640"], "--size"),
    (["scenes/pond.json", "--scale", "-1"], "--scale"),
    (["scenes/pond.json", "--size", "320x180", "--scale", "0.5"], "--size and --scale"),
    (["scenes/pond.json", "--set", "fps"], "--set"),
    (["scenes/pond.json", "--bogus"], "unknown option"),
    (["scenes/pond.json", "scenes/rain.json"], "one scene"),
])
def test_usage_errors_exit_2(args, what):
    r = run(*args)
    assert r.returncode == 2, r.stderr
    assert what in r.stderr and r.stdout == ""


def test_a_missing_scene_exits_3():
    r = run("scenes/nope.json", "--port", "0")
    assert r.returncode == 3 and "scenes/nope.json" in r.stderr and r.stdout == ""


def test_the_first_stdout_line_is_the_url_and_sigint_stops_cleanly():
    p = Preview("pond.json")
    assert p.url == "http://127.0.0.1:%d/?token=%s" % (p.port, p.token) and p.port > 0
    assert len(p.token) == 64 and int(p.token, 16) >= 0
    assert p.request("/")[0] == 200
    p.proc.send_signal(signal.SIGINT)
    code, err = p.stop()
    assert code == 0 and "stopped" in err
    with pytest.raises(OSError):  # the port is closed
        socket.create_connection(("127.0.0.1", p.port), timeout=2).close()


def test_a_port_in_use_exits_4_and_says_so():
    p = Preview("pond.json")
    try:
        r = run("scenes/pond.json", "--port", str(p.port))
        assert r.returncode == 4
        assert "port %d" % p.port in r.stderr and "--port 0" in r.stderr
    finally:
        p.stop()


def test_open_without_xdg_open_says_so():
    env = dict(os.environ, PATH="/nonexistent")
    p = subprocess.Popen([TP_BIN, "preview", "scenes/pond.json", "--port", "0", "--open"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                         cwd=ROOT)
    url = p.stdout.readline().strip()
    time.sleep(0.5)
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=20)
    assert url.startswith("http://127.0.0.1:") and p.returncode == 0
    assert "xdg-open not found" in err and url in err


def test_open_runs_xdg_open_with_the_url(tmp_path):
    log = tmp_path / "opened"
    fake = tmp_path / "xdg-open"
    fake.write_text("#!/bin/sh\necho \"$1\" > %s\n" % log)
    fake.chmod(0o755)
    env = dict(os.environ, PATH="%s:/usr/bin:/bin" % tmp_path)
    p = subprocess.Popen([TP_BIN, "preview", "scenes/pond.json", "--port", "0", "--open"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                         cwd=ROOT)
    url = p.stdout.readline().strip()
    for _ in range(100):
        if log.exists() and log.read_text().strip():
            break
        time.sleep(0.05)
    p.send_signal(signal.SIGTERM)
    p.communicate(timeout=20)
    assert log.read_text().strip() == url
