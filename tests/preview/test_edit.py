"""POST /edit (docs/preview.md "Editing"): the page writes the scene file, only the bytes
of the values that change, atomically, only over the version it loaded, and only when
the request comes from the page itself."""
import json
import os
import stat

import pytest

from pvserver import Preview, save_atomic

POND = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scenes",
                         "pond.json")).read()


@pytest.fixture
def pv():
    p = Preview("pond.json")
    os.chmod(p.scene, 0o640)  # a change the watcher sees too: its reload comes first
    p.wait(lambda s: s["generation"] >= 2, what="the chmod's reload")
    yield p
    code, err = p.stop()
    assert code == 0, err


def generation(p):
    return p.status()["generation"]


def test_an_edit_rewrites_only_the_value_and_reloads(pv):
    g = generation(pv)
    status, ans = pv.edit([{"op": "replace", "path": "/drops/1/at", "value": [185, 110]}])
    assert status == 200, ans
    assert pv.text() == POND.replace('"at": [180, 110]', '"at": [185, 110]')
    assert stat.S_IMODE(os.stat(pv.scene).st_mode) == 0o640  # the mode kept
    assert not [f for f in os.listdir(pv.dir) if f != "pond.json"]  # no temporary left
    s = pv.wait(lambda s: s["scene_generation"] > g, what="the reload")
    assert s["error"] is None
    assert pv.scene_version() == ans["version"]  # the page's next edit goes over this one
    assert json.loads(pv.get("/scene.json"))["drops"][1]["at"] == [185, 110]


def test_undo_and_redo_give_back_every_byte(pv):
    v0 = pv.scene_version()
    ops = [{"op": "replace", "path": "/drops/0/t", "value": 0.25},
           {"op": "add", "path": "/drops/-", "value": {"t": 7.5, "at": [10, 20], "radius": 9,
                                                      "strength": 8}},
           {"op": "remove", "path": "/drops/2"}]
    status, ans = pv.edit(ops, version=v0)
    assert status == 200, ans
    edited = pv.text()
    assert '{ "t": 7.5, "at": [10, 20], "radius": 9, "strength": 8.0 }\n  ]' in edited
    assert '"t": 2.3' not in edited and '"t": 0.25, "at": [320, 180]' in edited
    status, back = pv.edit(ans["undo"], version=ans["version"])
    assert status == 200, back
    assert pv.text() == POND and back["version"] == v0
    status, again = pv.edit(back["undo"], version=v0)  # the undo's undo is the redo
    assert status == 200 and pv.text() == edited
    status, _ = pv.edit(ans["redo"], version=v0)  # over the wrong version: refused
    assert status == 409 and pv.text() == edited


def test_an_edit_over_a_changed_file_is_refused(pv):
    v = pv.scene_version()
    save_atomic(pv.scene, POND.replace('"fps": 30', '"fps": 24'))
    status, ans = pv.edit([{"op": "replace", "path": "/fps", "value": 25}], version=v)
    assert status == 409 and "the file changed on disk" in ans["error"]
    assert '"fps": 24' in pv.text()


@pytest.mark.parametrize("ops, code, words", [
    ([{"op": "replace", "path": "/drops/9/at", "value": [1, 2]}], 422, "no member"),
    ([{"op": "replace", "path": "drops", "value": 1}], 400, "JSON pointer"),
    ([{"op": "move", "path": "/fps"}], 400, "op:"),
    ([{"op": "add", "path": "/fps", "value": 3}], 422, "already there"),
    ([{"op": "remove", "path": ""}], 400, "cannot be added or removed"),
    ([{"op": "splice", "at": 0, "delete": 1, "text": "["}], 422, "invalid JSON"),
    ([{"op": "splice", "at": 100000, "delete": 0, "text": ""}], 400, "outside"),
    ("not a list", 400, "ops"),
])
def test_bad_edits_are_refused_and_change_nothing(pv, ops, code, words):
    status, ans = pv.edit(ops)
    assert status == code and words in ans["error"], ans
    assert pv.text() == POND


def test_numbers_must_be_finite(pv):
    body = '{"version": "%s", "ops": [{"op": "replace", "path": "/fps", "value": 1e999}]}' % (
        pv.scene_version())
    status, _, ans = pv.request("/edit", method="POST", body=body, headers={
        "Origin": pv.origin, "Content-Type": "application/json"})
    assert status == 400 and b"finite" in ans
    assert pv.text() == POND


def test_a_request_never_names_the_file(pv, tmp_path):
    """The file written is the scene named on the command line: a path in the URL, the
    body or a pointer is not a file."""
    other = tmp_path / "other.json"
    other.write_text(POND)
    for path in ("/edit/../../" + str(other), "/edit?file=" + str(other), "//edit"):
        status, _, _ = pv.request(path, method="POST", body="{}", headers={
            "Origin": pv.origin, "Content-Type": "application/json"})
        assert status in (400, 403, 404, 405), path
    g = pv.status()["scene_generation"]
    body = {"version": pv.scene_version(), "file": str(other), "path": str(other),
            "ops": [{"op": "replace", "path": "/seed", "value": 2, "file": str(other)}]}
    status, _, _ = pv.request("/edit", method="POST", body=json.dumps(body), headers={
        "Origin": pv.origin, "Content-Type": "application/json"})
    assert status == 200
    assert other.read_text() == POND and '"seed": 2' in pv.text()
    pv.wait(lambda s: s["scene_generation"] > g, what="the reload")
    status, ans = pv.edit([{"op": "replace", "path": str(other), "value": 1}])
    assert status == 422 and other.read_text() == POND


def test_writes_come_only_from_the_page(pv):
    ops = [{"op": "replace", "path": "/seed", "value": 5}]
    for headers, secret in (
            ({}, False),                                              # no secret
            ({"Origin": "http://evil.example"}, True),                # another origin
            ({"Origin": "http://localhost:%d" % (pv.port + 1)}, True),
            ({"Origin": "null"}, True),
            ({"Sec-Fetch-Site": "cross-site"}, True),
            ({"Sec-Fetch-Site": "same-site"}, True),
    ):
        status, ans = pv.edit(ops, headers=headers, secret=secret)
        assert status == 403, (headers, status, ans)
    # no Origin at all (not a browser's fetch)
    body = json.dumps({"version": pv.scene_version(), "ops": ops})
    status, _, _ = pv.request("/edit", method="POST", body=body,
                              headers={"Content-Type": "application/json"})
    assert status == 403
    # an HTML form's post: another content type, and no secret from another site
    form = "version=%s&ops=x" % pv.scene_version()
    for secret in (False, True):
        status, _, _ = pv.request("/edit", method="POST", body=form, secret=secret, headers={
            "Origin": pv.origin, "Content-Type": "application/x-www-form-urlencoded"})
        assert status == (415 if secret else 403)
    status, _, _ = pv.request("/edit", method="GET")
    assert status == 405
    assert pv.text() == POND


def test_the_body_is_bounded(pv):
    big = json.dumps({"version": pv.scene_version(),
                      "ops": [{"op": "splice", "at": 0, "delete": 0, "text": " " * 300000}]})
    status, _, body = pv.request("/edit", method="POST", body=big, headers={
        "Origin": pv.origin, "Content-Type": "application/json"})
    assert status == 413, body
    status, _, _ = pv.request("/edit", method="POST", headers={
        "Origin": pv.origin, "Content-Type": "application/json",
        "Transfer-Encoding": "chunked"}, body=b"2\r\n{}\r\n0\r\n\r\n")
    assert status == 411
    assert pv.text() == POND


@pytest.mark.parametrize("args, why", [(["--read-only"], "--read-only"), (["--set", "fps=24"], "--set")])
def test_editing_can_be_off(args, why):
    p = Preview("pond.json", args=args)
    try:
        _, headers, _ = p.request("/scene.json")
        assert why in headers["x-tidepool-edit"]
        status, ans = p.edit([{"op": "replace", "path": "/seed", "value": 5}])
        assert status == 403 and why in ans["error"]
        assert p.text() == POND
    finally:
        p.stop()
