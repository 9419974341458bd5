"""browser: upgate.js and the upload page in a real Chromium (Debian's `chromium`, driven by
Playwright 1.64.1), against up-server and biz-server on two loopback ports, so every request the
page makes to up-server is a real cross-origin one (CORS preflights included).

biz-server serves the page (GET /) and the library (GET /upgate.js); its demo client's tokens live
8 s, so every multipart upload outlives its first token. up-server allows biz-server's origin
(`cors.allowedOrigins`). Chromium's upload bandwidth is throttled (DevTools network emulation)
where a case must act in the middle of an upload. Cases, each checked against an oracle that is
not our code (the official SDK's `qiniu.etag`, hashlib, up-server's access log, its v2 API):

  unit       upgate.js's pure parts in the page: etag = qiniu.etag and md5 = hashlib.md5 of the
             same files, the §7.2 v2 hash, backoff, the retry table, the checkpoint key, IndexedDB
  page       24 MiB through the page's file input: hash = qiniu.etag, one record, the page lists it
  reload     pause at ~80 %, reload, choose the same file: resumes, sends only the missing parts
             (PUTs counted in up-server's access log), right hash
  abort      abort mid-upload: v2 list parts answers 612, no resume record left
  token      the token expires mid-upload (8 s lifetime): asked again, upload succeeds
  offline    the network drops for 5 s mid-upload (Playwright offline): resumes by itself
  five       five files at once, one 0 bytes, one with a unicode name (and key)
  cors       the preflights up-server answered; a page origin up-server does not allow is refused

Screenshots of every step go to .build/browser-screenshots/ (kept); `--readme-shot PATH` copies
the page after the five-files case there (docs/images/upload-page.png).
"""
import hashlib
import json
import os
import re
import shutil
import sys
import time
import traceback

import harness as h

SUITE = "browser"
MIB = 1 << 20
SHOTS = os.path.join(h.ROOT, ".build", "browser-screenshots")


def arguments():
    ap = h.suite_arguments(__doc__, "the CI form (< 90 s): every case once")
    ap.add_argument("--readme-shot", help="copy the five-files screenshot to this PNG")
    ap.add_argument("--headed", action="store_true", help="show the browser (needs a display)")
    ap.add_argument("--cases", help="comma-separated cases to run (default: all)")
    return ap.parse_args()


class Browser:
    """One Chromium, one context (one IndexedDB), one page on biz-server's origin."""

    def __init__(self, playwright, biz, headed=False):
        self.biz = biz
        self.browser = playwright.chromium.launch(
            executable_path=shutil.which("chromium"), args=["--no-sandbox"], headless=not headed)
        self.context = self.browser.new_context(viewport={"width": 1100, "height": 760})
        self.page = self.context.new_page()
        self.errors = []
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.cdp = self.context.new_cdp_session(self.page)
        self.cdp.send("Network.enable")
        self.shot_number = 0

    def open(self, auth=h.API_KEY):
        self.page.goto(self.biz.url + "/")
        if auth is not None:
            self.page.fill("#auth", auth)

    def throttle(self, bytes_per_second):
        """Upload bandwidth of the page (-1: none)."""
        self.cdp.send("Network.emulateNetworkConditions", {
            "offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": bytes_per_second})

    def choose(self, *paths):
        self.page.set_input_files("#files", list(paths))

    def shot(self, name):
        self.shot_number += 1
        path = os.path.join(SHOTS, f"{self.shot_number:02d}-{name}.png")
        self.page.screenshot(path=path, full_page=True)
        return path

    def rows(self):
        return self.page.evaluate("""() => [...document.querySelectorAll('.task')].map(e => ({
            name: e.dataset.name, state: e.dataset.state, percent: Number(e.dataset.percent ?? 0),
            hash: e.dataset.hash ?? null, meta: e.querySelector('.meta').textContent }))""")

    def row(self, name):
        return next((r for r in self.rows() if r["name"] == name), None)

    def wait_row(self, name, until, timeout=60):
        """Polls the row of file `name` until `until(row)`; returns it (or the last seen)."""
        deadline, row = time.time() + timeout, None
        while time.time() < deadline:
            row = self.row(name)
            if row and until(row):
                return row
            time.sleep(0.2)
        return row

    def task(self, name, expression):
        """`expression` evaluated with `t`, the page's task of file `name` (latest one)."""
        return self.page.evaluate(f"""(name) => {{
            const t = [...window.upgatePage.tasks].reverse().find(t => t.file.name === name);
            return t ? ({expression}) : null; }}""", name)

    def at_percent(self, name, percent, action):
        """When the upload of file `name` passes `percent`, the page itself clicks its `action`
        button ("pause", "abort") or logs `upgate-test:<name>` ("signal"): no round trip to this
        process decides where in the upload it happens."""
        self.page.evaluate("""([name, percent, action]) => {
            const hooks = window.upgatePage.hooks ??= {};
            hooks[name] = { percent, action, fired: false };
            window.upgatePage.ontask = (task, el) => {
                const hook = hooks[task.file.name];
                if (!hook) return;
                const shown = task.onprogress;
                task.onprogress = (p) => {
                    shown(p);
                    if (hook.fired || p.loaded < (hook.percent / 100) * p.total || p.loaded === p.total) return;
                    hook.fired = true;
                    if (hook.action === 'signal') console.log('upgate-test:' + task.file.name);
                    else el.querySelector('button.' + hook.action).click();
                };
            };
        }""", [name, percent, action])

    def click(self, name, button):
        self.page.click(f'.task[data-name="{name}"] button.{button}')

    def checkpoints(self):
        return self.page.evaluate("""() => new Promise(resolve => {
            const open = indexedDB.open('upgate', 1);
            open.onupgradeneeded = () => open.result.createObjectStore('checkpoints');
            open.onsuccess = () => { const r = open.result.transaction('checkpoints').objectStore('checkpoints').count();
                r.onsuccess = () => resolve(r.result); }; })""")

    def close(self):
        self.browser.close()


def access_log(up, predicate):
    """up-server's access-log lines (JSON) for which `predicate(line)` holds."""
    out = []
    with open(up.log_path, encoding="utf-8", errors="replace") as f:
        for text in f:
            if '"msg":"request"' in text:
                line = json.loads(text)
                if predicate(line):
                    out.append(line)
    return out


def part_puts(up, upload_id):
    return [l for l in access_log(up, lambda l: l["method"] == "PUT" and f"/uploads/{upload_id}/" in l["path"])
            if l["status"] == 200]


def records_for(biz, key):
    return [r for r in (h.biz_records(biz.url) or []) if r["key"] == key]


def done(row):
    return row["state"] in ("done", "failed", "aborted")


def case_unit(suite, b):
    b.open()
    files = {"empty.bin": 0, "one.bin": 1, "block.bin": 4 * MIB, "block-plus-one.bin": 4 * MIB + 1, "nine.bin": 9 * MIB}
    expected, paths = {}, []
    os.makedirs(os.path.join(suite.work, "unit"))
    for i, (name, size) in enumerate(files.items()):
        path = h.make_file(os.path.join(suite.work, "unit", name), size, suite.args.seed + i)
        paths.append(path)
        with open(path, "rb") as f:
            expected[name] = {"etag": h.etag(path), "md5": hashlib.md5(f.read()).hexdigest(),
                              "v2": h.v2_hash(path, 5 * MIB) if size > 5 * MIB else None}
    expected["unicodeKeyB64"] = h.b64("демо/ключ?.bin".encode())
    b.page.evaluate("() => { const i = document.createElement('input'); i.type = 'file'; i.multiple = true;"
                    " i.id = 'unit-files'; i.hidden = true; document.body.append(i); }")
    b.page.set_input_files("#unit-files", paths)
    with open(os.path.join(os.path.dirname(__file__), "unit.js"), encoding="utf-8") as f:
        b.page.add_script_tag(content=f.read(), type="module")
    b.page.wait_for_function("() => window.upgateUnit", timeout=20_000)
    results = b.page.evaluate(
        "(expected) => window.upgateUnit.run([...document.getElementById('unit-files').files], expected)", expected)
    for name, ok, detail in results:
        suite.check(f"unit: {name}" + ("" if ok else f" ({detail})"), ok)


def case_page(suite, b, up, biz):
    path = h.make_file(os.path.join(suite.work, "page-24MiB.bin"), 24 * MIB, suite.args.seed + 10)
    b.open()
    b.shot("page-empty")
    b.choose(path)
    row = b.wait_row("page-24MiB.bin", done, timeout=120)
    b.shot("page-24MiB-done")
    want = h.etag(path)
    suite.check(f"page: 24 MiB uploaded through the file input ({row and row['state']}: {row and row['meta']})",
                row and row["state"] == "done")
    suite.check("page: its hash is qiniu.etag of the file", row and row["hash"] == want)
    records = records_for(biz, "demo/page-24MiB.bin")
    suite.check(f"page: exactly one record with that hash ({len(records)})",
                len(records) == 1 and records[0]["hash"] == want)
    shown = b.page.wait_for_selector('#records td.key:text-is("demo/page-24MiB.bin")', timeout=10_000)
    suite.check("page: the page lists the record", shown is not None)
    suite.check("page: CORS preflights were answered by up-server",
                access_log(up, lambda l: l["method"] == "OPTIONS" and l["status"] == 204))


def case_reload(suite, b, up, biz):
    name, parts = "reload-16MiB.bin", 4
    path = h.make_file(os.path.join(suite.work, name), parts * 4 * MIB, suite.args.seed + 20)
    b.open()
    b.throttle(4 * MIB)
    # Progress counts bytes in flight too, and three 4 MiB parts go at once: only past 75 % (12
    # of 16 MiB, more than three unfinished parts can hold) is a part surely stored. At 40 % the
    # three could share the bytes and none be done, which failed this case whenever the parts
    # started together (their MD5s done quickly).
    b.at_percent(name, 80, "pause")
    b.choose(path)
    row = b.wait_row(name, lambda r: r["state"] == "paused" or done(r), timeout=60)
    upload_id = b.task(name, "t.uploadId")
    time.sleep(0.5)
    b.shot("reload-paused")
    before = len(part_puts(up, upload_id))
    suite.check(f"reload: paused at {row and row['percent']} % with {before} of {parts} parts stored",
                row and not done(row) and 1 <= before < parts)
    b.throttle(-1)
    b.open()
    b.choose(path)
    row = b.wait_row(name, done, timeout=60)
    b.shot("reload-resumed-done")
    resumed = b.task(name, "t.stats")
    after = len(part_puts(up, upload_id)) - before
    # A part stored just as the pause cut its request off is in up-server's log but not in the
    # resume record, so it may be sent again: at most the parts that were in flight.
    resumed_parts = resumed["partsResumed"] if resumed else -1
    suite.check(f"reload: resumed the same upload ({resumed}, {before} parts stored at the pause)",
                resumed and 1 <= resumed_parts <= before and b.task(name, "t.uploadId") == upload_id)
    suite.check(f"reload: only the missing parts were sent ({after} after the reload, {parts - resumed_parts} missing)",
                after == parts - resumed_parts)
    suite.check("reload: hash = qiniu.etag", row and row["state"] == "done" and row["hash"] == h.etag(path))
    suite.check("reload: no resume record left", b.checkpoints() == 0)


def case_abort(suite, b, up):
    name = "abort-12MiB.bin"
    key = "demo/" + name
    path = h.make_file(os.path.join(suite.work, name), 12 * MIB, suite.args.seed + 30)
    b.open()
    b.throttle(3 * MIB)
    b.at_percent(name, 30, "abort")
    b.choose(path)
    row = b.wait_row(name, lambda r: r["state"] == "aborted" or done(r), timeout=60)
    upload_id = b.task(name, "t.uploadId")
    stored = len(part_puts(up, upload_id))
    b.page.wait_for_function(
        f"() => window.upgatePage.tasks.find(t => t.file.name === '{name}').checkpointKey", timeout=5000)
    time.sleep(1)   # abort() sends the DELETE after the in-flight parts have stopped
    b.shot("abort-aborted")
    b.throttle(-1)
    status, body = h.get(f"{up.url}/buckets/demo/objects/{h.b64(key.encode())}/uploads/{upload_id}",
                         {"Authorization": "UpToken " + h.upload_token(key)})
    suite.check(f"abort: aborted with {stored} parts stored ({row and row['state']})", row and row["state"] == "aborted")
    suite.check(f"abort: v2 list parts answers 612 ({status} {body[:60]!r})", status == 612)
    deletes = access_log(up, lambda l: l["method"] == "DELETE" and upload_id in l["path"] and l["status"] == 200)
    suite.check("abort: the DELETE reached up-server", len(deletes) == 1)
    suite.check("abort: no resume record left", b.checkpoints() == 0)


def case_token(suite, b, biz):
    name = "token-16MiB.bin"
    path = h.make_file(os.path.join(suite.work, name), 16 * MIB, suite.args.seed + 40)
    b.open()
    b.throttle(3 * MIB // 2)   # ~11 s of sending: the 8 s token runs out on the way
    started = time.time()
    b.choose(path)
    row = b.wait_row(name, done, timeout=90)
    b.throttle(-1)
    b.shot("token-done")
    requests = b.task(name, "t.tokenRequests")
    suite.check(f"token: the upload outlived its first token ({time.time() - started:.1f} s) and asked again "
                f"({requests} token requests)", requests and requests >= 2 and time.time() - started > 8)
    suite.check(f"token: succeeded with hash = qiniu.etag ({row and row['meta']})",
                row and row["state"] == "done" and row["hash"] == h.etag(path))


def case_offline(suite, b):
    name = "offline-16MiB.bin"
    path = h.make_file(os.path.join(suite.work, name), 16 * MIB, suite.args.seed + 50)
    b.open()
    b.throttle(3 * MIB)
    b.at_percent(name, 25, "signal")
    with b.page.expect_console_message(lambda m: m.text == "upgate-test:" + name, timeout=60_000):
        b.choose(path)
    b.context.set_offline(True)
    time.sleep(1)
    b.shot("offline-network-down")
    time.sleep(4)
    during = b.row(name)
    b.context.set_offline(False)
    b.throttle(-1)
    row = b.wait_row(name, done, timeout=90)
    b.shot("offline-resumed-done")
    suite.check(f"offline: still running while offline ({during and during['state']})",
                during and during["state"] == "running")
    suite.check(f"offline: resumed by itself, hash = qiniu.etag ({row and row['meta']})",
                row and row["state"] == "done" and row["hash"] == h.etag(path))


def case_five(suite, b, biz, readme_shot):
    sizes = {"empty.bin": 0, "note.txt": 1200, "three.bin": 3 * MIB, "five.bin": 5 * MIB + 17,
             "фото ✓ été.bin": 2 * MIB + 5}
    os.makedirs(os.path.join(suite.work, "five"))
    paths = [h.make_file(os.path.join(suite.work, "five", n), s, suite.args.seed + 60 + i)
             for i, (n, s) in enumerate(sizes.items())]
    b.open()
    b.choose(*paths)
    for path in paths:
        name = os.path.basename(path)
        row = b.wait_row(name, done, timeout=60)
        want = h.etag(path)
        records = records_for(biz, "demo/" + name)
        suite.check(f"five: {name!r} ({sizes[name]} B) done with hash = qiniu.etag, one record",
                    row and row["state"] == "done" and row["hash"] == want
                    and len(records) == 1 and records[0]["hash"] == want)
    b.page.wait_for_selector('#records td.key:text-is("demo/фото ✓ été.bin")', timeout=10_000)
    shot = b.shot("five-files-done")
    if readme_shot:
        shutil.copyfile(shot, readme_shot)


def case_cors(suite, b, up):
    """The page's origin reads up-server's answers (error answers too); another origin's preflight is refused."""
    b.open()
    seen = b.page.evaluate("""async (url) => {
        try { const r = await fetch(url + '/buckets/demo/objects/~/uploads', {method: 'POST', headers: {Authorization: 'UpToken x'}});
              return [r.status, r.headers.get('X-Reqid')]; } catch (e) { return String(e); } }""", up.url)
    suite.check(f"cors: the page reads up-server's 401 and its X-Reqid ({seen})",
                isinstance(seen, list) and seen[0] == 401 and seen[1])
    status, _, _ = h.request(up.url, "OPTIONS", "/buckets/demo/objects/~/uploads", headers={
        "Origin": "http://127.0.0.1:1", "Access-Control-Request-Method": "POST"})
    suite.check(f"cors: a preflight from another origin is refused ({status})", status == 403)


def main():
    args = arguments()
    if not shutil.which("chromium"):
        h.note_skip(SUITE, "no chromium: run scripts/bootstrap")
        print(f"{SUITE}: SKIPPED (no chromium on PATH; scripts/bootstrap installs it)")
        return 0
    from playwright.sync_api import sync_playwright
    suite = h.Suite(SUITE, args, "upgate-browser-")
    os.makedirs(SHOTS, exist_ok=True)
    for old in os.listdir(SHOTS):
        os.remove(os.path.join(SHOTS, old))
    with suite:
        biz_port = h.free_port()
        page_origin = f"http://127.0.0.1:{biz_port}"
        up_config = h.write_config(suite.work, "up-server.json", lambda c: c.update(
            cors={"allowedOrigins": [page_origin]}))
        up = h.Server.up(suite.bins, suite.work, config=up_config).start()

        def biz_change(c):
            c["rateLimit"] = {"tokensPerSecond": 1000, "burst": 1000}
            c["clients"][0]["tokenLifetimeSeconds"] = 8
        biz = h.Server.biz(suite.bins, suite.work, up.url, port=biz_port,
                           config=h.write_config(suite.work, "biz-server.json", biz_change)).start()
        with sync_playwright() as playwright:
            b = Browser(playwright, biz, headed=args.headed)
            try:
                for name, run in [
                    ("unit", lambda: case_unit(suite, b)),
                    ("page", lambda: case_page(suite, b, up, biz)),
                    ("reload", lambda: case_reload(suite, b, up, biz)),
                    ("abort", lambda: case_abort(suite, b, up)),
                    ("token", lambda: case_token(suite, b, biz)),
                    ("offline", lambda: case_offline(suite, b)),
                    ("five", lambda: case_five(suite, b, biz, args.readme_shot)),
                    ("cors", lambda: case_cors(suite, b, up)),
                ]:
                    if args.cases and name not in args.cases.split(","):
                        continue
                    started = time.time()
                    suite.log(f"case {name}")
                    try:
                        run()
                    except Exception as error:   # one broken case must not hide the others
                        traceback.print_exc()
                        suite.check(f"{name}: harness error {error!r}", False)
                        try:
                            b.shot(f"{name}-error")
                        except Exception:
                            pass
                    suite.log(f"case {name}: {time.time() - started:.1f} s")
                suite.check(f"no uncaught error in the page ({b.errors[:3]})", not b.errors)
            finally:
                b.close()
    return suite.finish(f"screenshots in {os.path.relpath(SHOTS, h.ROOT)}")


if __name__ == "__main__":
    sys.exit(main())
