"""Headless Chromium on the console, for the browser tests: the driver and what every test does
with it (wait for an element or a condition, sign in, save a numbered screenshot).

  browser = ConsoleBrowser("http://127.0.0.1:PORT/", screenshots_dir, "journey")
  browser.login("alice", password_file, tenant="studio-a")
"""
import os
import sys
import time

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait


class ConsoleBrowser:
    def __init__(self, url, screenshots, prefix, downloads=None):
        self.base = url if url.endswith("/") else url + "/"
        self.screenshots = screenshots
        self.prefix = prefix
        self.shots = []
        # The directory is shared with the other browser tests: only this test's files go.
        os.makedirs(screenshots, exist_ok=True)
        for old in os.listdir(screenshots):
            if old.startswith(prefix + "-"):
                os.remove(os.path.join(screenshots, old))
        options = webdriver.ChromeOptions()
        for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1000",
                     "--disable-gpu"):
            options.add_argument(flag)
        options.binary_location = "/usr/bin/chromium"
        if downloads:
            options.add_experimental_option("prefs", {"download.default_directory": downloads,
                                                      "download.prompt_for_download": False})
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        service = webdriver.ChromeService(executable_path="/usr/bin/chromedriver") \
            if hasattr(webdriver, "ChromeService") else None
        self.driver = webdriver.Chrome(options=options, service=service) if service \
            else webdriver.Chrome(options=options)
        self._log = []  # the browser's log so far (reading it from the driver empties it)
        self._network_changes = 0  # ERR_NETWORK_CHANGED entries already answered by a reload
        self.driver.set_page_load_timeout(60)
        self.driver.set_script_timeout(60)
        if downloads:
            # Headless Chromium downloads only where it is told to.
            self.driver.execute_cdp_cmd("Browser.setDownloadBehavior",
                                        {"behavior": "allow", "downloadPath": downloads})

    def page_error(self):
        """What the page says went wrong, for a failure's message; a test knows where to look."""
        return ""

    def step(self, text):
        print(f"[{time.strftime('%H:%M:%S')}] {text}", flush=True)

    def browser_log(self):
        """Every entry of the browser's log so far."""
        self._log += self.driver.get_log("browser")
        return self._log

    def _until(self, wait):
        """wait() once more after a reload when the page lost requests to a network change.
        Chromium drops what is in flight whenever the host's interfaces change (a workload's
        veth, on this machine or in a test beside this one: ERR_NETWORK_CHANGED); a user
        reloads, and so does the test, once per change."""
        try:
            return wait()
        except TimeoutException:
            changes = sum("ERR_NETWORK_CHANGED" in e["message"] for e in self.browser_log())
            if changes == self._network_changes:
                raise
            self._network_changes = changes
            print(f"[{time.strftime('%H:%M:%S')}] the network changed under the page: reloading",
                  flush=True)
            self.driver.refresh()
            return wait()

    def wait(self, css, timeout=20, visible=True):
        condition = EC.visibility_of_element_located if visible else EC.presence_of_element_located
        try:
            return self._until(lambda: WebDriverWait(self.driver, timeout).until(
                condition((By.CSS_SELECTOR, css))))
        except TimeoutException:
            raise AssertionError(f"no {css} after {timeout} s on {self.driver.current_url}"
                                 f"{self._says()}") from None

    def until(self, what, predicate, timeout=20, poll=0.5):
        try:
            # Pages redraw as the state changes: an element read a moment ago may be gone.
            return self._until(lambda: WebDriverWait(
                self.driver, timeout, poll_frequency=poll,
                ignored_exceptions=[StaleElementReferenceException]).until(lambda d: predicate()))
        except TimeoutException:
            raise AssertionError(f"{what}: not within {timeout} s{self._says()}") from None

    def wait_text(self, css, text, timeout=20):
        try:
            self._until(lambda: WebDriverWait(self.driver, timeout).until(
                EC.text_to_be_present_in_element((By.CSS_SELECTOR, css), text)))
        except TimeoutException:
            found = [e.text for e in self.driver.find_elements(By.CSS_SELECTOR, css)]
            raise AssertionError(f"{css} never showed {text!r} in {timeout} s; it shows {found}") from None
        return self.driver.find_element(By.CSS_SELECTOR, css)

    def fill(self, name, value):
        field = self.wait(f"#f-{name}")
        field.clear()
        field.send_keys(value)

    def go(self, route):
        self.driver.get(self.base + "#" + route)

    def shot(self, name):
        path = os.path.join(self.screenshots, f"{self.prefix}-{len(self.shots) + 1:02d}-{name}.png")
        time.sleep(0.3)  # let transitions and the toast settle
        self.driver.save_screenshot(path)
        self.shots.append(path)
        print(f"screenshot: {path}", flush=True)

    def login(self, user, password_file, tenant=None):
        """Signs in; a user in several tenants picks `tenant` (or the first one offered)."""
        with open(password_file) as f:
            password = f.read().strip()
        self.go("/login")
        self.fill("user_name", user)
        self.fill("password", password)
        self.driver.find_element(By.CSS_SELECTOR, "form button[type=submit]").click()
        try:
            WebDriverWait(self.driver, 3).until(
                lambda d: d.find_elements(By.CSS_SELECTOR, ".tenant-choice, .topbar .user"))
        except TimeoutException:
            pass
        choices = self.driver.find_elements(By.CSS_SELECTOR, ".tenant-choice")
        if choices:
            self.shot("login-choose-tenant")
            if tenant:
                self.wait(f".tenant-choice[data-tenant='{tenant}']").click()
            else:
                choices[0].click()
        self.wait_text(".topbar .user", user)

    def quit(self):
        self.driver.quit()

    def _says(self):
        error = self.page_error()
        return f"; the page says: {error}" if error else ""


def run_test(test):
    """Runs test.run(); on a failed assertion, a screenshot, the browser's log and FAIL: why.
    The exit code for sys.exit."""
    try:
        test.run()
    except AssertionError as failure:
        test.shot("failure")
        for entry in test.browser_log()[-30:]:
            print(f"browser: {entry['level']} {entry['message']}", file=sys.stderr)
        print(f"FAIL: {failure}", file=sys.stderr)
        return 1
    finally:
        test.quit()
    return 0
