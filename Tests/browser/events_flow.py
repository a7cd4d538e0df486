#!/usr/bin/env python3
"""Headless Chromium's EventSource receives Roost's realtime events, across a server restart.

Starts `roost serve` (the binary given) with the page's folder as --public-dir, loads the page,
creates three posts, restarts the server on the same port and data folder, creates two more at
once (before the browser reconnects: it must get them through Last-Event-ID), and prints as JSON
the posts created, the events the page received and how often its stream opened. Exit status 3
means the browser or selenium is missing (the caller skips, printing the reason).
"""
import argparse, json, os, shutil, signal, socket, subprocess, sys, time, urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(binary, port, data, site, app, log):
    proc = subprocess.Popen([binary, "serve", "--port", str(port), "--data-dir", data, "--public-dir", site,
                             "--app", app, "--access-log", "off"], stdout=log, stderr=log)
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2).read()
            return proc
        except OSError:
            time.sleep(0.1)
    raise SystemExit("roost did not start")


def create(port, n):
    request = urllib.request.Request(f"http://127.0.0.1:{port}/ff/resources/Post", data=json.dumps({"n": n}).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
    return json.loads(urllib.request.urlopen(request, timeout=10).read())["guid"]


def wait(chrome, script, predicate, seconds=30):
    deadline = time.time() + seconds
    while time.time() < deadline:
        value = chrome.execute_script(script)
        if predicate(value):
            return value
        time.sleep(0.1)
    return chrome.execute_script(script)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--roost", required=True)
    parser.add_argument("--site", required=True)
    parser.add_argument("--data", required=True)
    args = parser.parse_args()
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not browser or not driver:
        print("chromium or chromedriver is not installed (apt-get install chromium chromium-driver)")
        return 3
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        print("python's selenium is not installed (pip install selenium)")
        return 3

    app = os.path.join(args.data + "-app.json")
    with open(app, "w") as f:
        json.dump({"collections": {"Post": {"rules": {"create": "public", "read": "public", "list": "public"}}}}, f)
    port = free_port()
    log = open(args.data + ".log", "w")
    proc = start(args.roost, port, args.data, args.site, app, log)
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                 "--no-first-run", "--disable-extensions"):
        options.add_argument(flag)
    chrome = webdriver.Chrome(service=Service(executable_path=driver), options=options)
    created = []
    try:
        chrome.get(f"http://127.0.0.1:{port}/index.html")
        wait(chrome, "return window.opens", lambda v: v >= 1)
        created += [create(port, n) for n in range(3)]
        wait(chrome, "return window.received.length", lambda v: v >= 3)
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
        proc = start(args.roost, port, args.data, args.site, app, log)
        created += [create(port, n) for n in range(3, 5)]
        wait(chrome, "return window.received.length", lambda v: v >= 5)
        print(json.dumps({"created": created, "received": chrome.execute_script("return window.received"),
                          "opens": chrome.execute_script("return window.opens")}))
    finally:
        chrome.quit()
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
