#!/usr/bin/env python3
"""Headless Chromium runs a FatFractal-style web app served by Roost itself.

Roost serves Tests/browser/fatfractal (--public-dir) under the app prefix /hoodyoodoo; this loads
http://127.0.0.1:PORT/hoodyoodoo/index.html through selenium, waits for the page's flow to finish
and prints window.outcome as JSON. Exit status 3 means the browser or selenium is missing (the
caller skips, printing the reason); anything else non-zero is a failure.
"""
import argparse
import json
import shutil
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--page", required=True)
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

    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                 "--no-first-run", "--disable-extensions"):
        options.add_argument(flag)
    chrome = webdriver.Chrome(service=Service(executable_path=driver), options=options)
    try:
        chrome.get(args.page)
        outcome = WebDriverWait(chrome, 60).until(lambda c: c.execute_script("return window.outcome || null"))
        print(json.dumps(outcome))
    finally:
        chrome.quit()
    return 0


if __name__ == "__main__":
    sys.exit(main())
