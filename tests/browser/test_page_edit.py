"""Editing from the page in headless Chromium (docs/preview.md "Editing from the page"):
each kind of handle dragged with the mouse, and the scene file then checked byte for byte
(the dragged value may land a scene unit off the target: the mouse moves by whole CSS
pixels; every other byte must be the original's)."""
import os
import re
import time

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from pvserver import Preview, scene_path
from test_page import body, open_page, pause_at, severe_logs, wait

SHOTS = os.environ.get("TP_SCREENSHOT_DIR")


def original(name):
    return open(scene_path(name)).read()


def start(browser, name, text=None, args=("--size", "320x180")):
    p = Preview(name, args=args, text=text)
    open_page(browser, p)
    wait(browser, lambda: body(browser, "editable") == "1", what="editing on")
    return p


def css_of(d, x, y):
    """The offset from the overlay's centre (selenium's origin) of scene point (x, y)."""
    w, h = d.execute_script("""
        const r = document.getElementById('overlay').getBoundingClientRect();
        return [r.width, r.height];""")
    st = d.execute_script("return fetch('/status.json').then(r => r.json())")
    rw, rh = st["ref_width"], st["ref_height"]
    return round(x * w / rw - w / 2), round(y * h / rh - h / 2)


def drag(d, frm, to, shot=None):
    ov = d.find_element(By.ID, "overlay")
    fx, fy = css_of(d, *frm)
    tx, ty = css_of(d, *to)
    edits = int(body(d, "edits") or 0)
    a = ActionChains(d)
    a.move_to_element_with_offset(ov, fx, fy).click_and_hold()
    for k in (1, 2, 3, 4):  # a few moves, as a hand makes them
        a.move_to_element_with_offset(ov, fx + (tx - fx) * k // 4, fy + (ty - fy) * k // 4)
    if shot and SHOTS:
        a.perform()
        d.save_screenshot(os.path.join(SHOTS, shot))
        a = ActionChains(d)
    a.release().perform()
    wait(d, lambda: int(body(d, "edits") or 0) > edits or body(d, "editError"),
         what="the edit answered")
    assert not body(d, "editError"), body(d, "editError")


def near(got, want):
    return all(abs(g - w) <= 1.01 for g, w in zip(got, want))


def replaced(text, new, old_value, pattern, want):
    """new must be text with old_value's first occurrence replaced by a value matching
    pattern whose numbers are within a unit of want; returns the value written."""
    m = re.search(pattern, new)
    assert m, new
    got = [float(v) for v in m.groups()]
    assert near(got, want), (got, want)
    assert new == text.replace(old_value, m.group(0), 1), (old_value, m.group(0))
    return got


def test_drag_a_drop_then_undo_and_redo(browser):
    p = start(browser, "pond.json")
    try:
        pause_at(browser, 40)
        text = original("pond.json")
        g = p.status()["generation"]
        drag(browser, (180, 110), (230, 150), shot="edit-drag-drop.png")
        new = p.text()
        replaced(text, new, '"t": 1.4, "at": [180, 110]', r'"t": 1.4, "at": \[(\d+), (\d+)\]',
                 (230, 150))
        p.wait(lambda s: s["scene_generation"] > g, what="the edit's reload")
        ActionChains(browser).key_down(Keys.CONTROL).send_keys("z").key_up(Keys.CONTROL).perform()
        wait(browser, lambda: p.text() == text, what="undo back to the original bytes")
        ActionChains(browser).key_down(Keys.CONTROL).key_down(Keys.SHIFT).send_keys("z") \
            .key_up(Keys.SHIFT).key_up(Keys.CONTROL).perform()
        wait(browser, lambda: p.text() == new, what="redo")
        assert severe_logs(browser) == []
    finally:
        p.stop()


def test_undo_and_redo_pressed_in_quick_succession(browser):
    """Each undo and redo is made over the version the one before it wrote, even when the
    page polls the server between that write and its reload (a /scene.json of the text
    before the write must not replace the version: the next undo would be refused as "the
    file changed on disk")."""
    p = start(browser, "pond.json")
    try:
        pause_at(browser, 40)
        text = original("pond.json")
        drag(browser, (180, 110), (230, 150))
        new = p.text()
        assert new != text
        for i in range(4):  # no wait for the reloads between the keys
            key(browser, "z", Keys.CONTROL)
            key(browser, "z", Keys.CONTROL, Keys.SHIFT)
            time.sleep(0.03 * i)  # land at other moments of the status poll
        wait(browser, lambda: body(browser, "edits") == "9" or body(browser, "editError"),
             timeout=30, what="the eight undos and redos answered")
        assert not body(browser, "editError"), body(browser, "editError")
        assert p.text() == new
        key(browser, "z", Keys.CONTROL)
        wait(browser, lambda: p.text() == text, what="the last undo")
        assert severe_logs(browser) == []
    finally:
        p.stop()


def key(d, k, *mods):
    a = ActionChains(d)
    for m in mods:
        a.key_down(m)
    a.send_keys(k)
    for m in reversed(mods):
        a.key_up(m)
    a.perform()


def test_double_click_adds_a_drop_and_delete_removes_it(browser):
    p = start(browser, "pond.json")
    try:
        text = original("pond.json")
        pause_at(browser, 75)  # 2.5 s: between the drops at 2.3 and 3.5
        g = p.status()["generation"]
        ov = browser.find_element(By.ID, "overlay")
        ActionChains(browser).move_to_element_with_offset(ov, *css_of(browser, 400, 60)) \
            .double_click().perform()
        wait(browser, lambda: body(browser, "edits") == "1", what="the drop added")
        new = p.text()
        m = re.search(r'\n    \{ "t": 2.5, "at": \[(\d+), (\d+)\], "radius": 5, "strength": 5.0 \},', new)
        assert m and near([int(m.group(1)), int(m.group(2))], (400, 60)), new
        # the new drop sits before its neighbour in time, in the same format
        assert new == text.replace('\n    { "t": 3.5', m.group(0) + '\n    { "t": 3.5', 1)
        p.wait(lambda s: s["scene_generation"] > g, what="the reload")
        wait(browser, lambda: body(browser, "version") == p.scene_version(), what="scene reloaded")
        # select it (a click on its handle) and delete it: the original bytes again
        ActionChains(browser).move_to_element_with_offset(
            ov, *css_of(browser, int(m.group(1)), int(m.group(2)))).click().perform()
        wait(browser, lambda: body(browser, "selected").startswith("drop 3"), what="selected")
        key(browser, Keys.DELETE)
        wait(browser, lambda: p.text() == text, what="the drop deleted")
        assert severe_logs(browser) == []
    finally:
        p.stop()


def mark_x(d, t):
    """The offset from the marks strip's centre of time t."""
    return d.execute_script("""
        const c = document.getElementById('marks'), w = c.getBoundingClientRect().width;
        const st = arguments[1];
        return Math.round(8 + arguments[0] * st.fps / (st.frames - 1) * (w - 16) - w / 2);""",
                            t, p_status(d))


def p_status(d):
    return d.execute_script("return fetch('/status.json').then(r => r.json())")


def drag_mark(d, t0, t1):
    marks = d.find_element(By.ID, "marks")
    edits = int(body(d, "edits") or 0)
    ActionChains(d).move_to_element_with_offset(marks, mark_x(d, t0), 0).click_and_hold() \
        .move_to_element_with_offset(marks, mark_x(d, (t0 + t1) / 2), 0) \
        .move_to_element_with_offset(marks, mark_x(d, t1), 0).release().perform()
    wait(d, lambda: int(body(d, "edits") or 0) > edits or body(d, "editError"), what="edit")
    assert not body(d, "editError"), body(d, "editError")


def test_drag_a_drops_time_on_the_timeline(browser):
    p = start(browser, "pond.json")
    try:
        text = original("pond.json")
        drag_mark(browser, 4.6, 5.5)
        new = p.text()
        m = re.search(r'\{ "t": ([\d.]+), "at": \[520, 90\]', new)
        assert m and abs(float(m.group(1)) - 5.5) <= 0.07, new  # a frame or two
        t = float(m.group(1))
        assert abs(t * 30 - round(t * 30)) < 0.02  # on a frame
        assert new == text.replace('{ "t": 4.6, "at": [520, 90]', m.group(0))
    finally:
        p.stop()


def test_drag_a_box_keyframe_and_its_time(browser):
    p = start(browser, "boxes.json")
    try:
        text = original("boxes.json")
        pause_at(browser, 0)
        drag(browser, (580, 130), (560, 160), shot="edit-drag-keyframe.png")
        new = p.text()
        replaced(text, new, '{ "t": 7, "at": [580, 130] }', r'\{ "t": 7, "at": \[(\d+), (\d+)\] \}',
                 (560, 160))
        drag_mark(browser, 4, 3)
        newer = p.text()
        m = re.search(r'\{ "t": ([\d.]+), "at": \[300, 250\], "angle": 45 \}', newer)
        assert m and abs(float(m.group(1)) - 3) <= 0.07, newer
        assert newer == new.replace('{ "t": 4, "at": [300, 250], "angle": 45 }', m.group(0))
    finally:
        p.stop()


RAIN_AREA = '"type": "rain", "area": [100, 60, 300, 200],'


def test_drag_a_rain_areas_corners(browser):
    text = original("rain.json").replace('"type": "rain",', RAIN_AREA, 1)
    p = start(browser, "rain.json", text=text)
    try:
        drag(browser, (400, 260), (500, 300), shot="edit-drag-rain.png")  # bottom right
        new = p.text()
        got = replaced(text, new, "[100, 60, 300, 200]",
                       r"\[(\d+), (\d+), (\d+), (\d+)\]", (100, 60, 400, 240))
        drag(browser, (100, 60), (50, 40))  # top left: the bottom right stays
        newer = p.text()
        replaced(new, newer, "[100, 60, %d, %d]" % tuple(got[2:]),
                 r"\[(\d+), (\d+), (\d+), (\d+)\]", (50, 40, got[2] + 50, got[3] + 20))
    finally:
        p.stop()


def test_drag_an_emitters_nozzle_and_direction(browser):
    p = start(browser, "sph_nozzle.json")
    try:
        text = original("sph_nozzle.json")
        pause_at(browser, 0)
        g = p.status()["generation"]
        drag(browser, (90, 70), (120, 90))
        new = p.text()
        replaced(text, new, '"stream", "at": [90, 70]', r'"stream", "at": \[(\d+), (\d+)\]',
                 (120, 90))
        p.wait(lambda s: s["scene_generation"] > g, what="the reload")
        wait(browser, lambda: body(browser, "version") == p.scene_version(), what="reloaded")
        # the direction handle: 40 device pixels from the nozzle along "direction" (15°)
        k = browser.execute_script("""
            const r = document.getElementById('overlay').getBoundingClientRect();
            return 640 / r.width / (window.devicePixelRatio || 1);""")
        at = [int(v) for v in re.search(r'"stream", "at": \[(\d+), (\d+)\]', new).groups()]
        import math
        tip = (at[0] + 40 * k * math.cos(math.radians(15)), at[1] + 40 * k * math.sin(math.radians(15)))
        to = (at[0] + 60 * k * math.cos(math.radians(60)), at[1] + 60 * k * math.sin(math.radians(60)))
        drag(browser, tip, to, shot="edit-drag-direction.png")
        newer = p.text()
        m = re.search(r'"direction": (\d+)', newer)
        assert m and abs(int(m.group(1)) - 60) <= 3, newer
        assert newer == new.replace('"direction": 15', m.group(0), 1)
    finally:
        p.stop()


def test_drag_an_sph_blocks_and_an_obstacles_corners(browser):
    p = start(browser, "sph_box.json")
    try:
        text = original("sph_box.json")
        pause_at(browser, 0)
        drag(browser, (620, 225), (600, 200))  # the block's top right
        new = p.text()
        replaced(text, new, '"rect": [20, 225, 600, 115]', r'"rect": \[(\d+), (\d+), (\d+), (\d+)\]',
                 (20, 200, 580, 140))
        size = [int(v) for v in re.search(r'"boxes": \[\s*\{ "size": \[(\d+), (\d+)\]', text).groups()]
        corner = (80 + size[0] / 2, 240 + size[1] / 2)  # at t = 0 the box is at [80, 240]
        drag(browser, corner, (corner[0] + 10, corner[1] + 5))
        newer = p.text()
        old = '\n    { "size": [%d, %d],' % tuple(size)
        replaced(new, newer, old, r'\n    \{ "size": \[(\d+), (\d+)\],', (size[0] + 20, size[1] + 10))
    finally:
        p.stop()


def test_drag_the_tanks_keyframe(browser):
    p = start(browser, "sph_slosh.json")
    try:
        text = original("sph_slosh.json")
        pause_at(browser, 0)
        drag(browser, (320, 200), (300, 230))
        new = p.text()
        replaced(text, new, '{ "t": 0, "at": [320.0, 200] }', r'\{ "t": 0, "at": \[(\d+), (\d+)\] \}',
                 (300, 230))
    finally:
        p.stop()


def test_read_only_draws_no_handles_and_writes_nothing(browser):
    p = Preview("pond.json", args=("--read-only", "--size", "320x180"))
    try:
        open_page(browser, p)
        wait(browser, lambda: body(browser, "editable") == "0", what="editing off")
        ov = browser.find_element(By.ID, "overlay")
        ActionChains(browser).move_to_element_with_offset(ov, *css_of(browser, 180, 110)) \
            .click_and_hold().move_by_offset(40, 30).release().perform()
        ActionChains(browser).move_to_element_with_offset(ov, *css_of(browser, 400, 60)) \
            .double_click().perform()
        time.sleep(0.5)
        assert p.text() == original("pond.json") and not body(browser, "edits")
    finally:
        p.stop()
