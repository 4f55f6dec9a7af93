"""The preview page in headless Chromium against a running `tidepool preview`.

Each test starts its own server on a copy of an example scene (the tests save over it).
The page marks what it shows on <body>: data-frame, data-generation (of /status.json),
data-shown-generation (of the picture on screen), data-error ("LINE:COL" while an error
is shown), data-playing, data-copied."""
import json
import os
import re
import time
import urllib.parse

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

from pvserver import Preview, save_atomic, save_in_place

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def body(d, key):
    return d.execute_script("return document.body.dataset[arguments[0]] || ''", key)


def wait(d, pred, timeout=15, what="condition"):
    return WebDriverWait(d, timeout, poll_frequency=0.05).until(lambda _: pred(), message=what)


def open_page(d, p):
    d.get(p.url)
    wait(d, lambda: body(d, "shownGeneration") != "", what="a first picture")


def canvas_stats(d, cid):
    """[non-transparent pixels, distinct grey levels seen, sum of RGB] of a canvas."""
    return d.execute_script("""
        const c = document.getElementById(arguments[0]);
        const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let opaque = 0, sum = 0; const levels = new Set();
        for (let i = 0; i < px.length; i += 4) {
            if (px[i + 3]) opaque++;
            sum += px[i] + px[i + 1] + px[i + 2];
            levels.add((px[i] + px[i + 1] + px[i + 2]) / 3 | 0);
        }
        return [opaque, levels.size, sum];""", cid)


def picture_hash(d):
    return d.execute_script("""
        const c = document.getElementById('picture');
        const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let h = 2166136261;
        for (let i = 0; i < px.length; i++) h = Math.imul(h ^ px[i], 16777619) >>> 0;
        return h;""")


def pause_at(d, frame):
    """Pauses and scrubs the timeline to frame, as a user dragging it would."""
    d.execute_script("""
        const t = document.getElementById('timeline');
        t.value = arguments[0];
        t.dispatchEvent(new Event('input', {bubbles: true}));""", frame)
    wait(d, lambda: body(d, "frame") == str(frame) and
         d.execute_script("return performance.getEntriesByType('resource')"
                          ".some(e => e.name.includes('/frame/%d.png'))" % frame),
         what="frame %d shown" % frame)
    time.sleep(0.3)  # the request in flight when paused may land after


def readout_frame(d):
    m = re.match(r"frame (\d+) / (\d+)", d.find_element(By.ID, "readout").text)
    assert m, d.find_element(By.ID, "readout").text
    return int(m.group(1))


def severe_logs(d):
    return [e for e in d.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]


def test_page_loads_without_console_errors_or_foreign_requests(browser, preview):
    open_page(browser, preview)
    time.sleep(1.5)  # some frames, status polls and the stats plot
    assert severe_logs(browser) == []
    origin = preview.origin
    names = browser.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name)"
        ".concat([location.href])")
    foreign = [n for n in names if not (n.startswith(origin + "/") or n.startswith("data:")
                                         or n.startswith("blob:"))]
    assert foreign == []
    assert any("/frame/" in n for n in names)
    assert any(n.endswith("/status.json") for n in names)


def test_picture_is_not_blank(browser, preview):
    open_page(browser, preview)
    opaque, levels, _ = canvas_stats(browser, "picture")
    w, h = browser.execute_script(
        "const c = document.getElementById('picture'); return [c.width, c.height]")
    assert (w, h) == (640, 360)
    assert opaque == w * h
    assert levels > 20  # tiles, grout and water, not one flat colour


def test_playing_advances_the_frame_readout(browser, preview):
    open_page(browser, preview)
    assert body(browser, "playing") == "1"
    a = readout_frame(browser)
    time.sleep(1.0)
    b = readout_frame(browser)
    frames = preview.status()["frames"]
    assert (b - a) % frames >= 5, (a, b)  # at least 5 frames a second, even on a busy machine
    browser.find_element(By.ID, "play").click()
    assert body(browser, "playing") == "0"
    time.sleep(0.3)
    c = readout_frame(browser)
    time.sleep(0.7)
    assert readout_frame(browser) == c


def test_scrubbing_seeks_to_the_frame_the_server_renders(browser, preview):
    open_page(browser, preview)
    pause_at(browser, 150)
    assert readout_frame(browser) == 150
    assert "5.000 s" in browser.find_element(By.ID, "readout").text
    same = browser.execute_async_script("""
        const done = arguments[arguments.length - 1];
        fetch('/frame/150.png').then(r => r.blob()).then(createImageBitmap).then(b => {
            const c = document.createElement('canvas');
            c.width = b.width; c.height = b.height;
            const x = c.getContext('2d'); x.drawImage(b, 0, 0);
            const a = x.getImageData(0, 0, c.width, c.height).data;
            const p = document.getElementById('picture');
            const q = p.getContext('2d').getImageData(0, 0, p.width, p.height).data;
            done(a.length === q.length && a.every((v, i) => v === q[i]));
        });""")
    assert same is True
    pause_at(browser, 20)
    assert readout_frame(browser) == 20


def test_saving_the_scene_changes_the_picture_at_the_same_time(browser, preview):
    open_page(browser, preview)
    pause_at(browser, 90)
    before = picture_hash(browser)
    gen = int(body(browser, "shownGeneration"))
    scene = json.loads(preview.text())
    for drop in scene["drops"]:
        drop["at"] = [drop["at"][0] * 0.5, drop["at"][1] * 0.5]
    save_atomic(preview.scene, json.dumps(scene, indent=2))
    wait(browser, lambda: int(body(browser, "shownGeneration") or 0) > gen, what="the new scene")
    time.sleep(0.3)
    assert readout_frame(browser) == 90
    assert picture_hash(browser) != before
    assert severe_logs(browser) == []


def test_a_bad_save_shows_the_error_and_a_good_save_clears_it(browser, preview):
    open_page(browser, preview)
    pause_at(browser, 60)
    good = preview.text()
    lines = good.split("\n")
    # a trailing comma after the last key: line and column known
    idx = max(i for i, l in enumerate(lines) if l.strip().startswith('"'))
    lines[idx] = lines[idx] + ","
    before = picture_hash(browser)
    save_in_place(preview.scene, "\n".join(lines))
    wait(browser, lambda: body(browser, "error") != "", what="the error shown")
    err = preview.status()["error"]
    assert err["line"] == idx + 1 and err["col"] > 0
    box = browser.find_element(By.ID, "error")
    assert box.is_displayed()
    text = box.text
    assert "%s:%d:%d" % (preview.scene, err["line"], err["col"]) in text
    assert lines[idx].strip() in text          # the offending line
    assert "^" in text                         # a caret under its column
    assert "tidepool: " + err["text"] in text  # validate's message
    assert picture_hash(browser) == before     # the last good picture stays
    save_in_place(preview.scene, good)
    wait(browser, lambda: body(browser, "error") == "", what="the error cleared")
    assert not browser.find_element(By.ID, "error").is_displayed()


def test_a_solver_failure_while_running_is_shown_over_the_picture(browser):
    """sph with a substep far too long for its viscosity blows up at frame 3: the page
    says which frame failed and what to change, and the server keeps serving."""
    scene = json.load(open(os.path.join(ROOT, "scenes", "sph_box.json")))
    scene["params"] = {"viscosity": 1000, "max_substeps": 1}
    p = Preview("sph_box.json", args=("--size", "320x180"), text=json.dumps(scene, indent=2))
    try:
        open_page(browser, p)  # frame 0 is fine; playing on (or the stats walk) fails
        wait(browser, lambda: body(browser, "error") == "yes", what="the runtime error shown")
        box = browser.find_element(By.ID, "error")
        assert box.is_displayed()
        assert re.search(r"Frame \d+ failed", box.text), box.text
        assert "the sph solver blew up" in box.text and "params.max_substeps" in box.text
        assert p.proc.poll() is None
        if os.environ.get("TP_SCREENSHOT_DIR"):
            browser.save_screenshot(os.path.join(os.environ["TP_SCREENSHOT_DIR"],
                                                 "preview-runtime-error.png"))
        assert not severe_logs(browser) or all("/frame/" in e["message"]
                                               for e in severe_logs(browser))
    finally:
        p.stop()


def test_a_slow_frame_says_it_is_simulating(browser):
    """A seek far ahead in a slow scene (shallow's coupled box, every frame simulated from
    the start): a badge says it is simulating until the frame arrives."""
    p = Preview("shallow_drag.json")
    try:
        open_page(browser, p)
        browser.find_element(By.ID, "play").click()  # pause
        last = int(browser.find_element(By.ID, "timeline").get_attribute("max"))
        browser.execute_script("""
            const t = document.getElementById('timeline');
            t.value = arguments[0];
            t.dispatchEvent(new Event('input', {bubbles: true}));""", last)
        badge = browser.find_element(By.ID, "busy")
        # (a frame still playing when paused may show it first)
        wait(browser, lambda: body(browser, "busy") == "yes" and ("frame %d" % last) in badge.text,
             timeout=10, what="the badge for frame %d" % last)
        assert badge.is_displayed()
        if os.environ.get("TP_SCREENSHOT_DIR"):
            browser.save_screenshot(os.path.join(os.environ["TP_SCREENSHOT_DIR"],
                                                 "preview-busy.png"))
        wait(browser, lambda: body(browser, "busy") == "", timeout=120, what="the badge gone")
        assert readout_frame(browser) == last
        assert not badge.is_displayed()
        assert not severe_logs(browser)
    finally:
        p.stop()


@pytest.fixture
def boxes_preview():
    p = Preview("boxes.json")
    yield p
    p.stop()


def test_overlays_draw_and_each_toggles(browser, boxes_preview):
    d = browser
    open_page(d, boxes_preview)
    pause_at(d, 45)
    wait(d, lambda: canvas_stats(d, "overlay")[0] > 0, what="overlays drawn")
    all_on = canvas_stats(d, "overlay")
    # only the toggles of what the scene has are offered (boxes.json: drops and boxes)
    shown = [k for k in ("drops", "rain", "boxes", "emitters", "tank")
             if d.find_element(By.ID, "ov-" + k).is_displayed()]
    assert shown == ["drops", "boxes"]
    for k in shown:
        d.find_element(By.ID, "ov-" + k).click()
    assert canvas_stats(d, "overlay")[0] == 0  # all off: nothing drawn
    d.find_element(By.ID, "ov-boxes").click()
    boxes = canvas_stats(d, "overlay")
    assert boxes[0] > 0
    d.find_element(By.ID, "ov-drops").click()
    both = canvas_stats(d, "overlay")
    assert both[0] > boxes[0]  # the drops add pixels of their own
    d.find_element(By.ID, "ov-boxes").click()
    drops = canvas_stats(d, "overlay")
    assert 0 < drops[0] < both[0]
    d.find_element(By.ID, "ov-boxes").click()
    assert canvas_stats(d, "overlay") == all_on


def test_overlay_labels_never_cover_each_other(browser):
    """shallow_drag's box holds still between its first two keyframes and slows down near
    its last four: their "t" labels fall on the same place and used to print over each
    other. Every label drawn now has its own rectangle, and all the keyframes are there."""
    p = Preview("shallow_drag.json")
    try:
        open_page(browser, p)
        browser.find_element(By.ID, "play").click()  # pause
        wait(browser, lambda: canvas_stats(browser, "overlay")[0] > 0, what="overlays drawn")
        labels = browser.execute_script("return Overlays.labels()")
        keys = len(json.load(open(os.path.join(ROOT, "scenes", "shallow_drag.json")))
                   ["boxes"][0]["path"])
        assert len(labels) >= keys + 1  # every keyframe's and the box's
        for i, a in enumerate(labels):
            for b in labels[:i]:
                apart = (a[0] >= b[0] + b[2] or b[0] >= a[0] + a[2] or
                         a[1] >= b[1] + b[3] or b[1] >= a[1] + a[3])
                assert apart, "labels %s and %s overlap" % (a, b)
    finally:
        p.stop()


def test_cursor_readout_and_click_copies_scene_coordinates(browser, preview):
    from selenium.webdriver.common.action_chains import ActionChains
    d = browser
    open_page(d, preview)
    ov = d.find_element(By.ID, "overlay")
    w, h = ov.size["width"], ov.size["height"]
    # selenium 4 offsets are from the element's centre
    ActionChains(d).move_to_element_with_offset(ov, int(w * 0.25) - w // 2,
                                                int(h * 0.75) - h // 2).perform()
    m = re.match(r"x (\d+)\s+y (\d+)", d.find_element(By.ID, "cursor").text)
    assert m and abs(int(m.group(1)) - 160) <= 2 and abs(int(m.group(2)) - 270) <= 2
    ActionChains(d).click().perform()
    wait(d, lambda: body(d, "copied") != "", what="the copy")
    x, y = json.loads(body(d, "copied"))
    assert abs(x - 160) <= 2 and abs(y - 270) <= 2


def test_mode_selector_offers_the_scene_modes_and_switches(browser, preview):
    d = browser
    open_page(d, preview)
    pause_at(d, 30)
    sel = Select(d.find_element(By.ID, "mode"))
    assert [o.text for o in sel.options] == preview.status()["modes"]
    before = picture_hash(d)
    sel.select_by_value("height")
    wait(d, lambda: picture_hash(d) != before, what="the height map")
    assert canvas_stats(d, "picture")[0] == 640 * 360


def test_stretch_shows_a_height_map_from_black_to_white(browser, preview):
    """The height map of a pond is nearly one grey (a few levels at 8 bits); stretched it
    spans black to white. The toggle is off for colour modes."""
    d = browser
    open_page(d, preview)
    pause_at(d, 60)
    box = d.find_element(By.ID, "stretch")
    assert not box.is_enabled()  # colour
    Select(d.find_element(By.ID, "mode")).select_by_value("height")
    wait(d, box.is_enabled, what="stretch offered for the height map")
    wait(d, lambda: d.execute_script("return performance.getEntriesByType('resource')"
                                     ".some(e => e.name.includes('mode=height'))"),
         what="the height map")
    time.sleep(0.3)
    flat = canvas_stats(d, "picture")[1]
    box.click()
    wait(d, lambda: d.execute_script("return performance.getEntriesByType('resource')"
                                     ".some(e => e.name.includes('stretch=1'))"),
         what="the stretched frame asked for")
    wait(d, lambda: canvas_stats(d, "picture")[1] > max(4 * flat, 100),
         what="many more grey levels than %d" % flat)
    box.click()
    wait(d, lambda: canvas_stats(d, "picture")[1] == flat, what="the plain height map again")
    assert severe_logs(d) == []


def test_stats_plot_draws_the_solver_fields(browser, preview):
    d = browser
    open_page(d, preview)
    wait(d, lambda: "energy" in d.find_element(By.ID, "plot-legend").text, what="the legend")
    assert canvas_stats(d, "plot")[0] > 500
    pause_at(d, 10)
    a = canvas_stats(d, "plot")
    pause_at(d, 200)
    assert canvas_stats(d, "plot") != a  # the current-frame marker moved


def test_screenshot(browser):
    """Takes the README's screenshot (TP_PREVIEW_STILL names the file; scripts/stills.sh
    sets docs/stills/preview.png), else build/preview-still.png; checks it is no blank."""
    d = browser
    p = Preview("boxes.json", copy=False)
    size = d.get_window_size()
    try:
        d.set_window_size(1100, 1000)
        screenshot(d, p)
    finally:
        d.set_window_size(size["width"], size["height"])
        p.stop()


def screenshot(d, p):
    open_page(d, p)
    pause_at(d, 52)
    ov = d.find_element(By.ID, "overlay")
    w, h = ov.size["width"], ov.size["height"]
    from selenium.webdriver.common.action_chains import ActionChains
    ActionChains(d).move_to_element_with_offset(ov, int(w * 412 / 640) - w // 2,
                                                int(h * 96 / 360) - h // 2).perform()
    wait(d, lambda: "energy" in d.find_element(By.ID, "plot-legend").text, what="the legend")
    wait(d, lambda: "simulating" not in d.find_element(By.ID, "plot-legend").text, 30,
         what="the whole plot")
    time.sleep(0.3)
    out = os.environ.get("TP_PREVIEW_STILL") or os.path.join(ROOT, "build", "preview-still.png")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    assert d.save_screenshot(out)
    from PIL import Image
    im = Image.open(out).convert("L")
    lo, hi = im.getextrema()
    assert hi - lo > 100


def test_the_page_plays_while_100_idle_connections_are_held(browser, preview):
    import socket
    idle = [socket.create_connection((preview.host, preview.port), timeout=5) for _ in range(100)]
    try:
        for s in idle[::2]:  # half with a request begun and never finished
            s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % preview.port)
        open_page(browser, preview)
        a = readout_frame(browser)
        time.sleep(1.0)
        assert readout_frame(browser) != a
        assert severe_logs(browser) == []
    finally:
        for s in idle:
            s.close()
