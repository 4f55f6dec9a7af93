"""The preview page's playback and smaller tools in headless Chromium (issue 42): several
frames in flight, the achieved rate, keys, the error panel, toggles, zoom, the plot."""
import json
import os
import re
import time

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from pvserver import Preview, scene_path
from test_page import body, open_page, pause_at, readout_frame, severe_logs, wait


def scene_with(name, **changes):
    sc = json.load(open(scene_path(name)))
    sc.update(changes)
    return json.dumps(sc, indent=2)


def test_playing_keeps_several_frames_in_flight(browser, preview):
    open_page(browser, preview)
    time.sleep(2)
    overlap = browser.execute_script("""
        const f = performance.getEntriesByType('resource').filter(e => e.name.includes('/frame/'));
        let most = 0;
        for (const a of f) most = Math.max(most, f.filter(b => b.startTime <= a.startTime
            && b.responseEnd > a.startTime).length);
        return most;""")
    assert overlap >= 2, overlap


def test_the_page_plays_at_the_scenes_rate_and_says_what_it_achieves(browser):
    p = Preview("pond.json", args=("--size", "320x180"), text=scene_with("pond.json", fps=5))
    try:
        open_page(browser, p)
        wait(browser, lambda: body(browser, "rate"), timeout=20, what="a rate")
        time.sleep(1)
        rate = float(body(browser, "rate"))
        assert 3.5 <= rate <= 5.5, rate  # the scene's 5 fps: never faster
        assert body(browser, "slow") == "0"
        assert re.match(r"\d+\.\d fps$", browser.find_element(By.ID, "rate").text)
        browser.find_element(By.ID, "play").click()
        wait(browser, lambda: browser.find_element(By.ID, "rate").text == "", what="no rate paused")
    finally:
        p.stop()


def test_a_scene_faster_than_the_page_says_so(browser):
    # sph at 240 fps and 640x360: no machine here renders that in real time
    p = Preview("sph_dambreak.json", text=scene_with("sph_dambreak.json", fps=240, duration=2))
    try:
        open_page(browser, p)
        wait(browser, lambda: body(browser, "slow") == "1", timeout=30, what="slower than real time")
        text = browser.find_element(By.ID, "rate").text
        assert "slower than real time (240 fps)" in text, text
        assert browser.find_element(By.ID, "rate").value_of_css_property("color") != \
            browser.find_element(By.ID, "readout").value_of_css_property("color")
    finally:
        p.stop()


def test_arrow_keys_step_one_frame_with_the_timeline_focused(browser, preview):
    open_page(browser, preview)
    pause_at(browser, 50)
    tl = browser.find_element(By.ID, "timeline")
    ActionChains(browser).click(tl).perform()  # focus it, as after dragging it
    browser.execute_script("arguments[0].focus()", tl)
    pause_at(browser, 50)
    tl.send_keys(Keys.ARROW_RIGHT)
    wait(browser, lambda: readout_frame(browser) == 51, what="one step right")
    time.sleep(0.3)
    assert readout_frame(browser) == 51
    assert int(tl.get_attribute("value")) == 51
    tl.send_keys(Keys.ARROW_LEFT)
    tl.send_keys(Keys.ARROW_LEFT)
    wait(browser, lambda: readout_frame(browser) == 49, what="two steps left")
    assert severe_logs(browser) == []


def visible_toggles(d):
    return d.execute_script("""
        return Array.from(document.querySelectorAll('#toggles label'))
            .filter(l => !l.hidden && l.offsetParent !== null).map(l => l.textContent.trim());""")


def test_toggles_only_for_what_the_scene_has(browser):
    p = Preview("pond.json", args=("--size", "320x180"))
    try:
        open_page(browser, p)
        wait(browser, lambda: body(browser, "toggles") == "drops", what="pond's toggles")
        assert visible_toggles(browser) == ["drops"]
    finally:
        p.stop()
    p = Preview("sph_nozzle.json", args=("--size", "320x180"))
    try:
        open_page(browser, p)
        wait(browser, lambda: body(browser, "toggles") == "emitters tank", what="sph toggles")
        assert visible_toggles(browser) == ["emitters", "tank"]
    finally:
        p.stop()


def test_keys_home_end_j_k_l_and_the_list(browser, preview):
    d = browser
    open_page(d, preview)
    keys = d.find_element(By.ID, "keys")
    assert not keys.is_displayed()
    ActionChains(d).send_keys("?").perform()
    wait(d, keys.is_displayed, what="the list")
    for k in ("Space", "J", "K", "L", "Home", "End", "Ctrl", "Delete", "?"):
        assert k in keys.text, k
    ActionChains(d).send_keys("?").perform()
    wait(d, lambda: not keys.is_displayed(), what="the list closed")
    ActionChains(d).send_keys("k").perform()
    assert body(d, "playing") == "0"
    ActionChains(d).send_keys(Keys.END).perform()
    wait(d, lambda: readout_frame(d) == 239, what="End")
    ActionChains(d).send_keys(Keys.HOME).perform()
    wait(d, lambda: readout_frame(d) == 0, what="Home")
    pause_at(d, 120)
    ActionChains(d).send_keys("j").perform()
    assert body(d, "playing") == "1" and body(d, "dir") == "-1"
    wait(d, lambda: 100 < readout_frame(d) < 117, what="playing backwards")
    ActionChains(d).send_keys("l").perform()
    a = readout_frame(d)
    wait(d, lambda: readout_frame(d) > a + 3, what="playing forwards")
    ActionChains(d).send_keys("k").perform()
    assert body(d, "playing") == "0"
    assert severe_logs(d) == []


def test_copy_render_command(browser, preview):
    open_page(browser, preview)
    browser.find_element(By.ID, "copy-cmd").click()
    wait(browser, lambda: body(browser, "copied").startswith("tidepool render"), what="copied")
    assert body(browser, "copied") == "tidepool render " + preview.scene


def test_the_error_panel_folds_and_its_caret_points_at_the_column_on_a_long_line(browser):
    # a long line (wider than the panel) with tabs before the fault: column 70 is the "x"
    bad = '{\n\t"format": "tidepool-scene/1", "size": [640, 360], "fps": 30, "duration": x, "solver": "ripple", "seed": 1, "drops": [] }\n'
    col = bad.split("\n")[1].index("x") + 1
    p = Preview("pond.json", args=("--size", "320x180"))
    try:
        open_page(browser, p)
        from pvserver import save_atomic
        save_atomic(p.scene, bad)
        wait(browser, lambda: body(browser, "error") == "2:%d" % col, what="the error")
        # the caret's left edge is the faulty character's
        xs = browser.execute_script("""
            const pre = document.getElementById('error-source');
            const t = pre.firstChild, text = t.textContent, nl = text.indexOf('\\n');
            const at = (i) => { const r = document.createRange(); r.setStart(t, i); r.setEnd(t, i + 1);
                                return r.getBoundingClientRect().left; };
            const num = text.indexOf('| ') + 2;
            return [at(num + arguments[0] - 1), at(text.length - 1), text.slice(num + arguments[0] - 1, num + arguments[0])];""",
            col)
        assert xs[2] == "x" and abs(xs[0] - xs[1]) < 0.5, xs
        assert browser.find_element(By.ID, "error-source").value_of_css_property("white-space") == "pre"
        assert "last good picture" in browser.find_element(By.ID, "error-note").text
        err = browser.find_element(By.ID, "error")
        h = err.size["height"]
        browser.find_element(By.ID, "error-fold").click()
        assert err.size["height"] < h / 2 and not browser.find_element(By.ID, "error-source").is_displayed()
        assert "Scene error" in err.text
        browser.find_element(By.ID, "error-fold").click()
        assert browser.find_element(By.ID, "error-source").is_displayed()
    finally:
        p.stop()


def test_a_scene_broken_from_the_start_says_there_is_no_picture_yet(browser):
    p = Preview("pond.json", args=("--size", "320x180"), text='{"format": "tidepool-scene/1", "fps": -3}')
    try:
        browser.get(p.url)
        wait(browser, lambda: body(browser, "error"), what="the error")
        note = browser.find_element(By.ID, "error-note").text
        assert "no picture yet" in note and "last good" not in note
    finally:
        p.stop()


def cursor_xy(d):
    m = re.match(r"x (\d+)\s+y (\d+)", d.find_element(By.ID, "cursor").text)
    return int(m.group(1)), int(m.group(2))


def test_zoom_about_the_mouse_sharp_pixels_pan_and_back(browser):
    from selenium.webdriver.common.actions.wheel_input import ScrollOrigin
    p = Preview("pond.json", args=("--size", "320x180"))
    try:
        d = browser
        open_page(d, p)
        pause_at(d, 30)
        ov = d.find_element(By.ID, "overlay")
        ActionChains(d).move_to_element_with_offset(ov, 60, 30).perform()
        before = cursor_xy(d)
        assert d.find_element(By.ID, "picture").value_of_css_property("image-rendering") != "pixelated"
        ActionChains(d).scroll_from_origin(ScrollOrigin.from_element(ov, 60, 30), 0, -600).perform()
        wait(d, lambda: float(body(d, "zoom") or 1) >= 2, what="zoomed in")
        # the same scene point is still under the mouse (within a preview pixel)
        after = cursor_xy_at(d)
        assert abs(after[0] - before[0]) <= 3 and abs(after[1] - before[1]) <= 3, (before, after)
        assert d.find_element(By.ID, "picture").value_of_css_property("image-rendering") == "pixelated"
        # a drag pans: the view moves by the drag
        t0 = d.find_element(By.ID, "zoom").value_of_css_property("transform")
        ActionChains(d).move_to_element_with_offset(ov, -100, -40).click_and_hold() \
            .move_by_offset(30, 20).move_by_offset(30, 20).release().perform()
        t1 = d.find_element(By.ID, "zoom").value_of_css_property("transform")
        assert t0 != t1 and not body(d, "copied")  # panned, and no copy on release
        ActionChains(d).send_keys("0").perform()
        wait(d, lambda: body(d, "zoom") == "1", what="back to fit")
        assert d.find_element(By.ID, "zoom").value_of_css_property("transform") == "none"
        assert severe_logs(d) == []
    finally:
        p.stop()


def cursor_xy_at(d):
    """The cursor readout with the mouse where the wheel was turned, (60, 30) from the
    centre of the stage (which is not zoomed: the overlay inside it is)."""
    ov = d.find_element(By.ID, "stage")
    ActionChains(d).move_to_element_with_offset(ov, 60, 30).perform()
    return cursor_xy(d)


def color_pixels(d, rgb, y0=0, y1=None):
    """Pixels of the plot canvas within 40 of rgb (sum of channel differences), in rows
    [y0, y1) of device pixels."""
    return d.execute_script("""
        const c = document.getElementById('plot'), [r, g, b] = arguments[0];
        const y0 = arguments[1], y1 = arguments[2] === null ? c.height : arguments[2];
        const px = c.getContext('2d').getImageData(0, y0, c.width, y1 - y0).data;
        let n = 0;
        for (let i = 0; i < px.length; i += 4)
            if (px[i + 3] > 200 && Math.abs(px[i] - r) + Math.abs(px[i + 1] - g) + Math.abs(px[i + 2] - b) < 40) n++;
        return n;""", rgb, y0, y1)


def test_the_plot_has_a_time_axis_values_under_the_mouse_hideable_lines_and_marks(browser):
    p = Preview("pond.json", args=("--size", "320x180"))
    try:
        d = browser
        open_page(d, p)
        wait(d, lambda: "simulating" not in d.find_element(By.ID, "plot-legend").text, timeout=60,
             what="the stats")
        pause_at(d, 10)
        plot = d.find_element(By.ID, "plot")
        # drop marks (yellow) along the top, the axis labels (grey) along the bottom
        assert color_pixels(d, [255, 214, 102], 0, 12) > 6 * 3  # six drops
        h = d.execute_script("return document.getElementById('plot').height")
        assert color_pixels(d, [125, 139, 151], h - 14, h) > 50
        legend = d.find_element(By.ID, "plot-legend")
        assert legend.text.startswith("frame 0.333 s")
        w = plot.size["width"]
        ActionChains(d).move_to_element_with_offset(plot, w // 4, 0).perform()
        wait(d, lambda: "under the mouse" in legend.text, what="hover values")
        f = int(body(d, "plotHover"))
        assert abs(f - 239 * 0.75) <= 4, f  # three quarters along (offsets are from the centre)
        assert "%.3f s" % (f / 30) in legend.text
        # hide the first field (blue): its pixels go, its entry is struck through
        blue = color_pixels(d, [79, 179, 217])
        first = d.find_elements(By.CSS_SELECTOR, "#plot-legend .field")[0]
        name = first.get_attribute("data-field")
        first.click()
        wait(d, lambda: color_pixels(d, [79, 179, 217]) < blue / 10, what="line hidden")
        off = d.find_elements(By.CSS_SELECTOR, "#plot-legend .field.off")
        assert [e.get_attribute("data-field") for e in off] == [name]
        d.find_elements(By.CSS_SELECTOR, "#plot-legend .field")[0].click()
        wait(d, lambda: color_pixels(d, [79, 179, 217]) > blue / 2, what="line back")
        assert severe_logs(d) == []
    finally:
        p.stop()


def test_a_colour_edit_keeps_the_stats_and_a_drop_edit_recomputes_them(browser):
    from pvserver import save_atomic
    p = Preview("pond.json", args=("--size", "320x180"))
    try:
        d = browser
        open_page(d, p)
        p.wait(lambda s: s["stats_done"] == s["frames"], timeout=60, what="the stats")
        before = json.loads(p.get("/stats.json"))
        g = p.status()["scene_generation"]
        save_atomic(p.scene, p.text().replace('"tint": "#1f6f7f"', '"tint": "#7f1f1f"'))
        s = p.wait(lambda s: s["scene_generation"] > g, what="the colour's reload")
        after = json.loads(p.get("/stats.json"))
        assert after["generation"] == s["scene_generation"] and after["done"] == after["frames"]
        assert after["values"] == before["values"]  # kept, not computed again
        wait(d, lambda: body(d, "statsDone") == "%d/%d" % (s["scene_generation"], after["frames"]),
             what="the page's plot of the new generation, complete")
        assert "simulating" not in d.find_element(By.ID, "plot-legend").text
        g = s["scene_generation"]
        save_atomic(p.scene, p.text().replace('"at": [520, 90]', '"at": [500, 90]'))
        s = p.wait(lambda s: s["scene_generation"] > g, what="the drop's reload")
        assert json.loads(p.get("/stats.json"))["done"] < s["frames"]  # walked again
    finally:
        p.stop()


def test_floating_boxes_are_drawn_where_they_are_in_each_frame(browser):
    import math
    p = Preview("shallow_float.json", args=("--size", "320x180"))
    try:
        d = browser
        open_page(d, p)
        p.wait(lambda s: s["stats_done"] == s["frames"], timeout=120, what="the stats walk")
        stats = json.loads(p.get("/stats.json"))
        sc = json.loads(p.get("/scene.json"))
        floats = [i for i, b in enumerate(sc["boxes"]) if b.get("float")]
        assert floats and len(stats["boxes"]) == stats["frames"]
        # played on (a seek there would simulate as long) until the boxes have drifted
        wait(d, lambda: readout_frame(d) >= 190, timeout=90, what="frame 190 played")
        ActionChains(d).send_keys("k").perform()
        time.sleep(0.3)
        f = readout_frame(d)
        drift = lambda i: math.dist(stats["boxes"][f][i][:2], stats["boxes"][0][i][:2])
        i = max(floats, key=drift)
        assert drift(i) > 2, "no floating box drifts in shallow_float.json"
        wait(d, lambda: body(d, "posed") == "1", what="the poses used")

        def left(pose):  # where the box's label starts: its bounding box's left side
            x, _, a = pose
            w, h = sc["boxes"][i]["size"]
            r = math.radians(a)
            return x - (w * abs(math.cos(r)) + h * abs(math.sin(r))) / 2

        labels = d.execute_script("return Overlays.labels()")
        px = 640 / d.execute_script("return document.getElementById('overlay').width")
        xs = [lb[0] + 2 * px for lb in labels]  # a label's box starts 2 pixels left of it
        assert any(abs(x - left(stats["boxes"][f][i])) < 0.5 for x in xs), (left(stats["boxes"][f][i]), xs)
        assert not any(abs(x - left(stats["boxes"][0][i])) < 0.5 for x in xs), xs
    finally:
        p.stop()


def test_a_slow_save_shows_a_draft_first_then_the_full_picture(browser):
    """An edit from t = 0 of a shallow scene simulates again up to the page's frame, which
    takes its time: the page shows the draft (the scene at a quarter of the size) marked
    as such, then the full frame, the same as the server renders."""
    from pvserver import save_atomic
    p = Preview("shallow_drag.json")
    try:
        d = browser
        open_page(d, p)
        pause_at(d, 150)
        g = p.status()["scene_generation"]
        sc = json.loads(p.text())
        sc.setdefault("drops", []).append({"t": 0, "at": [200, 150], "radius": 6, "strength": 1.5})
        # what the draft's mark says while it shows (the full frame may hide it soon after)
        d.execute_script("""
            const m = document.getElementById('draft');
            window.draftMark = null;
            new MutationObserver(() => {
                if (!m.hidden && !window.draftMark) window.draftMark = {
                    text: m.textContent, shown: m.getBoundingClientRect().width > 0,
                    full: document.body.dataset.shownGeneration };
            }).observe(m, {attributes: true});""")
        save_atomic(p.scene, json.dumps(sc, indent=2))
        wait(d, lambda: body(d, "draftGeneration") == str(g + 1), timeout=20, what="the draft")
        mark = d.execute_script("return window.draftMark")
        assert mark and mark["shown"] and "draft" in mark["text"], mark
        assert mark["full"] == str(g), mark  # shown before the new scene's full frame
        shot = os.environ.get("TP_SCREENSHOT_DIR")
        if shot:
            d.save_screenshot(os.path.join(shot, "preview-draft.png"))
        wait(d, lambda: body(d, "shownGeneration") == str(g + 1), timeout=30, what="the full frame")
        assert not d.find_element(By.ID, "draft").is_displayed()
        assert readout_frame(d) == 150
        same = d.execute_async_script("""
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
        assert severe_logs(d) == []
    finally:
        p.stop()


def test_the_preview_size_is_chosen_on_the_page(browser):
    from selenium.webdriver.support.ui import Select
    p = Preview("pond.json")
    try:
        d = browser
        open_page(d, p)
        g = p.status()["scene_generation"]
        Select(d.find_element(By.ID, "size")).select_by_value("0.5")
        s = p.wait(lambda s: s["scene_generation"] > g, what="the reload at the new size")
        assert (s["width"], s["height"]) == (320, 180) and s["error"] is None
        wait(d, lambda: d.execute_script(
            "const c = document.getElementById('picture'); return c.width === 320 && c.height === 180"),
            what="a 320x180 picture")
        g = s["scene_generation"]
        Select(d.find_element(By.ID, "size")).select_by_value("fit")
        s = p.wait(lambda s: s["scene_generation"] > g, what="back to fit")
        assert (s["width"], s["height"]) == (640, 360)
        # from elsewhere: refused like an edit
        status, _, _ = p.request("/size", method="POST", body='{"scale": 2}', headers={
            "Origin": "http://evil.example", "Content-Type": "application/json"})
        assert status == 403
        status, _, _ = p.request("/size", method="POST", body='{"scale": 99}', headers={
            "Origin": p.origin, "Content-Type": "application/json"})
        assert status == 400
        assert p.status()["width"] == 640
        assert severe_logs(d) == []
    finally:
        p.stop()
