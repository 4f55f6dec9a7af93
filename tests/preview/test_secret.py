"""The per-run secret (docs/preview.md "The secret"): every request needs it, so another
site's page open in the same browser gets nothing and costs nothing."""
import os
import urllib.parse

import pytest

from pvserver import Preview

ROUTES = ("/", "/index.html", "/app.js", "/style.css", "/status.json", "/stats.json",
          "/scene.json", "/frame/5.png", "/frame/5.png?mode=height", "/nothing", "/edit")


@pytest.fixture(scope="module")
def pv():
    p = Preview("pond.json")
    yield p
    code, err = p.stop()
    assert code == 0, err


def leaks(body):
    return b"\x89PNG" in body or b"<html" in body or b"frames" in body or b"drops" in body


@pytest.mark.parametrize("path", ROUTES)
def test_no_secret_no_answer(pv, path):
    for method in ("GET", "HEAD", "POST"):
        status, headers, body = pv.request(path, method=method, secret=False)
        assert status == 403, (method, path, status)
        assert not leaks(body) and "set-cookie" not in headers


@pytest.mark.parametrize("bad", ["", "0" * 64, "x", None])
def test_a_wrong_secret_is_refused_in_every_place(pv, bad):
    wrong = bad if bad is not None else pv.token[:-1] + ("0" if pv.token[-1] != "0" else "1")
    for how in ("header", "cookie", "query"):
        path, headers = "/status.json", {}
        if how == "header":
            headers["X-Tidepool-Token"] = wrong
        elif how == "cookie":
            headers["Cookie"] = "tidepool-%d=%s" % (pv.port, wrong)
        else:
            path += "?token=" + urllib.parse.quote(wrong)
        status, _, body = pv.request(path, headers=headers, secret=False)
        assert status == 403 and not leaks(body), (how, wrong)


def test_the_secret_in_each_place_is_accepted(pv):
    assert pv.request("/status.json", secret=False,
                      headers={"X-Tidepool-Token": pv.token})[0] == 200
    assert pv.request("/status.json?token=" + pv.token, secret=False)[0] == 200
    assert pv.request("/status.json", secret=False,
                      headers={"Cookie": "a=1; tidepool-%d=%s" % (pv.port, pv.token)})[0] == 200
    # another server's cookie (cookies are shared by the ports of a host) is not this one's
    status, _, _ = pv.request("/status.json", secret=False,
                              headers={"Cookie": "tidepool-%d=%s" % (pv.port + 1, pv.token)})
    assert status == 403


def test_the_page_sets_a_strict_http_only_cookie(pv):
    status, headers, body = pv.request("/?token=" + pv.token, secret=False)
    assert status == 200 and body.startswith(b"<!doctype html>")
    cookie = [c.strip() for c in headers["set-cookie"].split(";")]
    assert cookie[0] == "tidepool-%d=%s" % (pv.port, pv.token)
    assert {"HttpOnly", "SameSite=Strict", "Path=/"} <= set(cookie[1:])
    assert not any(c.lower().startswith(("domain", "expires", "max-age")) for c in cookie)


def test_each_run_has_its_own_secret(pv):
    other = Preview("pond.json")
    try:
        assert other.token != pv.token and len(other.token) == 64
        assert other.request("/status.json", secret=False,
                             headers={"X-Tidepool-Token": pv.token})[0] == 403
    finally:
        other.stop()


def cpu_seconds(pid):
    f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def test_requests_without_the_secret_cost_no_render(pv):
    """A cross-site <img src=.../frame/N.png> renders nothing: 60 secretless frame requests
    take a small part of the CPU time the same 60 take with the secret (paired, after the
    stats worker has walked the scene, so the server is otherwise idle)."""
    pv.wait(lambda s: s["stats_done"] == s["frames"], timeout=120, what="the stats walk")
    paths = ["/frame/%d.png?mode=caustics" % n for n in range(100, 220, 2)]
    c0 = cpu_seconds(pv.proc.pid)
    assert all(pv.request(p, secret=False)[0] == 403 for p in paths)
    c1 = cpu_seconds(pv.proc.pid)
    assert all(pv.request(p)[0] == 200 for p in paths)
    c2 = cpu_seconds(pv.proc.pid)
    assert c2 - c1 > 0.1, "rendering 60 frames should take measurable CPU"
    assert c1 - c0 < (c2 - c1) / 10, (c1 - c0, c2 - c1)
