#!/usr/bin/env python3
"""Headless Chromium drives Roost's admin dashboard (/_/) as an operator would.

Logs in, reads the collections, pages through Note by cursor (next, next, previous), meets a
query error and a good filter, opens an object whose text is HTML, edits an object, meets a
conflict made behind its back, deletes an object, revokes a user's session, is refused as a
non-administrator, and tries to frame the dashboard from another origin. Prints what it saw as
one JSON object. Exit status 3 means the browser or selenium is missing (the caller skips,
printing the reason); anything else non-zero is a failure.
"""
import argparse
import http.server
import json
import shutil
import sys
import threading
import traceback
import urllib.request


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--roost", required=True)
    parser.add_argument("--admin", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--user", required=True, help="the guid of the user whose session is revoked")
    parser.add_argument("--user-name", required=True)
    parser.add_argument("--user-password", required=True)
    parser.add_argument("--other", required=True, help="the guid of a user to promote and deactivate")
    parser.add_argument("--page-port", type=int, required=True)
    parser.add_argument("--screenshots", help="a folder to save the main pages' screenshots in (PNG)")
    args = parser.parse_args()

    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not browser or not driver:
        print("chromium or chromedriver is not installed (apt-get install chromium chromium-driver)")
        return 3
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        from selenium.common.exceptions import StaleElementReferenceException
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import WebDriverWait
    except ImportError:
        print("python's selenium is not installed (pip install selenium)")
        return 3

    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                 "--no-first-run", "--disable-extensions", "--window-size=1280,800"):
        options.add_argument(flag)
    chrome = webdriver.Chrome(service=Service(executable_path=driver), options=options)
    framing = serve_framing_page(args.page_port, args.roost)
    out = {}

    def wait(condition, timeout=30):
        # A page re-rendered between finding an element and reading it is read again.
        return WebDriverWait(chrome, timeout, ignored_exceptions=(StaleElementReferenceException,)).until(condition)

    def css(selector):
        return chrome.find_elements(By.CSS_SELECTOR, selector)

    def present(selector):
        return wait(lambda c: css(selector) or None)[0]

    def row_guids():
        return [row.get_attribute("data-guid") for row in css("table[data-test=objects] tbody tr")]

    def snap(name):
        if args.screenshots:
            chrome.save_screenshot("%s/dashboard-%s.png" % (args.screenshots, name))

    def log_in(name, password):
        present("input[name=userName]").send_keys(name)
        css("input[name=password]")[0].send_keys(password)
        css("form.login button[type=submit]")[0].click()

    def edit(text):
        present("button[data-test=edit]").click()
        editor = present("textarea[data-test=editor]")
        editor.clear()
        editor.send_keys(text)
        css("button[data-test=save]")[0].click()

    try:
        chrome.get(args.roost + "/_/")
        log_in(args.admin, args.password)
        present("table[data-test=collections]")
        out["who"] = present("[data-test=who]").text
        out["tokenInStorage"] = chrome.execute_script(
            "return sessionStorage.getItem('roost.dashboard.token') !== null")
        out["cookies"] = chrome.execute_script("return document.cookie")
        out["noteCount"] = present("tr[data-collection=Note] td[data-test=count]").text

        # Browse Note by cursor: three pages forward, one back.
        css("tr[data-collection=Note] a")[0].click()
        present("table[data-test=objects]")
        snap("objects")
        pages = [row_guids()]
        for _ in range(2):
            before = pages[-1][0]
            present("button[data-test=next]").click()
            wait(lambda c: row_guids() and row_guids()[0] != before or None)
            pages.append(row_guids())
        out["pageSizes"] = [len(page) for page in pages]
        out["distinct"] = len(set(sum(pages, [])))
        out["lastHasNext"] = not css("button[data-test=next]")[0].get_property("disabled")
        out["imagesOnLastPage"] = chrome.execute_script("return document.querySelectorAll('main img').length")
        present("button[data-test=previous]").click()
        wait(lambda c: row_guids() == pages[1] or None)
        out["previousIsSecond"] = row_guids() == pages[1]
        out["urlAfterPrevious"] = chrome.current_url.replace(args.roost, "").split("?")[0]

        # A query error shows its column; a good filter narrows the page.
        search = present("input[data-test=filter]")
        search.clear()
        search.send_keys("n gt ")
        search.submit()
        error = present("[data-test=query-error]")
        out["queryError"] = error.text
        out["caret"] = present("[data-test=caret]").text
        snap("query-error")
        search = present("input[data-test=filter]")
        search.clear()
        search.send_keys("n lt 3")
        search.submit()
        wait(lambda c: css("table[data-test=objects]") and len(row_guids()) == 3 or None)
        out["filtered"] = len(row_guids())

        # An object whose text is HTML shows as text.
        chrome.get(args.roost + "/_/collections/Note/xss")
        shown = present("pre[data-test=json]")
        out["xssText"] = shown.text
        out["xssImages"] = chrome.execute_script("return document.querySelectorAll('main img').length")
        out["xssRan"] = chrome.execute_script("return window.pwned === 1")
        out["metadataGuid"] = present("dd[data-field=guid]").text

        # Edit, then meet a change made meanwhile by someone else.
        chrome.get(args.roost + "/_/collections/Note/editme")
        present("pre[data-test=json]")
        edit('{"text": "edited in the browser"}')
        present("[data-test=saved]")
        out["afterEdit"] = present("pre[data-test=json]").text
        token = chrome.execute_script("return sessionStorage.getItem('roost.dashboard.token')")
        behind = urllib.request.Request(
            args.roost + "/ff/resources/Note/editme", method="PATCH",
            data=json.dumps({"text": "changed meanwhile"}).encode(),
            headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
        out["behindStatus"] = urllib.request.urlopen(behind).status
        edit('{"text": "mine"}')
        out["conflict"] = present("[data-test=conflict]").text
        snap("conflict")

        # Delete: the button asks once more.
        chrome.get(args.roost + "/_/collections/Note/gone")
        remove = present("button[data-test=delete]")
        remove.click()
        out["deleteAsks"] = remove.text
        remove.click()
        wait(lambda c: c.current_url.endswith("/_/collections/Note") or None)
        present("table[data-test=objects]")
        out["deletedGone"] = "gone" not in row_guids()

        # A new object, whose reference is a link to the object it names.
        present("button[data-test=new]").click()
        editor = present("textarea[data-test=new-editor]")
        editor.clear()
        editor.send_keys('{"text": "made in the browser", "see": {"ffUrl": "/ff/resources/Note/editme"}}')
        css("button[data-test=create]")[0].click()
        present("ul[data-test=references] a").click()
        wait(lambda c: c.current_url.endswith("/_/collections/Note/editme") or None)
        # The address changes first; the page follows once the object is read.
        out["followedReference"] = wait(
            lambda c: present("dd[data-field=guid]").text == "editme" and "editme" or None)

        # A blob member: previewed from its bytes, fetched with the token.
        chrome.get(args.roost + "/_/collections/Note/picture")
        preview = present("img[data-test=preview]")
        out["previewWidth"] = wait(lambda c: preview.get_property("naturalWidth") or None)
        out["previewSource"] = preview.get_attribute("src")[:5]

        # Promote a user, then deactivate them.
        chrome.get(args.roost + "/_/users/" + args.other)
        promote = present("button[data-test=admin]")
        promote.click()
        promote.click()
        wait(lambda c: "administrator" in present("[data-test=standing]").text or None)
        deactivate = present("button[data-test=active]")
        out["deactivateAsks"] = deactivate.text
        deactivate.click()
        deactivate.click()
        wait(lambda c: "deactivated" in present("[data-test=standing]").text or None)
        out["otherStanding"] = present("[data-test=standing]").text

        # A user's sessions, one revoked.
        chrome.get(args.roost + "/_/users")
        present("table[data-test=users]")
        present("tr[data-guid='%s'] a" % args.user).click()
        present("table[data-test=sessions]")
        out["sessionsBefore"] = len(css("table[data-test=sessions] tbody tr"))
        snap("sessions")
        revoke = present("button[data-test=revoke]")
        revoke.click()
        revoke.click()
        present("[data-test=revoked]")
        # The list is read again after the message: wait for the answer it gets.
        present("[data-test=no-sessions]")
        out["sessionsAfter"] = len(css("table[data-test=sessions] tbody tr"))

        # Log out; a user who is not an administrator gets no dashboard.
        present("[data-test=logout]").click()
        log_in(args.user_name, args.user_password)
        out["nonAdmin"] = present("[data-test=login-error]").text
        out["nonAdminToken"] = chrome.execute_script(
            "return sessionStorage.getItem('roost.dashboard.token')")

        # Another origin's page cannot frame the dashboard.
        chrome.get("http://127.0.0.1:%d/frame.html" % args.page_port)
        frame = present("iframe")
        chrome.switch_to.frame(frame)
        out["framedForm"] = len(css("form.login"))
        chrome.switch_to.default_content()
        print(json.dumps(out))
    except Exception as error:  # report what was seen so far, for the Swift side's message
        out["error"] = "%s: %s" % (type(error).__name__, str(error).splitlines()[0] if str(error) else "")
        out["at"] = [frame.lineno for frame in traceback.extract_tb(error.__traceback__)]
        out["url"] = chrome.current_url
        out["main"] = chrome.execute_script(
            "var m = document.getElementById('main'); return m ? m.textContent : document.title")
        print(json.dumps(out))
    finally:
        chrome.quit()
        framing.shutdown()
    return 0


def serve_framing_page(port, roost):
    page = ('<!doctype html><html><body><iframe src="%s/_/login" width="600" height="400"></iframe>'
            '</body></html>' % roost).encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


if __name__ == "__main__":
    sys.exit(main())
