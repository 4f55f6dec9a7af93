"""The HTML report of `tidepool compare --html`, in headless Chromium: it loads with no
console error and no network request, the slider, blink and zoom respond to input, and
the numbers it shows are the JSON report's.

Run by `make check-browser-compare` (TP_BIN names the binary). Self-contained: it starts
its own Chromium, so it needs no conftest fixture.
"""
import json
import math
import os
import shutil
import subprocess
import tempfile

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TP = os.environ.get("TP_BIN", os.path.join(ROOT, "build", "tidepool"))


def tp(*args, ok=(0,)):
    r = subprocess.run([TP, *args], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode in ok, r.stderr
    return r


@pytest.fixture(scope="module")
def reports():
    """A failing comparison of two 8-frame renders (FLIP, an ignored rectangle), its JSON,
    and the report of a comparison that could not run."""
    d = tempfile.mkdtemp(prefix="tp-cmpreport-")
    tp("render", "tests/data/tiny.json", "-q", "-o", f"{d}/a/%02d.png", "--frames", "8")
    tp("render", "tests/data/tiny.json", "-q", "-o", f"{d}/b/%02d.png", "--frames", "8",
       "--set", "render.refraction=2")
    tp("compare", f"{d}/a", f"{d}/b", "--metric", "flip", "--max-flip", "0.05", "--ignore", "0,0,20,12",
       "--html", f"{d}/r.html", "--json", f"{d}/r.json", "--html-frames", "4", "-q", ok=(1,))
    tp("compare", f"{d}/a", f"{d}/missing", "--html", f"{d}/err.html", "-q", ok=(3,))
    # The other way round: B (refraction 1) is the cheaper side, so the page rebuilds A.
    tp("compare", f"{d}/b", f"{d}/a", "--html", f"{d}/swap.html", "--json", f"{d}/swap.json",
       "--html-frames", "4", "-q", ok=(1,))
    # Frames 0-3 identical, 4-7 failing, two of them pictured; and B at another size.
    os.makedirs(f"{d}/mix")
    for k in range(8):
        shutil.copy(f"{d}/{'a' if k < 4 else 'b'}/{k:02d}.png", f"{d}/mix/{k:02d}.png")
    tp("compare", f"{d}/a", f"{d}/mix", "--html", f"{d}/mix.html", "--json", f"{d}/mix.json",
       "--html-frames", "2", "-q", ok=(1,))
    tp("render", "tests/data/tiny.json", "-q", "-o", f"{d}/c/%02d.png", "--frames", "8", "--size", "48x32")
    tp("compare", f"{d}/a", f"{d}/c", "--html", f"{d}/size.html", "--html-frames", "1", "-q", ok=(1,))
    with open(f"{d}/r.json") as f:
        data = json.load(f)
    with open(f"{d}/mix.json") as f:
        mix = json.load(f)
    with open(f"{d}/swap.json") as f:
        swap = json.load(f)
    yield {"dir": d, "html": f"{d}/r.html", "json": data, "err": f"{d}/err.html",
           "swap": f"{d}/swap.html", "swap_json": swap,
           "mix": f"{d}/mix.html", "mix_json": mix, "size": f"{d}/size.html"}
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module")
def driver():
    profile = tempfile.mkdtemp(prefix="tp-chromium-")
    opts = webdriver.ChromeOptions()
    for p in ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"):
        if os.path.exists(p):
            opts.binary_location = p
            break
    else:
        pytest.skip("no chromium installed (scripts/install-deps.sh installs it)")
    for a in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
              "--disable-background-networking", "--disable-component-update", "--disable-sync",
              "--disable-dev-shm-usage", "--window-size=1280,1000", "--user-data-dir=" + profile):
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    d = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"), options=opts)
    d.set_page_load_timeout(30)
    yield d
    d.quit()
    shutil.rmtree(profile, ignore_errors=True)


def load(driver, path):
    driver.get("about:blank")
    driver.get_log("browser")
    driver.get("file://" + path)
    WebDriverWait(driver, 10).until(lambda d: d.execute_script("return document.body.dataset.ready") == "1")


def viewer(driver, key):
    return driver.execute_script(f"return document.getElementById('viewer').dataset.{key}")


def stages(driver):
    return driver.execute_script(
        "return [...document.querySelectorAll('.stage')].map(s => s.style.transform)")


def test_loads_without_console_errors_or_network(driver, reports):
    for page in (reports["html"], reports["err"]):
        load(driver, page)
        logs = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]
        assert logs == [], logs
        # Every fetch the page made (the document, and anything it loaded after).
        names = driver.execute_script(
            "return [...performance.getEntriesByType('navigation'), "
            "...performance.getEntriesByType('resource')].map(e => e.name)")
        assert names, "the navigation itself is an entry"
        for n in names:
            assert n.startswith("file:") or n.startswith("data:"), n
    # The page forbids any request outright.
    csp = driver.execute_script(
        "return document.querySelector('meta[http-equiv=Content-Security-Policy]').content")
    assert csp.startswith("default-src 'none'")


def test_error_report_says_what_failed(driver, reports):
    load(driver, reports["err"])
    assert driver.find_element(By.ID, "verdict").text == "ERROR"
    banner = driver.find_element(By.ID, "error-banner").text
    assert "missing" in banner and "B:" in banner, banner


def test_slider_wipe_follows_input(driver, reports):
    load(driver, reports["html"])
    driver.find_element(By.CSS_SELECTOR, "[data-mode=slider]").click()
    assert viewer(driver, "mode") == "slider"
    top = driver.find_element(By.CSS_SELECTOR, ".pane.wipe img.over")
    width = int(top.get_attribute("width"))
    wipe = driver.find_element(By.ID, "wipe")
    assert top.value_of_css_property("clip-path") == f"inset(0px 0px 0px {width / 2:g}px)"
    wipe.send_keys(Keys.HOME)
    assert viewer(driver, "wipe") == "0"
    assert top.value_of_css_property("clip-path") in ("inset(0px)", "inset(0px 0px 0px 0px)")
    wipe.send_keys(Keys.END)
    assert viewer(driver, "wipe") == "100"
    # Dragging the range thumb with the mouse moves it too.
    ActionChains(driver).click_and_hold(wipe).move_by_offset(-wipe.size["width"] // 4, 0).release().perform()
    v = float(viewer(driver, "wipe"))
    assert 10 < v < 40, v
    line = driver.find_element(By.ID, "wipe-line")
    assert line.value_of_css_property("left") != "auto"


def test_blink_by_button_and_keyboard(driver, reports):
    load(driver, reports["html"])
    driver.find_element(By.CSS_SELECTOR, "[data-mode=blink]").click()
    top = driver.find_element(By.CSS_SELECTOR, ".pane.blink img.over")
    assert viewer(driver, "showing") == "a" and top.value_of_css_property("visibility") == "hidden"
    driver.find_element(By.ID, "blink-toggle").click()
    assert viewer(driver, "showing") == "b" and top.value_of_css_property("visibility") == "visible"
    body = driver.find_element(By.TAG_NAME, "body")
    body.send_keys("b")
    assert viewer(driver, "showing") == "a"
    body.send_keys(Keys.SPACE)
    assert viewer(driver, "showing") == "b"
    assert driver.find_element(By.ID, "blink-label").text == "B test"
    # From another view, B switches to blink.
    body.send_keys("1")
    assert viewer(driver, "mode") == "side"
    body.send_keys("b")
    assert viewer(driver, "mode") == "blink"


def test_zoom_and_pan_keep_the_pictures_in_step(driver, reports):
    load(driver, reports["html"])
    assert viewer(driver, "mode") == "side"
    n = len(driver.find_elements(By.CSS_SELECTOR, ".pane"))
    assert n == 4, "reference, test, difference and FLIP map side by side"
    s0 = float(viewer(driver, "scale"))
    driver.find_element(By.ID, "zoom-in").click()
    assert math.isclose(float(viewer(driver, "scale")), 2 * s0)
    t = stages(driver)
    assert len(set(t)) == 1 and len(t) == n, t
    body = driver.find_element(By.TAG_NAME, "body")
    body.send_keys("0")
    assert float(viewer(driver, "scale")) == 1
    for _ in range(4):
        body.send_keys("+")
    assert float(viewer(driver, "scale")) == 16, "zoom reaches single pixels"
    img = driver.find_element(By.CSS_SELECTOR, ".pane.ref img")
    assert img.value_of_css_property("image-rendering") == "pixelated"
    # The mouse wheel zooms, a drag pans: every pane follows.
    port = driver.find_elements(By.CSS_SELECTOR, ".port")[1]
    driver.execute_script(
        "arguments[0].dispatchEvent(new WheelEvent('wheel', {deltaY: 100, clientX: 50, clientY: 50, bubbles: true, cancelable: true}))",
        port)
    assert math.isclose(float(viewer(driver, "scale")), 16 * 0.8)
    before = stages(driver)[0]
    ActionChains(driver).move_to_element(port).click_and_hold().move_by_offset(30, 20).release().perform()
    after = stages(driver)
    assert after[0] != before and len(set(after)) == 1, after
    # Outlines: the changed rectangle and the ignored region, in every pane.
    assert len(driver.find_elements(By.CSS_SELECTOR, ".port .rect")) == n
    assert len(driver.find_elements(By.CSS_SELECTOR, ".port .ignore")) == n


def test_numbers_shown_are_the_json_reports(driver, reports):
    load(driver, reports["html"])
    data = reports["json"]
    card = lambda i: driver.find_element(By.CSS_SELECTOR, f"#{i} b").text
    assert card("n-compared") == str(data["frames_compared"])
    assert card("n-failed") == str(data["failed"])
    assert card("n-identical") == str(data["identical"])
    assert card("n-worst") == str(data["worst"])
    cols = [th.get_attribute("data-key") for th in driver.find_elements(By.CSS_SELECTOR, "#frames th")]
    assert "flip" in cols and "psnr" in cols
    # Every frame, not only the failing ones (the view on by default when some fail).
    only = driver.find_element(By.ID, "failing-only")
    if only.is_selected():
        only.click()
    rows = driver.find_elements(By.CSS_SELECTOR, "#frames tbody tr")
    assert len(rows) == len(data["frames"])
    checked = 0
    for tr, fr in zip(rows, data["frames"]):
        cells = tr.find_elements(By.TAG_NAME, "td")
        assert int(cells[0].text.lstrip("▣ ")) == fr["index"]
        assert cells[1].text == fr["status"]
        for key, td in zip(cols, cells):
            v = fr.get(key)
            if key in ("index", "status", "bbox", "detail") or not isinstance(v, (int, float)):
                continue
            assert float(td.get_attribute("data-value")) == v, (fr["index"], key)
            assert math.isclose(float(td.text), v, rel_tol=5e-6, abs_tol=1e-12), (fr["index"], key, td.text, v)
            checked += 1
    assert checked > 20
    # The frame picked and its FLIP in the viewer's list are the JSON's too.
    label = driver.find_element(By.CSS_SELECTOR, "#pick option:checked").text
    worst = next(f for f in data["frames"] if f["index"] == int(label.split()[0]))
    assert math.isclose(float(label.split("FLIP ")[1].rstrip(")")), worst["flip"], rel_tol=5e-6)
    # Tolerance lines in the charts are at the JSON's tolerances.
    tol = driver.find_element(By.CSS_SELECTOR, ".chart[data-metric=flip] line.tol").get_attribute("data-tol")
    assert float(tol) == data["tolerance"]["max_flip"]


def test_table_sorts_by_any_metric(driver, reports):
    load(driver, reports["html"])
    th = driver.find_element(By.CSS_SELECTOR, "#frames th[data-key=psnr]")
    th.click()
    assert th.get_attribute("aria-sort") == "ascending"
    col = [th.get_attribute("data-key") for th in driver.find_elements(By.CSS_SELECTOR, "#frames th")].index("psnr")
    vals = [r.find_elements(By.TAG_NAME, "td")[col].get_attribute("data-value")
            for r in driver.find_elements(By.CSS_SELECTOR, "#frames tbody tr")]
    nums = [float(v) for v in vals if v is not None]
    assert nums == sorted(nums) and len(nums) > 1
    th = driver.find_element(By.CSS_SELECTOR, "#frames th[data-key=flip]")
    th.click()
    assert th.get_attribute("aria-sort") == "descending", "worst FLIP first"
    col = [t.get_attribute("data-key") for t in driver.find_elements(By.CSS_SELECTOR, "#frames th")].index("flip")
    nums = [float(r.find_elements(By.TAG_NAME, "td")[col].get_attribute("data-value"))
            for r in driver.find_elements(By.CSS_SELECTOR, "#frames tbody tr")]
    assert nums == sorted(nums, reverse=True)


def test_says_what_made_it_and_how_to_accept_b(driver, reports):
    load(driver, reports["mix"])
    data = reports["mix_json"]
    made = driver.find_element(By.ID, "made").text
    assert data["made"]["version"] in made and data["made"]["date"] in made, made
    assert driver.find_element(By.ID, "made-command").text == data["made"]["command"]
    assert data["made"]["command"].startswith("tidepool compare ") and "--html-frames 2" in data["made"]["command"]
    assert driver.find_element(By.CSS_SELECTOR, "#made .sha-a").text == data["a"]["sha256"]
    assert driver.find_element(By.CSS_SELECTOR, "#made .sha-b").text == data["b"]["sha256"]
    accept = driver.find_element(By.CSS_SELECTOR, "#accept code").text
    assert accept == data["accept"] and accept.endswith(" --update") and "--html" not in accept, accept


def test_failing_frames_only_by_default(driver, reports):
    load(driver, reports["mix"])
    only = driver.find_element(By.ID, "failing-only")
    assert only.is_selected() and only.is_displayed()
    rows = driver.find_elements(By.CSS_SELECTOR, "#frames tbody tr")
    shown = [r.get_attribute("data-index") for r in rows if r.is_displayed()]
    assert shown == ["4", "5", "6", "7"], shown
    assert "(4 identical or within-tolerance frames hidden)" in driver.find_element(By.ID, "rows-hidden").text
    only.click()
    assert len([r for r in rows if r.is_displayed()]) == 8
    # Nothing failing: every frame, and no such switch.
    load(driver, reports["err"])
    assert not driver.find_element(By.ID, "failing-only").is_displayed()


def test_picker_names_the_failing_frames_without_pictures(driver, reports):
    load(driver, reports["mix"])
    opts = driver.find_elements(By.CSS_SELECTOR, "#pick option")
    assert [o.get_attribute("value") for o in opts] == ["4", "5", "6", "7"]
    off = [o.get_attribute("value") for o in opts if not o.is_enabled()]
    assert len(off) == 2, off
    for o in opts:
        if not o.is_enabled():
            assert "no picture" in o.text and "--html-frames" in o.text
    note = driver.find_element(By.ID, "unpictured").text
    assert "Failing frames without pictures: " + ", ".join(off) in note, note
    assert "--html-frames 4" in note, note


def heat_lut(max_diff):
    """The difference map's colour of each max over R, G, B of |A - B| (docs/compare.md):
    black, violet, red, orange, white at the frame's max-diff, any difference at least 0.08
    of the way up (the map tidepool wrote in C before the page drew it)."""
    stops = [(0, 0, 0), (90, 0, 130), (210, 30, 30), (255, 165, 0), (255, 255, 255)]
    lut = []
    for d in range(256):
        t = d / max_diff if max_diff > 0 else 0
        t = 0.08 if d > 0 and t < 0.08 else min(t, 1)
        k = 3 if 4 * t >= 4 else int(4 * t)
        fr = 4 * t - k
        lut.append(tuple(math.floor(stops[k][c] * (1 - fr) + stops[k + 1][c] * fr + 0.5) for c in range(3)))
    return lut


def magma():
    import re
    with open(os.path.join(ROOT, "src", "compare", "magma.inc")) as f:
        return [tuple(map(int, t)) for t in re.findall(r"\{(\d+),\s*(\d+),\s*(\d+)\}", f.read())]


def text7(s, n):
    """The pictures' blob from its text (report_html.c): 7 bits an ASCII character; NUL, CR
    and '<' with the 7 bits after them as the character U+0100 + 128 i + next."""
    esc = [0, 13, 60]
    out, acc, bits = bytearray(), 0, 0
    for ch in s:
        c = ord(ch)
        assert c < 128 or 0x100 <= c < 0x280, c
        for v in ([c] if c < 128 else [esc[(c - 0x100) >> 7], c & 127]):
            acc = (acc << 7 | v) & 0x7FFF
            bits += 7
            if bits >= 8:
                bits -= 8
                out.append(acc >> bits & 255)
    assert len(out) in (n, n + 1)
    return bytes(out[:n])


def test_pictures_are_the_frames_exactly(driver, reports):
    """The test picture the page rebuilds (reference + delta) is B's frame, pixel for pixel;
    the difference map it draws is the heat map of A and B byte for byte (black exactly
    where they agree and in the ignored rectangle); its FLIP map is the magma colour of the
    report's FLIP indices, whose mean is the JSON's FLIP."""
    from PIL import Image
    import base64
    import io
    import json as js
    load(driver, reports["html"])
    d = reports["dir"]
    pictures = js.loads(driver.execute_script("return document.getElementById('tp-pictures').textContent"))
    with open(reports["html"], "rb") as f:
        page = f.read()
    text = page.split(b'id="tp-blob">', 1)[1].split(b"</script>", 1)[0]
    assert not set(text) & {0, 13, 60}, "no NUL, CR or '<' (an HTML parser would change them)"
    blob = text7(text.decode("utf-8"), pictures["blob_bytes"])
    sent = {p["index"]: p for p in pictures["frames"]}
    assert any("pic_from" in p for p in sent.values()), "a picture made from the previous frame's"
    colours = magma()
    assert len(colours) == 256 and pictures["magma"] == [v for c in colours for v in c]
    shown = [int(o.get_attribute("value")) for o in driver.find_elements(By.CSS_SELECTOR, "#pick option")
             if o.is_enabled()]
    assert shown
    for index in shown:
        driver.execute_script(f"const s = document.getElementById('pick'); s.value = '{index}'; "
                              "s.dispatchEvent(new Event('change'))")
        got = {}
        for pane in ("ref", "test", "diff", "flip"):
            src = driver.find_element(By.CSS_SELECTOR, f".pane.{pane} img").get_attribute("src")
            head, b64 = src.split(",", 1)
            got[pane] = Image.open(io.BytesIO(base64.b64decode(b64))).convert("RGB")
        a = Image.open(f"{d}/a/{index:02d}.png").convert("RGB")
        b = Image.open(f"{d}/b/{index:02d}.png").convert("RGB")
        assert got["ref"].tobytes() == a.tobytes(), index
        assert got["test"].tobytes() == b.tobytes(), index
        frame = next(f for f in reports["json"]["frames"] if f["index"] == index)
        lut = heat_lut(frame["max_diff"])
        pa, pb, pd = a.load(), b.load(), got["diff"].load()
        for y in range(a.height):
            for x in range(a.width):
                dm = 0 if x < 20 and y < 12 else max(abs(u - v) for u, v in zip(pa[x, y], pb[x, y]))
                assert pd[x, y] == lut[dm], (index, x, y, pd[x, y], dm)
        o, n = sent[index]["flip"]
        grey = Image.open(io.BytesIO(blob[o:o + n])).convert("RGB")
        assert [colours[g] for g, _, _ in grey.getdata()] == list(got["flip"].getdata()), index
        idx = [g for g, _, _ in grey.getdata()]
        assert all(g == 0 for k, g in enumerate(idx) if k % a.width < 20 and k // a.width < 12)
        compared = a.width * a.height - 20 * 12
        assert abs(sum(idx) / 255 / compared - frame["flip"]) <= 0.5 / 255, (index, frame["flip"])


def test_pictures_rebuilt_from_b_are_exact(driver, reports):
    """When B is the side the report carries (and A = B - delta), the page's A, B and
    difference map are still the frames' pixels exactly."""
    from PIL import Image
    import base64
    import io
    import json as js
    load(driver, reports["swap"])
    assert driver.get_log("browser") == []
    d = reports["dir"]
    pictures = js.loads(driver.execute_script("return document.getElementById('tp-pictures').textContent"))
    sides = {p["index"]: p["pic_side"] for p in pictures["frames"]}
    assert "b" in sides.values(), sides
    shown = [int(o.get_attribute("value")) for o in driver.find_elements(By.CSS_SELECTOR, "#pick option")
             if o.is_enabled()]
    assert sorted(shown) == sorted(sides)
    for index in shown:
        driver.execute_script(f"const s = document.getElementById('pick'); s.value = '{index}'; "
                              "s.dispatchEvent(new Event('change'))")
        got = {}
        for pane in ("ref", "test", "diff"):
            src = driver.find_element(By.CSS_SELECTOR, f".pane.{pane} img").get_attribute("src")
            got[pane] = Image.open(io.BytesIO(base64.b64decode(src.split(",", 1)[1]))).convert("RGB")
        a = Image.open(f"{d}/b/{index:02d}.png").convert("RGB")  # swapped: A is b/
        b = Image.open(f"{d}/a/{index:02d}.png").convert("RGB")
        assert got["ref"].tobytes() == a.tobytes(), index
        assert got["test"].tobytes() == b.tobytes(), index
        frame = next(f for f in reports["swap_json"]["frames"] if f["index"] == index)
        lut = heat_lut(frame["max_diff"])
        want = [lut[max(abs(u - v) for u, v in zip(pa, pb))] for pa, pb in zip(a.getdata(), b.getdata())]
        assert list(got["diff"].getdata()) == want, index


def test_frames_of_other_sizes_show_both_sides(driver, reports):
    load(driver, reports["size"])
    assert driver.find_element(By.ID, "verdict").text == "FAIL"
    imgs = driver.find_elements(By.CSS_SELECTOR, ".pane img")
    sizes = [driver.execute_script("return [arguments[0].naturalWidth, arguments[0].naturalHeight]", i) for i in imgs]
    assert sizes == [[96, 64], [48, 32]], sizes
    assert "A is 96×64, B is 48×32" in driver.find_element(By.ID, "frame-info").text
    assert not driver.find_element(By.CSS_SELECTOR, "[data-mode=slider]").is_enabled()
    note = driver.find_element(By.ID, "unpictured").text
    assert "--html-frames 8" in note, note
