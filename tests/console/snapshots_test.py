#!/usr/bin/python3
"""A storage's Snapshots tab in headless Chromium (Selenium), against a dev stack on Ceph.

A member puts a file in a Ceph-backed storage with the Files tab, takes a snapshot on the
Snapshots tab (first with a bad id: the error shows next to the field) and sees it listed,
changes the storage after it, restores the snapshot into a new storage and lands on it READY,
with the file of the snapshot's moment (downloaded and compared) and not the later one; the new
storage is in the list. In a second tab a viewer of the tenant signs in: sees the snapshot, no
button, and a note that members take and delete them; the member's tab, drawn before and now on
the viewer's session, still offers the buttons, and the page shows the server's refusal of a
take (in the form) and of a delete (a notice), the snapshot staying. Likewise for a member of
another tenant, who finds no such storage. Then the member deletes the snapshot after the
confirmation and sees it gone, and the restored storage keeps its file. A storage of the local
backend's Snapshots tab says that snapshots need a Ceph-backed storage. Screenshots go to --screenshots.

  snapshots_test.py --url http://127.0.0.1:PORT/ --tenant studio-s --user sam --password-file F \
      --viewer vera --viewer-password-file F --other-user otto --other-password-file F \
      --storage snap-src --local-storage plain-1 --screenshots DIR
"""
import argparse
import os
import sys
import tempfile

from console_browser import ConsoleBrowser, run_test
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

NOTES = "taken before the change: éé ✓\n".encode() * 50
LATER = b"written after the snapshot\n"
SNAPSHOT = "before-change"
RESTORED = "snap-restored"


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--url", required=True, help="the console's URL")
    p.add_argument("--tenant", required=True, help="the tenant of --user and --viewer")
    p.add_argument("--user", required=True, help="a member of --tenant")
    p.add_argument("--password-file", required=True)
    p.add_argument("--viewer", required=True, help="a viewer of --tenant")
    p.add_argument("--viewer-password-file", required=True)
    p.add_argument("--other-user", required=True, help="a member of another tenant")
    p.add_argument("--other-password-file", required=True)
    p.add_argument("--storage", required=True, help="a READY, empty storage of a Ceph spec in --tenant")
    p.add_argument("--local-storage", required=True, help="a READY storage of the local backend in --tenant")
    p.add_argument("--screenshots", required=True, help="directory for the PNGs")
    return p.parse_args()


class SnapshotsTest(ConsoleBrowser):
    def __init__(self, args):
        self.work = tempfile.mkdtemp(prefix="snapshots-")
        self.downloads = os.path.join(self.work, "downloads")
        os.makedirs(self.downloads)
        super().__init__(args.url, args.screenshots, "snapshots", downloads=self.downloads)
        self.args = args

    # --- helpers -------------------------------------------------------------------------------
    def page_error(self):
        errors = [e.text for e in self.driver.find_elements(
            By.CSS_SELECTOR, ".alert, .form-error, .field-error, .fb-error, .toast.bad") if e.text]
        return "; ".join(errors)

    def button(self, text, scope="//main"):
        """The visible button of that text in scope, or None."""
        found = [b for b in self.driver.find_elements(By.XPATH, f"{scope}//button[normalize-space()='{text}']")
                 if b.is_displayed()]
        return found[0] if found else None

    def click(self, text, scope="//main"):
        self.until(f"a button {text!r}", lambda: self.button(text, scope)).click()

    def snapshot_row(self, snapshot_id):
        rows = self.driver.find_elements(By.CSS_SELECTOR, f".tab-panel tr[data-id='{snapshot_id}']")
        return rows[0] if rows else None

    def file_row(self, key):
        rows = self.driver.find_elements(By.CSS_SELECTOR, f"tr[data-key='{key}']")
        return rows[0] if rows else None

    def state_in_header(self):
        return self.driver.execute_script(
            "const b = document.querySelector('main h1 .badge'); return b ? b.dataset.state : null;")

    def open_tab(self, storage, tab):
        self.go(f"/storages/{storage}")
        self.wait(f"button[data-tab='{tab}']").click()
        self.until(f"the {tab} tab drawn", lambda: self.driver.find_elements(
            By.CSS_SELECTOR, ".tab-panel > *:not(.loading)"))

    def open_snapshots(self, storage):
        self.open_tab(storage, "snapshots")
        self.until("the snapshots listed", lambda: self.driver.find_elements(
            By.CSS_SELECTOR, ".tab-panel table, .tab-panel .empty, .tab-panel .alert"))

    def open_files(self, storage):
        self.open_tab(storage, "files")
        self.until("the listing", lambda: self.driver.find_elements(By.CSS_SELECTOR, ".fb-table, .fb-empty")
                   or self.driver.find_elements(By.CSS_SELECTOR, ".fb-error:not([hidden])"))
        errors = [e.text for e in self.driver.find_elements(By.CSS_SELECTOR, ".fb-error:not([hidden])")]
        assert not errors, f"the file browser shows an error: {errors}"

    def drop(self, name, data):
        """Drops a file on the file browser as a person dragging it from the desktop would."""
        self.driver.execute_script("""
            const [bytes, name, zone] = arguments;
            const transfer = new DataTransfer();
            transfer.items.add(new File([new Uint8Array(bytes)], name, {type: 'text/plain'}));
            zone.dispatchEvent(new DragEvent('dragover', {dataTransfer: transfer, bubbles: true, cancelable: true}));
            zone.dispatchEvent(new DragEvent('drop', {dataTransfer: transfer, bubbles: true, cancelable: true}));
        """, list(data), name, self.driver.find_element(By.CSS_SELECTOR, ".fb-drop"))

    def download(self, key):
        """Downloads a file with its Download link; answers its bytes."""
        for old in os.listdir(self.downloads):
            os.remove(os.path.join(self.downloads, old))
        self.file_row(key).find_element(By.CSS_SELECTOR, "a.fb-download").click()
        path = os.path.join(self.downloads, key)
        self.until(f"{key} downloaded", lambda: os.path.exists(path)
                   and not any(n.endswith(".crdownload") for n in os.listdir(self.downloads)))
        with open(path, "rb") as f:
            return f.read()

    def refused_take(self, snapshot_id):
        """Takes a snapshot that the server refuses; answers what the form says."""
        self.click("Take snapshot")
        self.fill("snapshot_id", snapshot_id)
        self.click("Take snapshot", "//form")
        self.until("the refusal", lambda: self.driver.find_element(By.CSS_SELECTOR, ".tab-panel .form-error").text)
        assert not self.snapshot_row(snapshot_id), f"{snapshot_id} listed after a refusal"
        return self.driver.find_element(By.CSS_SELECTOR, ".tab-panel .form-error").text

    def refused_delete(self, snapshot_id):
        """Deletes a snapshot, confirmed, that the server refuses; answers what the toast says."""
        self.driver.execute_script("document.getElementById('toast').textContent = ''")
        self.snapshot_row(snapshot_id).find_element(By.XPATH, ".//button[normalize-space()='Delete']").click()
        self.wait("dialog.confirm")
        self.driver.find_element(By.CSS_SELECTOR, "dialog.confirm button.danger").click()
        toast = self.until("the refusal", lambda: self.driver.find_elements(By.CSS_SELECTOR, "#toast.bad.show")
                           and self.driver.find_element(By.ID, "toast").text)
        assert self.snapshot_row(snapshot_id), f"{snapshot_id} gone from the list after a refusal"
        return toast

    def log_out(self):
        self.driver.find_element(By.XPATH, "//button[normalize-space()='Log out']").click()
        self.wait("#f-user_name")

    # --- the test ------------------------------------------------------------------------------
    def run(self):
        a = self.args
        storage = a.storage

        self.step(f"log in as {a.user}; put notes.txt in {storage} with the Files tab")
        self.login(a.user, a.password_file, a.tenant)
        self.open_files(storage)
        self.drop("notes.txt", NOTES)
        self.until("notes.txt listed", lambda: self.file_row("notes.txt"), timeout=60)

        self.step("the Snapshots tab: none yet")
        self.open_snapshots(storage)
        self.wait_text(".tab-panel .empty h2", "No snapshots")
        self.shot("none-yet")

        self.step("a bad snapshot id: the server's refusal shows next to the field")
        self.click("Take snapshot")
        self.fill("snapshot_id", "Before_Change")
        self.click("Take snapshot", "//form")
        self.wait_text("#e-snapshot_id", "snapshot_id")
        self.shot("bad-id")

        self.step(f"take {SNAPSHOT}: listed")
        self.fill("snapshot_id", SNAPSHOT)
        self.click("Take snapshot", "//form")
        self.until(f"{SNAPSHOT} listed", lambda: self.snapshot_row(SNAPSHOT), timeout=60)
        self.wait_text("#toast", f"Snapshot {SNAPSHOT} taken")
        assert not self.driver.find_elements(By.CSS_SELECTOR, ".tab-panel form"), "the form stayed open"
        self.shot("taken")

        self.step("change the storage after the snapshot: later.txt")
        self.open_files(storage)
        self.drop("later.txt", LATER)
        self.until("later.txt listed", lambda: self.file_row("later.txt"), timeout=60)

        self.step(f"restore {SNAPSHOT} into {RESTORED}: the new storage's page, READY")
        self.open_snapshots(storage)
        self.until(f"{SNAPSHOT} listed", lambda: self.snapshot_row(SNAPSHOT))
        self.snapshot_row(SNAPSHOT).find_element(By.XPATH, ".//button[normalize-space()='Restore…']").click()
        self.fill("storage_id", RESTORED)
        self.fill("name", "Restored notes")
        spec = Select(self.wait("#f-spec_name")).first_selected_option.get_attribute("value")
        assert spec.startswith("ceph-"), f"the restore offers {spec} first, not the source's Ceph spec"
        offered = [o.get_attribute("value") for o in Select(self.wait("#f-spec_name")).options]
        assert all(s.startswith("ceph-") for s in offered), f"the restore offers non-Ceph specs: {offered}"
        self.shot("restore-form")
        self.click("Restore", "//form")
        self.until(f"on {RESTORED}'s page", lambda: self.driver.current_url.endswith(f"#/storages/{RESTORED}"),
                   timeout=120)
        self.until(f"{RESTORED} READY", lambda: self.state_in_header() == "READY", timeout=60)
        self.wait_text("main h1", "Restored notes")
        self.shot("restored")

        self.step(f"{RESTORED} holds notes.txt as it was, and not later.txt")
        self.open_files(RESTORED)
        self.until("notes.txt listed", lambda: self.file_row("notes.txt"))
        assert not self.file_row("later.txt"), "the restored storage holds a file written after the snapshot"
        assert self.download("notes.txt") == NOTES, "the restored notes.txt differs from the one snapshotted"
        self.shot("restored-files")

        self.step(f"{RESTORED} is in the storages list, READY, and {storage} still has its snapshot")
        self.go("/storages")
        self.until(f"{RESTORED} listed READY", lambda: self.driver.find_elements(
            By.CSS_SELECTOR, f"tr[data-id='{RESTORED}'] .badge[data-state='READY']"))
        self.open_snapshots(storage)
        self.until(f"{SNAPSHOT} still listed", lambda: self.snapshot_row(SNAPSHOT))
        member_tab = self.driver.current_window_handle

        self.step(f"in another tab, the viewer {a.viewer}: sees {SNAPSHOT}, is told members act on snapshots")
        self.driver.switch_to.new_window("tab")
        other_tab = self.driver.current_window_handle
        self.login(a.viewer, a.viewer_password_file, a.tenant)
        self.open_snapshots(storage)
        self.until(f"{SNAPSHOT} listed", lambda: self.snapshot_row(SNAPSHOT))
        for text in ("Take snapshot", "Restore…", "Delete"):
            assert not self.button(text), f"the viewer is offered {text!r}"
        note = self.wait_text(".tab-panel .panel-head", "member").text
        assert "viewer" in note, note
        self.shot("viewer")

        # The browser's session is the viewer's now; the member's tab, drawn before, still offers
        # the buttons: the server refuses, and the page says so.
        self.step(f"{a.user}'s tab, now on {a.viewer}'s session: taking and deleting refused, and said")
        self.driver.switch_to.window(member_tab)
        said = self.refused_take("by-the-viewer")
        assert "member" in said.lower(), f"the viewer's refusal says: {said}"
        self.shot("viewer-take-refused")
        said = self.refused_delete(SNAPSHOT)
        assert "member" in said.lower(), f"the viewer's refusal says: {said}"
        self.shot("viewer-delete-refused")

        self.step(f"{a.other_user} of another tenant: no such storage, and no snapshot of it")
        self.driver.switch_to.window(other_tab)
        self.log_out()
        self.login(a.other_user, a.other_password_file)
        self.go(f"/storages/{storage}")
        self.wait_text(".not-found h2", "not found")
        self.shot("other-tenant")
        self.driver.switch_to.window(member_tab)
        said = self.refused_take("by-another-tenant")
        assert "not found" in said.lower(), f"another tenant's refusal says: {said}"
        said = self.refused_delete(SNAPSHOT)
        assert "not found" in said.lower(), f"another tenant's refusal says: {said}"
        self.shot("other-tenant-refused")
        self.driver.switch_to.window(other_tab)
        self.log_out()
        self.driver.close()
        self.driver.switch_to.window(member_tab)

        self.step(f"{a.user} deletes {SNAPSHOT} after the confirmation: gone")
        self.login(a.user, a.password_file, a.tenant)
        self.open_snapshots(storage)
        self.until(f"{SNAPSHOT} listed", lambda: self.snapshot_row(SNAPSHOT))
        self.until("the member's page", lambda: self.button("Take snapshot"))
        assert not self.snapshot_row("by-the-viewer") and not self.snapshot_row("by-another-tenant")
        self.snapshot_row(SNAPSHOT).find_element(By.XPATH, ".//button[normalize-space()='Delete']").click()
        self.wait("dialog.confirm")
        self.shot("confirm-delete")
        self.driver.find_element(By.CSS_SELECTOR, "dialog.confirm button.danger").click()
        self.wait_text("#toast", "Snapshot deleted")
        self.until(f"{SNAPSHOT} gone", lambda: not self.snapshot_row(SNAPSHOT))
        self.wait_text(".tab-panel .empty h2", "No snapshots")
        self.driver.refresh()
        self.open_snapshots(storage)
        self.wait_text(".tab-panel .empty h2", "No snapshots")
        self.shot("deleted")

        self.step(f"{RESTORED} keeps its file without the snapshot")
        self.open_files(RESTORED)
        self.until("notes.txt listed", lambda: self.file_row("notes.txt"))
        assert self.download("notes.txt") == NOTES, "the restored notes.txt changed"

        self.step(f"{a.local_storage}, of the local backend: snapshots need a Ceph-backed storage")
        self.open_snapshots(a.local_storage)
        said = self.wait(".tab-panel .empty").text
        assert "Ceph" in said, f"the local storage's Snapshots tab says: {said}"
        assert not self.driver.find_elements(By.CSS_SELECTOR, ".tab-panel .alert"), self.page_error()
        assert not self.button("Take snapshot"), "a local storage offers Take snapshot"
        self.shot("local-backend")
        self.step("ok")


if __name__ == "__main__":
    sys.exit(run_test(SnapshotsTest(parse_args())))
