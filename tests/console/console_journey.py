#!/usr/bin/python3
"""The seed's journey through the web console in headless Chromium (Selenium).

A tenant user logs in, creates a storage (first with a bad id: the error shows next to the
field), an accessor (its secret shown once) and resizes the storage; creates a Jupyter instance,
watches it reach RUNNING in the list, opens its detail page, clicks Open and sees Jupyter's page
in the new tab, sees its logs and a metrics chart, runs a command in its Terminal tab, stops it and sees its cost, deletes it, gets
"not found" for another tenant's instance id, creates an API key and sees the members; then a
platform admin creates stock for a spec, cordons a node and sees the specs and tenants.
Each page is saved as a PNG in --screenshots, and the paths are printed.

  console_journey.py --url http://127.0.0.1:PORT/ --user alice --password-file F \
      --admin-password-file F --other-instance ID --screenshots DIR
"""
import argparse
import os
import sys

from console_browser import ConsoleBrowser
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select, WebDriverWait

# Renews the session as api.js does, from the page; answers the HTTP status.
RENEW_SESSION = """
const done = arguments[arguments.length - 1];
const csrf = (document.cookie.split('; ').find((c) => c.startsWith('gpuaas_csrf=')) || '').slice(12);
fetch('/api/session:refresh', {
  method: 'POST', headers: {'Content-Type': 'application/json', 'X-CSRF-Token': csrf}, body: '{}',
}).then((r) => done(r.status), (e) => done(String(e)));
"""


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--url", required=True, help="the console's URL")
    p.add_argument("--user", default="alice")
    p.add_argument("--password-file", required=True)
    p.add_argument("--admin-user", default="admin")
    p.add_argument("--admin-password-file", required=True)
    p.add_argument("--spec", default="h100.1x", help="the spec the instance runs on")
    p.add_argument("--image", default="jupyter", help="the catalog image the instance runs")
    p.add_argument("--storage-spec", default="standard-10g")
    p.add_argument("--resize-spec", default="standard-100g", help="the bigger storage spec to resize to")
    p.add_argument("--stock-spec", default="a100.1x", help="the spec the admin places stock of")
    p.add_argument("--cordon-node", default="sim-t4-1")
    p.add_argument("--other-instance", required=True, help="an instance id of another tenant")
    p.add_argument("--tenant", default="studio-a", help="the tenant the user works in")
    p.add_argument("--other-tenant", help="another tenant of the user (a viewer there) that holds "
                   "--other-instance: the user switches to it and back")
    p.add_argument("--screenshots", required=True, help="directory for the PNGs")
    p.add_argument("--run-timeout", type=float, default=300, help="seconds to reach RUNNING")
    return p.parse_args()


class Journey(ConsoleBrowser):
    def __init__(self, args):
        super().__init__(args.url, args.screenshots, "journey")
        self.args = args

    # --- helpers -------------------------------------------------------------------------------
    def click(self, css):
        self.wait(css).click()

    def click_button(self, text, scope="main"):
        xpath = f"//{scope}//button[normalize-space()='{text}'] | //{scope}//a[normalize-space()='{text}']"
        try:
            button = WebDriverWait(self.driver, 20).until(EC.element_to_be_clickable((By.XPATH, xpath)))
        except TimeoutException:
            raise AssertionError(f"no button {text!r} on {self.driver.current_url}") from None
        button.click()

    def choose(self, name, value):
        Select(self.wait(f"#f-{name}")).select_by_value(value)

    def state_of(self, instance_id):
        return self.driver.execute_script(
            "const b = document.querySelector(`tr[data-id='${arguments[0]}'] .badge`);"
            "return b ? b.dataset.state : null;", instance_id)

    # --- the journey ---------------------------------------------------------------------------
    def tenant_part(self):
        a = self.args
        self.step("login page")
        self.go("/login")
        self.wait("#f-user_name")
        self.shot("login")
        self.step(f"log in as {a.user}")
        self.login(a.user, a.password_file, a.tenant)
        self.wait_text("main h1", "Instances")
        self.shot("instances-empty")
        # What the console does on a 401 once the 15-minute access token expires: the refresh
        # cookie must reach /api/session:refresh.
        self.step("the session renews")
        status = self.driver.execute_async_script(RENEW_SESSION)
        assert status == 200, f"POST /api/session:refresh answered {status}"
        self.wait_text("main h1", "Instances")

        self.step("create a storage")
        self.go("/storages")
        self.click_button("New storage")
        self.fill("name", "Notebooks")
        self.fill("storage_id", "Bad_Id!")
        self.choose("spec_name", a.storage_spec)
        self.click_button("Create storage")
        # The server's INVALID_ARGUMENT names the field: the form shows it next to that field.
        self.wait_text("#e-storage_id", "storage_id")
        self.shot("storage-new-field-error")
        self.fill("storage_id", "notebooks")
        self.click_button("Create storage")
        self.wait_text("main h1", "Notebooks")
        self.until("the storage turns READY", lambda: self.state_in_header() == "READY" or self.reload_header())
        self.shot("storage-detail")
        self.driver.find_element(By.CSS_SELECTOR, "[data-tab=accessors]").click()
        self.click_button("New accessor")
        self.fill("description", "console test")
        self.click_button("Create accessor")
        secret = self.wait(".secret-value")
        assert self.driver.find_elements(By.CSS_SELECTOR, ".secret-row")[1].text, "no secret shown"
        self.shot("accessor-secret")
        assert secret.text.startswith("GK"), f"access key id {secret.text!r}"
        self.click_button("Done")

        self.step("resize it")
        self.click_button("Resize")
        self.choose("spec_name", a.resize_spec)
        self.click("main form button[type=submit]")
        self.driver.find_element(By.CSS_SELECTOR, "[data-tab=overview]").click()
        self.wait_text("main .facts", a.resize_spec)

        self.step("create a Jupyter instance")
        self.go("/instances/new")
        self.fill("name", "nb-1")
        assert self.wait("#f-instance_id").get_attribute("value") == "nb-1", "the id does not follow the name"
        self.choose("spec_name", a.spec)
        image = Select(self.wait("#f-image"))
        jupyter = [o.get_attribute("value") for o in image.options
                   if o.get_attribute("value").split(":")[0] == a.image]
        assert jupyter, f"no {a.image} in the image list"
        image.select_by_value(jupyter[0])
        self.choose("storage_id", "notebooks")
        self.wait(".quota")
        self.shot("instance-new")
        self.click_button("Create instance")
        self.wait_text("main h1", "nb-1")

        self.step("watch it reach RUNNING in the list")
        self.go("/instances")
        self.wait("tr[data-id='nb-1']")
        self.until("nb-1 RUNNING in the list (live)", lambda: self.running("nb-1"), a.run_timeout)
        self.shot("instances-running")

        self.step("open its detail page and Open it")
        self.driver.find_element(By.CSS_SELECTOR, "tr[data-id='nb-1'] a").click()
        self.wait_text("main h1", "nb-1")
        self.shot("instance-detail")
        main_window = self.driver.current_window_handle
        self.until("Open is enabled", lambda: self.wait("#open").is_enabled())
        self.click("#open")
        self.until("a new tab", lambda: len(self.driver.window_handles) > 1)
        tab = [w for w in self.driver.window_handles if w != main_window][0]
        self.driver.switch_to.window(tab)
        self.until("Jupyter's page in the new tab",
                   lambda: "jupyter" in self.driver.page_source.lower() and self.driver.current_url.startswith("http"),
                   60)
        self.shot("jupyter")
        print(f"the new tab: {self.driver.current_url} ({self.driver.title})", flush=True)
        self.driver.close()
        self.driver.switch_to.window(main_window)

        self.step("metrics chart and logs")
        self.wait(".charts svg.chart", timeout=30)
        self.until("a line over time in the utilization chart (two readings)",
                   lambda: self.driver.find_elements(By.CSS_SELECTOR, ".charts svg polyline"), 90)
        self.shot("instance-metrics")
        self.driver.find_element(By.CSS_SELECTOR, "[data-tab=logs]").click()
        self.until("log output", lambda: self.wait("pre.logs").text.strip(), 60)
        self.shot("instance-logs")

        self.step("a terminal inside it: type a command, read its output")
        self.driver.find_element(By.CSS_SELECTOR, "[data-tab=terminal]").click()
        self.click_button("Open a shell")
        self.until("the terminal connected",
                   lambda: "Connected" in self.wait(".terminal-panel .logs-bar").text, 60)
        keys = self.wait(".xterm-helper-textarea", visible=False)
        keys.send_keys("echo $((6*7))x; id -un" + Keys.ENTER)
        self.until("the command's output in the terminal",
                   lambda: "42x" in self.wait(".xterm-rows").text, 60)
        self.shot("instance-terminal")
        keys.send_keys("exit 3" + Keys.ENTER)
        self.until("the shell's exit status", lambda: "status 3" in self.wait(".xterm-rows").text, 30)

        self.step("stop it and see its cost")
        self.click_button("Stop")
        self.until("nb-1 STOPPED", lambda: self.state_in_header() == "STOPPED", 120)
        amount = self.until("a cost", lambda: self.wait(".cost .amount", timeout=30).text, 30)
        assert any(c.isdigit() for c in amount), f"cost {amount!r}"
        self.shot("instance-stopped-cost")
        print(f"cost so far: {amount}", flush=True)

        self.step("delete it")
        self.click_button("Delete")
        self.click_button("Delete", scope="dialog")
        self.wait_text("main h1", "Instances")
        self.until("nb-1 gone or deleting", lambda: self.state_of("nb-1") in (None, "DELETING"), 60)

        self.step("another tenant's instance id is not found")
        self.go(f"/instances/{a.other_instance}")
        self.wait_text(".not-found h2", "not found")
        self.shot("instance-not-found")
        self.go("/instances/no-such-instance")
        self.wait_text(".not-found h2", "not found")

        if a.other_tenant:
            self.step(f"switch to {a.other_tenant}, where that instance is, and back")
            self.go("/instances")
            Select(self.wait("#tenant-switch")).select_by_value(a.other_tenant)
            self.wait(f"tr[data-id='{a.other_instance}']")
            self.shot("tenant-switched")
            Select(self.wait("#tenant-switch")).select_by_value(a.tenant)
            self.until(f"back in {a.tenant}", lambda: self.driver.execute_script(
                "return document.querySelector('#tenant-switch').value") == a.tenant
                and not self.driver.find_elements(By.CSS_SELECTOR, f"tr[data-id='{a.other_instance}']"))

        self.step("API keys and members")
        self.go("/api-keys")
        self.click_button("New API key")
        self.fill("name", "render-farm")
        self.click_button("Create key")
        self.wait(".secret-value")
        self.shot("api-key-secret")
        self.go("/members")
        self.wait("tr[data-id]")
        self.shot("members")

        self.step("log out")
        self.driver.find_element(By.CSS_SELECTOR, "#logout").click()
        self.wait("#f-user_name")

    def running(self, instance_id):
        """Whether the list shows the instance RUNNING; a FAILED one fails the test with its reason."""
        state = self.state_of(instance_id)
        if state == "FAILED":
            instance = self.driver.execute_async_script(
                "const done = arguments[arguments.length - 1];"
                "fetch('/v1/instances/' + arguments[0]).then((r) => r.text()).then(done, (e) => done(String(e)));",
                instance_id)
            raise AssertionError(f"{instance_id} FAILED: {instance}")
        return state == "RUNNING"

    def state_in_header(self):
        return self.driver.execute_script(
            "const b = document.querySelector('main h1 .badge'); return b ? b.dataset.state : null;")

    def reload_header(self):
        self.driver.refresh()
        self.wait("main h1")
        return False

    def admin_part(self):
        a = self.args
        self.step(f"log in as {a.admin_user}")
        self.login(a.admin_user, a.admin_password_file)
        self.wait("nav .nav-title")

        self.step(f"create stock of {a.stock_spec}")
        self.go("/admin/stock")
        self.choose("spec_name", a.stock_spec)
        self.fill("number", "2")
        before = self.count(a.stock_spec, 2)
        self.click_button("Create stock")
        self.until(f"{a.stock_spec} available grows by 2", lambda: self.count(a.stock_spec, 2) >= before + 2)
        self.shot("stock")
        self.fill("number", "1")
        self.click_button("Remove unclaimed")
        self.until(f"one {a.stock_spec} stock removed", lambda: self.count(a.stock_spec, 2) == before + 1)

        self.step(f"cordon {a.cordon_node}")
        self.go("/admin/nodes")
        row = f"tr[data-id='{a.cordon_node}']"
        self.wait(row)
        self.driver.find_element(By.XPATH, f"//tr[@data-id='{a.cordon_node}']//button[.='Cordon']").click()
        self.wait_text(row, "Cordoned")
        self.shot("nodes")

        self.step("create a spec")
        self.go("/admin/specs")
        self.click_button("New spec")
        for field, value in (("spec_name", "l4.1x"), ("gpu_type", "L4"), ("cpu", "8"), ("memory", "32Gi"),
                             ("disk", "200Gi"), ("price", "0.80"), ("description", "one L4")):
            self.fill(field, value)
        self.click_button("Create spec")
        self.wait_text("tr[data-id='l4.1x']", "$0.80/h")
        self.shot("specs")

        self.step(f"raise {a.tenant}'s GPU quota")
        self.go("/admin/tenants")
        self.wait(f"tr[data-id='{a.tenant}']")
        self.driver.find_element(By.XPATH, f"//tr[@data-id='{a.tenant}']//button[.='Edit quota']").click()
        self.fill("max_gpus", "24")
        self.click_button("Save quota")
        self.until("the new quota in the list", lambda: self.driver.execute_script(
            "const r = document.querySelector(`tr[data-id='${arguments[0]}']`);"
            "return r && r.cells[1].textContent;", a.tenant) == "24")
        self.shot("tenants")

        self.step(f"{a.tenant}'s members, from its row: a user created there")
        self.driver.find_element(By.XPATH, f"//tr[@data-id='{a.tenant}']//a[.='Members']").click()
        self.wait_text("main h1", "Members")
        self.wait(f"main tr[data-id]")
        assert a.user in self.driver.find_element(By.CSS_SELECTOR, "main table").text, "alice is not listed"
        self.click_button("Create user")
        self.fill("user_name", "newcomer")
        self.fill("password", "a-newcomers-password")
        self.click_button("Create user", scope="form")
        self.until("newcomer listed", lambda: "newcomer" in self.driver.find_element(By.CSS_SELECTOR, "main table").text)
        self.shot("tenant-members")

    def count(self, spec, column):
        cells = self.driver.find_elements(By.CSS_SELECTOR, f"tr[data-id='{spec}'] td")
        return int(cells[column - 1].text) if cells else 0

    def check_browser_log(self):
        """Fails on a script error or a Content-Security-Policy refusal the console's pages met so
        far. Not the workload's pages (Jupyter's own scripts race each other now and then)."""
        for entry in self.browser_log():
            message = entry["message"]
            if not message.startswith(self.base):
                continue
            if "Uncaught" in message or "Content Security Policy" in message:
                raise AssertionError(f"the browser reported: {message}")

    def run(self):
        try:
            self.tenant_part()
            self.check_browser_log()
            self.admin_part()
            self.check_browser_log()
        except Exception:
            path = os.path.join(self.args.screenshots, "journey-failure.png")
            self.driver.save_screenshot(path)
            print(f"FAILED on {self.driver.current_url}; screenshot {path}", file=sys.stderr)
            for entry in self.browser_log()[-30:]:
                print(f"browser: {entry['level']} {entry['message']}", file=sys.stderr)
            raise
        finally:
            self.quit()


if __name__ == "__main__":
    Journey(parse_args()).run()
    print("console journey: PASS")
