"""Another site's page, open in the same Chromium as the preview, gets nothing from it
(docs/preview.md "The secret"): its <img> of a frame fails, its form post and its
no-cors fetch to /edit write nothing, even after the preview's page has been opened and
holds the cookie."""
import http.server
import os
import threading

from pvserver import Preview
from test_page import body, open_page, wait

EVIL = """<!doctype html><html><body>
<iframe name="sink" id="sink"></iframe>
<form id="form" method="post" action="{base}/edit" enctype="text/plain" target="sink">
<input name='{{"version":"{version}","ops":[{{"op":"replace","path":"/seed","value":7}}],"x":"' value='"}}'>
</form>
<script>
const done = (k, v) => {{ document.body.dataset[k] = v; }};
for (const [id, src] of [['img', '/frame/5.png'], ['img2', '/frame/6.png?mode=height']]) {{
  const im = new Image();
  im.onload = () => done(id, 'loaded ' + im.naturalWidth);
  im.onerror = () => done(id, 'error');
  im.src = '{base}' + src;
  document.body.append(im);
}}
document.getElementById('form').submit();
fetch('{base}/edit', {{method: 'POST', mode: 'no-cors', credentials: 'include',
  headers: {{'Content-Type': 'text/plain'}},
  body: JSON.stringify({{version: '{version}', ops: [{{op: 'replace', path: '/seed', value: 8}}]}})}})
  .then(() => done('fetch', 'sent'), () => done('fetch', 'failed'));
</script></body></html>"""


class Site(http.server.BaseHTTPRequestHandler):
    page = b""

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(Site.page)

    def log_message(self, *a):
        pass


def test_another_sites_page_gets_nothing(browser):
    p = Preview("pond.json")
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Site)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        before = p.text()
        open_page(browser, p)  # the browser now holds the preview's cookie
        version = p.scene_version()
        # "localhost" is another site than "127.0.0.1" (ports do not make sites)
        Site.page = EVIL.format(base="http://127.0.0.1:%d" % p.port, version=version).encode()
        browser.get("http://localhost:%d/" % srv.server_address[1])
        wait(browser, lambda: body(browser, "img") and body(browser, "img2")
             and body(browser, "fetch"), what="the other site's requests")
        assert body(browser, "img") == "error" and body(browser, "img2") == "error"
        # the form's answer has come once the frame shows another origin's document
        wait(browser, lambda: browser.execute_script(
            "try { document.getElementById('sink').contentWindow.document.body; return false; }"
            " catch (e) { return true; }"), what="the form post's answer")
        # the same frame from the preview's own page loads (the cookie is its to send)
        open_page(browser, p)
        assert browser.execute_async_script("""
            fetch('/frame/5.png').then((r) => arguments[0](r.status));""") == 200
        assert p.text() == before  # neither the form nor the fetch wrote
        assert p.status()["generation"] == 1
    finally:
        srv.shutdown()
        code, err = p.stop()
    assert code == 0, err
