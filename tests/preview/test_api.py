"""The preview's HTTP API (docs/preview.md) against a running `tidepool preview`."""
import io
import json
import os
import subprocess
import tempfile
import time

import pytest
from PIL import Image

from pvserver import TP_BIN, Preview, save_atomic, save_in_place, scene_path


@pytest.fixture
def pv():
    p = Preview("pond.json")
    yield p
    code, err = p.stop()
    assert code == 0, err


def png(body):
    im = Image.open(io.BytesIO(body))
    im.load()
    return im


def test_status_reports_the_scene(pv):
    s = pv.status()
    assert s["scene"] == pv.scene
    assert s["generation"] >= 1 and s["scene_generation"] == s["generation"]
    assert s["loaded"] is True
    assert s["solver"] == "ripple"
    assert (s["frames"], s["fps"]) == (240, 30)
    assert (s["width"], s["height"]) == (640, 360)
    assert (s["ref_width"], s["ref_height"]) == (640, 360)
    assert s["modes"] == ["color", "height", "normal", "caustics", "displacement"]
    assert s["error"] is None


def test_frame_is_a_png_at_the_preview_size_in_every_mode(pv):
    status, headers, body = pv.request("/frame/12.png")
    assert status == 200 and headers["content-type"] == "image/png"
    assert headers["cache-control"] == "no-store"
    assert int(headers["x-tidepool-generation"]) == pv.status()["generation"]
    im = png(body)
    assert im.size == (640, 360) and im.mode == "RGB"
    assert png(pv.get("/frame/12.png?mode=height")).mode.startswith("I")  # 16-bit grey
    assert png(pv.get("/frame/12.png?mode=normal")).mode == "RGB"
    assert png(pv.get("/frame/12.png?mode=caustics")).size == (640, 360)


def test_frame_errors_are_status_codes(pv):
    assert pv.request("/frame/240.png")[0] == 404          # one past the end
    assert pv.request("/frame/-1.png")[0] == 404
    assert pv.request("/frame/1x.png")[0] == 404
    assert pv.request("/frame/9999999999.png")[0] == 404  # no overflow
    assert pv.request("/frame/3.png?mode=particles")[0] == 400  # not for a height field
    assert pv.request("/frame/3.png?mode=bogus")[0] == 400
    assert pv.status()["error"] is None  # a bad request is not the scene's error


def test_stretch_maps_a_grey_frame_from_black_to_white(pv):
    plain = png(pv.get("/frame/60.png?mode=height"))
    got = png(pv.get("/frame/60.png?mode=height&stretch=1"))
    assert got.mode == "L" and got.size == plain.size
    lo, hi = plain.getextrema()
    assert hi - lo > 100  # a 16-bit map whose waves span a few 8-bit levels
    want = bytes((255 * (v - lo) + (hi - lo) // 2) // (hi - lo) for v in plain.getdata())
    assert got.tobytes() == want
    assert png(pv.get("/frame/60.png?mode=height&stretch=0")).tobytes() == plain.tobytes()
    assert pv.request("/frame/60.png?stretch=1")[0] == 400  # colour
    assert pv.request("/frame/60.png?mode=normal&stretch=1")[0] == 400
    assert pv.request("/frame/60.png?mode=height&stretch=yes")[0] == 400
    assert pv.status()["error"] is None


def test_head_answers_without_a_body(pv):
    status, headers, body = pv.request("/status.json", method="HEAD")
    assert status == 200 and body == b"" and headers["content-type"] == "application/json"


@pytest.mark.parametrize("size", ["320x180", "200x113"])
def test_frame_has_the_pixels_of_tidepool_render(size):
    """GET /frame/N.png at --size WxH against `tidepool render --size WxH --range N-N`."""
    p = Preview("boxes.json", args=["--size", size])
    try:
        w, h = map(int, size.split("x"))
        with tempfile.TemporaryDirectory() as out:
            for n in (0, 37, 121):
                subprocess.run([TP_BIN, "render", scene_path("boxes.json"), "-q", "-y", "--size",
                                size, "--range", "%d-%d" % (n, n), "-o",
                                os.path.join(out, "f%04d.png")], check=True)
                ref = Image.open(os.path.join(out, "f%04d.png" % n)).convert("RGB")
                got = png(p.get("/frame/%d.png" % n)).convert("RGB")
                assert got.size == (w, h) == ref.size
                assert got.tobytes() == ref.tobytes(), "frame %d differs" % n
            # and in another mode, seeking backwards
            subprocess.run([TP_BIN, "render", scene_path("boxes.json"), "-q", "-y", "--size", size,
                            "--range", "5-5", "-o", "height=" + os.path.join(out, "h%04d.png")],
                           check=True)
            ref = Image.open(os.path.join(out, "h0005.png"))
            got = png(p.get("/frame/5.png?mode=height"))
            assert got.tobytes() == ref.tobytes()
    finally:
        p.stop()


def test_default_size_fits_the_scene_into_640x360():
    text = open(scene_path("pond.json")).read().replace("[640, 360]", "[1280, 1280]", 1)
    scene = json.loads(text)
    for d in scene["drops"]:
        d["at"] = [d["at"][0] * 2, d["at"][1] * 2]
    p = Preview("square.json", text=json.dumps(scene))
    try:
        s = p.status()
        assert s["error"] is None, s["error"]
        assert (s["width"], s["height"], s["ref_width"]) == (360, 360, 1280)
        assert png(p.get("/frame/0.png")).size == (360, 360)
        # the scene's "size" changes on a save: the fit follows
        scene["size"] = [1280, 720]
        save_atomic(p.scene, json.dumps(scene))
        s = p.wait(lambda s: s["generation"] > 1 and s["error"] is None, what="the reload")
        assert (s["width"], s["height"]) == (640, 360)
    finally:
        p.stop()


def test_set_and_scale_options_apply():
    p = Preview("pond.json", args=["--scale", "25%", "--set", "fps=15", "--set", "duration=2"])
    try:
        s = p.status()
        assert (s["width"], s["height"], s["fps"], s["frames"]) == (160, 90, 15, 30)
        assert json.loads(p.get("/scene.json"))["fps"] == 15  # the text after --set
    finally:
        p.stop()


def test_scene_json_is_the_scene(pv):
    assert json.loads(pv.get("/scene.json")) == json.load(open(pv.scene))


def test_stats_cover_every_frame(pv):
    s = None
    for _ in range(300):
        s = json.loads(pv.get("/stats.json"))
        if s["done"] == s["frames"]:
            break
        time.sleep(0.05)
    assert s["done"] == s["frames"] == 240
    assert s["fields"] == ["min", "max", "sum", "energy"]
    assert len(s["t"]) == 240 and abs(s["t"][30] - 1.0) < 1e-9
    assert all(len(v) == 240 for v in s["values"])
    # the same numbers as `render --stats` (a JSON line per frame), to the 9 digits it prints
    with tempfile.TemporaryDirectory() as out:
        path = os.path.join(out, "s.jsonl")
        subprocess.run([TP_BIN, "render", pv.scene, "-q", "-y", "--frames", "120", "-o", "null",
                        "--stats", path], check=True)
        rows = [json.loads(l) for l in open(path) if l.strip()]
    assert len(rows) == 120
    for i in (0, 45, 119):
        for k, name in enumerate(s["fields"]):
            want = rows[i][name]
            assert abs(want - s["values"][k][i]) <= 1e-8 * max(1, abs(want)), (i, name)


def test_reload_on_rename_and_in_place_keeps_growing_the_generation(pv):
    g = pv.status()["generation"]
    before = pv.get("/frame/100.png")
    scene = json.loads(pv.text())
    scene["drops"][0]["at"] = [100, 100]
    t0 = time.monotonic()
    save_atomic(pv.scene, json.dumps(scene, indent=2))
    pv.wait(lambda s: s["generation"] > g, timeout=3, what="the reload after a rename")
    latency = time.monotonic() - t0
    print("reload latency %.0f ms" % (latency * 1000))
    assert latency < 3.0  # the 300 ms target is a bench row (make bench), not a test
    after = pv.get("/frame/100.png")
    assert after != before
    g = pv.status()["generation"]
    scene["drops"][0]["radius"] = 30
    save_in_place(pv.scene, json.dumps(scene, indent=2))
    pv.wait(lambda s: s["generation"] > g, timeout=3, what="the reload after an in-place save")
    assert pv.get("/frame/100.png") != after


def test_a_broken_save_is_an_error_with_its_place_and_the_last_good_scene_stays(pv):
    good = pv.text()
    frame = pv.get("/frame/50.png")
    g = pv.status()["generation"]
    bad = good.replace('"fps": 30', '"fps": -30', 1)
    line = bad[:bad.index('"fps": -30')].count("\n") + 1
    save_in_place(pv.scene, bad)
    s = pv.wait(lambda s: s["generation"] > g, what="the failed reload")
    err = s["error"]
    assert err["kind"] == "load" and err["file"] == pv.scene
    assert err["line"] == line and err["col"] > 0
    assert err["source_line"].strip().startswith('"fps": -30')
    # the same message `tidepool validate` prints
    v = subprocess.run([TP_BIN, "validate", pv.scene], capture_output=True, text=True)
    assert v.returncode == 3
    assert v.stderr.strip() == "tidepool: " + err["text"]
    assert err["text"] == "%s:%d:%d: %s" % (pv.scene, line, err["col"], err["message"])
    assert pv.get("/frame/50.png") == frame  # still the last good scene
    assert s["frames"] == 240
    assert s["scene_generation"] == g  # the frames' generation did not move
    assert pv.request("/frame/50.png")[1]["x-tidepool-generation"] == str(g)
    assert json.loads(pv.get("/stats.json"))["generation"] == g
    save_in_place(pv.scene, good)
    s = pv.wait(lambda s: s["error"] is None, what="the good save")
    assert s["generation"] > g + 1


def test_background_image_is_watched(tmp_path):
    """The image in a directory of its own, named with an escaped slash (JSON allows it),
    replaced as editors save (a temporary file renamed over it)."""
    img = Image.new("RGB", (64, 36), (200, 40, 40))
    p = Preview("pond.json")
    try:
        os.mkdir(os.path.join(p.dir, "img"))
        img.save(os.path.join(p.dir, "img", "bg.png"))
        scene = json.loads(p.text())
        scene["background"] = {"image": "img/bg.png"}
        g = p.status()["generation"]
        save_atomic(p.scene, json.dumps(scene).replace("img/bg.png", "img\\/bg.png"))
        p.wait(lambda s: s["generation"] > g and s["error"] is None, what="the image scene")
        red = png(p.get("/frame/0.png")).convert("RGB").getpixel((5, 5))
        g = p.status()["generation"]
        tmp = os.path.join(p.dir, "img", ".bg.png.tmp")
        Image.new("RGB", (64, 36), (40, 40, 200)).save(tmp, format="PNG")
        os.rename(tmp, os.path.join(p.dir, "img", "bg.png"))
        p.wait(lambda s: s["generation"] > g, what="the reload after the image changed")
        blue = png(p.get("/frame/0.png")).convert("RGB").getpixel((5, 5))
        assert red[0] > red[2] and blue[2] > blue[0], (red, blue)
    finally:
        p.stop()


def test_a_scene_broken_from_the_start_is_served_with_its_error():
    p = Preview("broken.json", text='{\n  "format": "tidepool-scene/1",\n  "fps": 30,\n}\n')
    try:
        s = p.status()
        assert s["loaded"] is False and s["error"]["line"] == 3
        assert p.request("/frame/0.png")[0] == 503
        assert p.get("/").startswith(b"<!doctype html>")
        save_in_place(p.scene, open(scene_path("pond.json")).read())
        s = p.wait(lambda s: s["loaded"], what="the fixed scene")
        assert s["error"] is None and png(p.get("/frame/3.png")).size == (640, 360)
    finally:
        p.stop()


def test_a_solver_failure_while_running_is_shown_and_the_server_stays():
    """A scene that loads but blows up at frame 3 (sph with a substep far too long for its
    viscosity): the frame request fails with the solver's message, /status.json carries it
    as a runtime error, the server keeps answering, and the next good save clears it."""
    scene = json.load(open(scene_path("sph_box.json")))
    good = json.dumps(scene, indent=2)
    scene["params"] = {"viscosity": 1000, "max_substeps": 1}
    p = Preview("sph_box.json", args=("--size", "320x180"), text=json.dumps(scene, indent=2))
    try:
        status, _, body = p.request("/frame/10.png")
        assert status in (500, 503), (status, body[:200])
        assert b"blew up" in body
        s = p.wait(lambda s: s["error"] is not None, what="the runtime error")
        err = s["error"]
        assert err["kind"] == "runtime" and 0 <= err["frame"] <= 10, err
        assert "the sph solver blew up" in err["message"], err
        assert "params.max_substeps" in err["message"], err  # what to change
        assert p.proc.poll() is None  # still serving
        assert p.get("/").startswith(b"<!doctype html>")
        assert p.status()["loaded"] is True
        g = s["generation"]
        save_in_place(p.scene, good)
        s = p.wait(lambda s: s["generation"] > g and s["error"] is None, what="the good save")
        assert png(p.get("/frame/10.png")).size == (320, 180)
    finally:
        code, err = p.stop()
        assert code == 0, err


@pytest.mark.parametrize("scene,size,sets", [
    ("pond.json", "160x90", []),
    # sph: the particles spaced 2 draft px apart (8 scene units at a quarter of 640x360),
    # so the draft simulates about a quarter of them (src/preview/draft.h)
    ("sph_box.json", "160x90", ["--set", "params.spacing=8"]),
    # a stream counts particles: a quarter as many, each four times the area
    ("sph_nozzle.json", "160x90", ["--set", "params.spacing=8", "--set", "emitters.0.rate=130",
                                   "--set", "emitters.0.cap=900"]),
])
def test_draft_is_the_scene_smaller_and_sph_coarser(scene, size, sets):
    """GET /frame/N.png?draft=1 against `tidepool render` at the draft's size (and, for
    sph, the draft's wider particle spacing), pixel for pixel."""
    p = Preview(scene)
    try:
        n = 40
        got = png(p.get("/frame/%d.png?draft=1" % n)).convert("RGB")
        with tempfile.TemporaryDirectory() as out:
            subprocess.run([TP_BIN, "render", scene_path(scene), "-q", "-y", "--size", size,
                            "--range", "%d-%d" % (n, n), "-o", os.path.join(out, "f%04d.png")]
                           + sets, check=True)
            ref = Image.open(os.path.join(out, "f%04d.png" % n)).convert("RGB")
        assert got.size == ref.size == tuple(map(int, size.split("x")))
        assert got.tobytes() == ref.tobytes()
    finally:
        p.stop()
