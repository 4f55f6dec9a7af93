"""The preview page's playback and smaller tools in headless Chromium (issue 42): several
frames in flight, the achieved rate, keys, the error panel, toggles, zoom, the plot."""
import json
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
