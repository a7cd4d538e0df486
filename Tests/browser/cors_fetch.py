#!/usr/bin/env python3
"""Headless Chromium calls Roost with fetch from a page on another loopback origin.

Serves a page on 127.0.0.1:PAGE_PORT (and the same page as localhost:PAGE_PORT, an origin Roost
does not list), loads each in Chromium through selenium, and prints what the page saw as one JSON
object: {"listed": {...}, "unlisted": {...}}. Exit status 3 means the browser or selenium is
missing (the caller skips, printing the reason); anything else non-zero is a failure.
"""
import argparse
import http.server
import json
import shutil
import sys
import threading

PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>cors</title></head><body><script>
const ROOST = %(roost)s, TOKEN = %(token)s, GUID = %(guid)s;
async function call(method, path, headers, body) {
  const response = await fetch(ROOST + path, {method, headers, body});
  let json = null;
  try { json = await response.json(); } catch (e) {}
  return {status: response.status, etag: response.headers.get("ETag"),
          location: response.headers.get("Location"), requestId: response.headers.get("X-Request-Id"),
          body: json};
}
async function run() {
  const out = {};
  out.get = await call("GET", "/ff/resources/Note/" + GUID, {"X-Token": TOKEN});
  out.post = await call("POST", "/ff/resources/Note",
      {"X-Token": TOKEN, "Content-Type": "application/json"}, JSON.stringify({text: "from the browser"}));
  out.patch = await call("PATCH", "/ff/resources/Note/" + GUID,
      {"X-Token": TOKEN, "Content-Type": "application/json", "If-Match": out.get.etag},
      JSON.stringify({text: "patched"}));
  out.stale = await call("PATCH", "/ff/resources/Note/" + GUID,
      {"X-Token": TOKEN, "Content-Type": "application/json", "If-Match": out.get.etag},
      JSON.stringify({text: "again"}));
  return out;
}
run().then(out => { window.outcome = out; }, error => { window.outcome = {error: String(error)}; });
</script></body></html>"""


def serve_page(port, page):
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = page.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--roost", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--guid", required=True)
    parser.add_argument("--page-port", type=int, required=True)
    args = parser.parse_args()

    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not browser or not driver:
        print("chromium or chromedriver is not installed (apt-get install chromium chromium-driver)")
        return 3
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        from selenium.webdriver.support.ui import WebDriverWait
    except ImportError:
        print("python's selenium is not installed (pip install selenium)")
        return 3

    page = PAGE % {"roost": json.dumps(args.roost), "token": json.dumps(args.token), "guid": json.dumps(args.guid)}
    server = serve_page(args.page_port, page)
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                 "--no-first-run", "--disable-extensions"):
        options.add_argument(flag)
    chrome = webdriver.Chrome(service=Service(executable_path=driver), options=options)
    try:
        results = {}
        for name, host in (("listed", "127.0.0.1"), ("unlisted", "localhost")):
            chrome.get("http://%s:%d/app.html" % (host, args.page_port))
            results[name] = WebDriverWait(chrome, 30).until(
                lambda c: c.execute_script("return window.outcome || null"))
        print(json.dumps(results))
    finally:
        chrome.quit()
        server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
