#!/usr/bin/python3
"""The storage file browser in headless Chromium (Selenium), against a dev stack.

A tenant user logs in and opens a storage's Files tab (the console's page; the bytes go straight
from the browser to the S3 endpoint with presigned URLs, across origins, so the endpoint's CORS
is exercised too). The test uploads a 20 MiB file with the file picker (multipart: three parts of
8 MiB or less, a progress bar), cancels a slowed-down one half-way (nothing left on the
server), uploads a small one by drag and drop, sees both listed, opens a folder
the AWS CLI made and comes back by the breadcrumbs, downloads the small file with its Download
link and compares the bytes, reads both back with the AWS CLI using the accessor the page minted
(same bytes), checks that reopening the tab reuses that accessor and that the page takes a new
one by itself when that one is deleted, sees S3's refusal of a file name next to the upload,
deletes the large file after the confirmation and sees it gone (in the page and for the AWS
CLI); then a viewer signs in in the same tab and is told why the files are not shown (the
member's saved key is not used). Screenshots go to --screenshots.

  file_browser_test.py --url http://127.0.0.1:PORT/ --user alice --password-file F \
      --storage files-1 --viewer vera --viewer-password-file F --screenshots DIR
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import urllib.request

from console_browser import ConsoleBrowser, run_test
from selenium.webdriver.common.by import By

BIG_SIZE = 20 * 1024 * 1024 + 12345  # three parts: 8 MiB, 8 MiB and the rest
SMALL = "small file, straight to S3: été ✓\n".encode() * 100


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--url", required=True, help="the console's URL")
    p.add_argument("--user", default="alice")
    p.add_argument("--password-file", required=True)
    p.add_argument("--storage", required=True, help="a READY storage of the user's tenant")
    p.add_argument("--viewer", required=True, help="a viewer of the same tenant")
    p.add_argument("--viewer-password-file", required=True)
    p.add_argument("--screenshots", required=True, help="directory for the PNGs")
    return p.parse_args()


def sha256(data):
    return hashlib.sha256(data).hexdigest()


class FileBrowserTest(ConsoleBrowser):
    def __init__(self, args):
        self.work = tempfile.mkdtemp(prefix="file-browser-")
        self.downloads = os.path.join(self.work, "downloads")
        os.makedirs(self.downloads)
        super().__init__(args.url, args.screenshots, "file-browser", downloads=self.downloads)
        self.args = args

    # --- helpers -------------------------------------------------------------------------------
    def until(self, what, predicate, timeout=30, poll=0.2):
        return super().until(what, predicate, timeout, poll)

    def page_error(self):
        errors = [e.text for e in self.driver.find_elements(By.CSS_SELECTOR, ".fb-error, .fb-upload.failed, .alert")
                  if e.text]
        return "; ".join(errors) or "(no error shown)"

    def row(self, key):
        rows = self.driver.find_elements(By.CSS_SELECTOR, f"tr[data-key='{key}']")
        return rows[0] if rows else None

    def drop(self, name, data):
        """Drops a file on the listing as a person dragging it from the desktop would."""
        self.driver.execute_script("""
            const [bytes, name, zone] = arguments;
            const transfer = new DataTransfer();
            transfer.items.add(new File([new Uint8Array(bytes)], name, {type: 'text/plain'}));
            zone.dispatchEvent(new DragEvent('dragover', {dataTransfer: transfer, bubbles: true, cancelable: true}));
            zone.dispatchEvent(new DragEvent('drop', {dataTransfer: transfer, bubbles: true, cancelable: true}));
        """, list(data), name, self.driver.find_element(By.CSS_SELECTOR, ".fb-drop"))

    def rest(self, method, path):
        """The REST API from the page, with its session cookie and CSRF token."""
        return self.driver.execute_async_script("""
            const [method, path, done] = arguments;
            const csrf = document.cookie.split('; ').find((c) => c.startsWith('gpuaas_csrf='));
            fetch(path, {method, headers: {'X-CSRF-Token': csrf ? decodeURIComponent(csrf.slice(12)) : ''}})
              .then(async (r) => done({status: r.status, body: await r.text()}));
        """, method, path)

    def console_accessors(self):
        answer = self.rest("GET", f"/v1/storages/{self.args.storage}/accessors")
        accessors = json.loads(answer["body"]).get("accessors", [])
        return [a["access_key_id"] for a in accessors if a.get("description") == "console file browser"]

    def open_files_tab(self):
        self.driver.get(self.base + f"#/storages/{self.args.storage}")
        self.wait("button[data-tab='files']").click()
        self.wait(".file-browser")
        self.until("the listing", lambda: self.driver.find_elements(By.CSS_SELECTOR, ".fb-table, .fb-empty")
                   or self.driver.find_elements(By.CSS_SELECTOR, ".fb-error:not([hidden])"))
        errors = [e.text for e in self.driver.find_elements(By.CSS_SELECTOR, ".fb-error:not([hidden])")]
        assert not errors, f"the file browser shows an error: {errors}"

    def accessor(self):
        saved = self.driver.execute_script("""
            const name = Object.keys(sessionStorage).find(
              (k) => k.startsWith('gpuaas.fileBrowser.accessor.') && k.endsWith('/' + arguments[0]));
            return name ? sessionStorage.getItem(name) : null;""", self.args.storage)
        assert saved, "the file browser kept no accessor in sessionStorage"
        return json.loads(saved)

    def s3_endpoint(self):
        with urllib.request.urlopen(self.base + "api/config") as answer:
            return json.load(answer)["s3_endpoint"]

    def aws(self, *argv, binary=False, stdin=b"", accessor=None, check=True):
        accessor = accessor or self.accessor()
        env = dict(os.environ, AWS_ACCESS_KEY_ID=accessor["accessKeyId"],
                   AWS_SECRET_ACCESS_KEY=accessor["secretAccessKey"], AWS_DEFAULT_REGION="us-east-1",
                   AWS_EC2_METADATA_DISABLED="true", AWS_CONFIG_FILE="/dev/null",
                   AWS_SHARED_CREDENTIALS_FILE="/dev/null")
        done = subprocess.run(["aws", "--endpoint-url", self.s3_endpoint(), *argv], env=env,
                              input=stdin, capture_output=True, timeout=120)
        if not check:
            return done
        assert done.returncode == 0, f"aws {' '.join(argv)}: {done.stderr.decode(errors='replace')}"
        return done.stdout if binary else done.stdout.decode()

    # --- the test ------------------------------------------------------------------------------
    def run(self):
        storage = self.args.storage
        big_path = os.path.join(self.work, "big.bin")
        big = os.urandom(BIG_SIZE)
        with open(big_path, "wb") as f:
            f.write(big)

        self.step("log in; s3.js signs AWS's published presigned-URL example as AWS does")
        self.login(self.args.user, self.args.password_file)
        url = self.driver.execute_async_script("""
            const done = arguments[0];
            import('./s3.js').then((s3) => s3.presign({
              endpoint: 'https://examplebucket.s3.amazonaws.com', accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
              secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
            }, 'GET', 'test.txt', '', {}, 86400, new Date('2013-05-24T00:00:00Z'))).then(done, (e) => done(String(e)));
        """)
        # docs.aws.amazon.com/AmazonS3/latest/API/sigv4-query-string-auth.html
        assert url.endswith("&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404"), url
        self.open_files_tab()
        self.wait(".fb-empty")
        self.shot("empty")
        minted = self.accessor()["accessKeyId"]

        self.step("upload 20 MiB with the file picker: a multipart upload with a progress bar")
        picker = self.driver.find_element(By.CSS_SELECTOR, "input.fb-picker")
        self.driver.execute_script("arguments[0].hidden = false", picker)
        picker.send_keys(big_path)
        self.driver.execute_script("arguments[0].hidden = true", picker)
        bar = self.wait(".fb-upload[data-key='big.bin'] progress", timeout=10)
        self.until("the big upload reports progress",
                   lambda: 0 < int(float(bar.get_attribute("value") or 0)) or self.row("big.bin"), timeout=60)
        self.until("big.bin listed", lambda: self.row("big.bin"), timeout=120)
        self.shot("big-uploaded")

        self.step("a slow upload shows its progress, and Cancel leaves nothing behind")
        self.driver.execute_cdp_cmd("Network.enable", {})
        self.driver.execute_cdp_cmd("Network.emulateNetworkConditions", {
            "offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": 4 * 1024 * 1024})
        slow_path = os.path.join(self.work, "slow.bin")
        with open(slow_path, "wb") as f:
            f.write(big)
        picker.send_keys(slow_path)
        bar = self.wait(".fb-upload[data-key='slow.bin'] progress", timeout=10)
        self.until("part of slow.bin sent", lambda: 0 < float(bar.get_attribute("value") or 0) < BIG_SIZE / 2)
        status = self.driver.find_element(By.CSS_SELECTOR, ".fb-upload[data-key='slow.bin'] .fb-status").text
        assert " of 20 MiB (" in status, status
        self.shot("upload-progress")
        self.driver.find_element(By.XPATH, "//div[@data-key='slow.bin']//button[normalize-space()='Cancel']").click()
        self.until("slow.bin cancelled", lambda: self.driver.find_element(
            By.CSS_SELECTOR, ".fb-upload[data-key='slow.bin'] .fb-status").text == "cancelled")
        self.driver.execute_cdp_cmd("Network.emulateNetworkConditions", {
            "offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
        self.until("its multipart upload aborted",
                   lambda: "slow.bin" not in self.aws("s3api", "list-multipart-uploads", "--bucket", storage))
        assert not self.row("slow.bin"), "a cancelled upload is listed"

        self.step("upload a small file by drag and drop")
        self.drop("small.txt", SMALL)
        self.until("small.txt listed", lambda: self.row("small.txt"), timeout=60)
        odd = "été & co+(1) ✓.txt"
        self.drop(odd, SMALL[:100])
        self.until("a name with spaces, +, & and UTF-8 listed", lambda: self.row(odd), timeout=60)
        assert self.aws("s3", "cp", f"s3://{storage}/{odd}", "-", binary=True) == SMALL[:100]
        assert self.row("big.bin"), "big.bin is no longer listed"
        sizes = {key: self.row(key).find_element(By.CSS_SELECTOR, "td.num").text for key in ("big.bin", "small.txt")}
        assert sizes["big.bin"] == "20 MiB", sizes
        self.shot("both-listed")

        self.step("the AWS CLI reads both back with the page's accessor: the same bytes")
        assert self.aws("s3", "cp", f"s3://{storage}/big.bin", "-", binary=True) == big, "big.bin differs"
        assert self.aws("s3", "cp", f"s3://{storage}/small.txt", "-", binary=True) == SMALL, "small.txt differs"
        parts = self.aws("s3api", "head-object", "--bucket", storage, "--key", "big.bin")
        assert '"ETag": "\\"' in parts and '-3\\""' in parts, f"big.bin was not a 3-part upload: {parts}"

        self.step("a folder: listed as one, opened, and left by the breadcrumbs")
        self.aws("s3", "cp", "-", f"s3://{storage}/docs/readme.txt", stdin=b"read me\n")
        self.wait(".fb-toolbar button").click()  # Refresh
        self.until("docs/ listed", lambda: self.row("docs/"))
        self.row("docs/").find_element(By.CSS_SELECTOR, "a.fb-name").click()
        self.until("inside docs/", lambda: self.row("docs/readme.txt") and not self.row("big.bin"))
        crumbs = self.wait(".fb-crumbs").text
        assert crumbs == f"{storage} / docs", crumbs
        self.shot("folder")
        self.driver.find_element(By.CSS_SELECTOR, ".fb-crumbs a.fb-crumb").click()
        self.until("back at the top", lambda: self.row("big.bin") and self.row("docs/"))

        self.step("download small.txt with its Download link")
        self.row("small.txt").find_element(By.CSS_SELECTOR, "a.fb-download").click()
        downloaded = os.path.join(self.downloads, "small.txt")
        self.until("small.txt downloaded", lambda: os.path.exists(downloaded)
                   and not any(n.endswith(".crdownload") for n in os.listdir(self.downloads)))
        with open(downloaded, "rb") as f:
            assert f.read() == SMALL, "the downloaded small.txt differs from what was uploaded"

        self.step("opening the tab again reuses the accessor")
        self.driver.refresh()
        self.open_files_tab()
        self.until("listed again", lambda: self.row("small.txt"))
        assert self.accessor()["accessKeyId"] == minted, "a second accessor was minted"
        assert self.console_accessors() == [minted], self.console_accessors()

        self.step("its accessor deleted (on the Accessors tab), the page takes a new one by itself")
        deleted = self.rest("DELETE", f"/v1/storages/{storage}/accessors/{minted}")
        assert deleted["status"] == 200, deleted
        self.wait(".fb-toolbar button").click()  # Refresh
        self.until("a new accessor", lambda: self.accessor()["accessKeyId"] != minted)
        self.until("listed with it", lambda: self.row("small.txt"))
        assert not self.driver.find_elements(By.CSS_SELECTOR, ".fb-error:not([hidden])"), self.page_error()
        assert self.console_accessors() == [self.accessor()["accessKeyId"]], self.console_accessors()

        self.step("a name S3 refuses: the upload says why")
        long_name = "n" * 300 + ".txt"
        self.drop(long_name, b"x")
        failed = self.wait(".fb-upload.failed .fb-status")
        assert "InvalidArgument" in failed.text and "255" in failed.text, failed.text
        self.shot("upload-error")

        self.step("delete big.bin after the confirmation")
        self.row("big.bin").find_element(By.CSS_SELECTOR, "button.fb-delete").click()
        self.wait("dialog.confirm")
        self.shot("confirm-delete")
        self.driver.find_element(By.CSS_SELECTOR, "dialog.confirm button.danger").click()
        self.until("big.bin gone", lambda: not self.row("big.bin"))
        assert self.row("small.txt"), "small.txt went too"
        listed = self.aws("s3", "ls", f"s3://{storage}/")
        assert "big.bin" not in listed and "small.txt" in listed, listed
        self.shot("after-delete")

        self.step("log out: the tab's accessor is deleted and forgotten")
        kept = self.accessor()
        self.driver.find_element(By.XPATH, "//button[normalize-space()='Log out']").click()
        self.wait("#f-user_name")
        left = self.driver.execute_script("return Object.keys(sessionStorage)")
        assert not left, f"signed out, the tab still holds {left}"
        refused = self.aws("s3", "ls", f"s3://{storage}/", accessor=kept, check=False)
        assert refused.returncode != 0 and b"InvalidAccessKeyId" in refused.stderr, refused

        self.step("a viewer in the same browser tab: not the member's key, and the reason shown")
        self.login(self.args.viewer, self.args.viewer_password_file)
        self.driver.get(self.base + f"#/storages/{storage}")
        self.wait("button[data-tab='files']").click()
        error = self.wait(".fb-error")
        assert "member" in error.text, error.text
        assert not self.row("small.txt"), "the viewer sees files through the member's saved key"
        self.shot("viewer")
        self.step("ok")


if __name__ == "__main__":
    sys.exit(run_test(FileBrowserTest(parse_args())))
