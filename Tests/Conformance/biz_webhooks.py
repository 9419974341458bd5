#!/usr/bin/env python3
"""biz-server's webhooks against the Standard Webhooks oracle (PyPI standardwebhooks).

    biz_webhooks.py --binary .build/debug/biz-server --workdir DIR

A loopback receiver verifies every delivery with standardwebhooks' Webhook.verify, knowing only
the newer of the endpoint's two secrets (rotation), and counts the verified deliveries it answered
2xx per webhook-id. Across a receiver answering 500 twice, a receiver down for a while, a kill -9
of biz-server between the record and the delivery (restarted on the same data directory) and
redelivered up-server callbacks, every record id must be delivered exactly once, with the same
webhook-id on every attempt. Also: 410 disables an endpoint and its delivery is dead, the admin
API lists and re-queues it, and the test event arrives verified.
Last line: "N passed, M failed".
"""
import argparse
import base64
import json
import os
import signal
import subprocess
import sys
import time
from datetime import datetime

import requests
from qiniu import Auth
from standardwebhooks.webhooks import Webhook

from checks import check, free_port, summary  # also puts scripts/lib on the path
from harness.webhooks import Receiver  # the one webhook receiver of the suites

ADMIN = "webhook-test-admin-token-0123456789"
API_KEY = "dev-api-key"
OLD_SECRET = "whsec_" + base64.b64encode(b"old-secret-old-secret-old-secr!!").decode()
NEW_SECRET = "whsec_" + base64.b64encode(b"new-secret-new-secret-new-secr!!").decode()
GONE_SECRET = "whsec_" + base64.b64encode(b"gone-secret-gone-secret-gone-se!").decode()


def receiver_on(port):
    """The app's endpoint: /hook knows only NEW_SECRET (rotation), /gone answers 410 while `gone`;
    `fail_keys` maps an object key to statuses /hook answers before it accepts."""
    state = {"gone": True, "fail_keys": {}}

    def respond(path, event):
        key = ((event or {}).get("data") or {}).get("key")
        if path == "/gone" and state["gone"]:
            return 410
        if path == "/hook" and state["fail_keys"].get(key):
            return state["fail_keys"][key].pop(0)
        return 204

    receiver = Receiver({"/hook": NEW_SECRET, "/gone": GONE_SECRET}, respond=respond, port=port)
    receiver.state = state
    return receiver


class Biz:
    def __init__(self, binary, workdir):
        self.binary, self.workdir = binary, workdir
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = open(os.path.join(workdir, "biz-server.log"), "ab")
        self.process = None

    def start(self, config):
        env = dict(os.environ, UPGATE_ADMIN_TOKEN=ADMIN)
        self.process = subprocess.Popen(
            [self.binary, "--config", config, "--port", str(self.port),
             "--data-dir", os.path.join(self.workdir, "data")], stdout=self.log, stderr=self.log, env=env)
        deadline = time.time() + 20
        while time.time() < deadline:
            try:
                if requests.get(f"{self.base}/healthz", timeout=1).status_code == 200:
                    return
            except requests.RequestException:
                time.sleep(0.1)
        raise RuntimeError("biz-server did not become healthy")

    def kill9(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(timeout=15)

    def callback(self, key, hash_):
        url = f"{self.base}/v1/callback"
        body = f"bucket=demo&key={requests.utils.quote(key, safe='')}&hash={hash_}&fsize=11&clientId=demo"
        ctype = "application/x-www-form-urlencoded"
        auth = "QBox " + Auth("dev-access-key", "dev-secret-key").token_of_request(url, body, ctype)
        r = requests.post(url, data=body, headers={"Authorization": auth, "Content-Type": ctype}, timeout=10)
        r.raise_for_status()
        return r.json()

    def admin(self, method, path, **kw):
        return requests.request(method, self.base + path, headers={"Authorization": f"Bearer {ADMIN}"},
                                timeout=20, **kw)


def write_config(workdir, receiver_port):
    config = {
        "accessKey": "dev-access-key", "secretKey": "dev-secret-key",
        "clients": [{"id": "demo", "bucket": "demo", "keyPrefix": "demo/",
                     "apiKeySHA256": "6e1e4e1b8f8b36d08901cdb51b97841dfe20f5efd2fd2fd00768971408c46274"}],
        "webhooks": [
            {"url": f"http://127.0.0.1:{receiver_port}/hook", "secrets": [OLD_SECRET, NEW_SECRET],
             "events": ["upload.completed"], "retryScheduleSeconds": [0, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2],
             "timeoutSeconds": 2, "allowPrivateTargets": True},
            {"url": f"http://127.0.0.1:{receiver_port}/gone", "secrets": [GONE_SECRET],
             "retryScheduleSeconds": [0, 1, 1], "timeoutSeconds": 2, "allowPrivateTargets": True},
        ],
    }
    path = os.path.join(workdir, "biz-webhooks.json")
    with open(path, "w") as f:
        json.dump(config, f)
    return path


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--workdir", required=True)
    args = ap.parse_args()
    receiver = receiver_on(free_port())
    receiver.start()
    config = write_config(args.workdir, receiver.port)
    biz = Biz(args.binary, args.workdir)
    biz.start(config)
    ids = {}
    try:
        # 1. The receiver answers 500 twice, then 204.
        receiver.state["fail_keys"]["demo/500-twice"] = [500, 500]
        a = biz.callback("demo/500-twice", "FhashA")
        ids["a"] = a["id"]
        check("500 twice: delivered in the end", receiver.wait_delivered(a["id"]))
        tries = receiver.tries(a["id"])
        check("500 twice: three attempts, all with the record id as webhook-id",
              [t["status"] for t in tries] == [500, 500, 204] and all(t["id"] == a["id"] for t in tries),
              [(t["id"], t["status"]) for t in tries])
        check("every attempt has its own webhook-timestamp, not decreasing",
              [int(t["ts"]) for t in tries] == sorted(int(t["ts"]) for t in tries))
        event = receiver.delivered(a["id"])[0]["event"]
        shown = requests.get(f"{biz.base}/v1/uploads/{a['id']}", headers={"Authorization": f"Bearer {API_KEY}"},
                             timeout=10).json()
        check("event is upload.completed with the record as GET /v1/uploads shows it",
              event["type"] == "upload.completed" and event["data"] == shown, f"{event} vs {shown}")
        check("event timestamp is RFC 3339",
              datetime.fromisoformat(event["timestamp"].replace("Z", "+00:00")) is not None, event["timestamp"])

        # 2. Redelivered up-server callbacks send nothing new.
        again = biz.callback("demo/500-twice", "FhashA")
        biz.callback("demo/500-twice", "FhashA")
        time.sleep(2.5)
        check("redelivered callback returns the same record", again == a, f"{again} vs {a}")
        check("redelivered callbacks cause no new delivery", len(receiver.tries(a["id"])) == 3,
              len(receiver.tries(a["id"])))

        # 3. The receiver is down for a while.
        receiver.stop()
        c = biz.callback("demo/receiver-down", "FhashC")
        ids["c"] = c["id"]
        time.sleep(5)
        pending = biz.admin("GET", "/v1/admin/webhooks/deliveries?state=pending").json()["items"]
        mine = [d for d in pending if d.get("webhookId") == c["id"] and d["url"].endswith("/hook")]
        check("while the receiver is down the delivery is pending with attempts and the last error",
              len(mine) == 1 and mine[0]["attempts"] >= 2 and mine[0].get("lastError") == "connection failed",
              (mine, pending))
        receiver.start()
        check("receiver down: delivered once it is back", receiver.wait_delivered(c["id"]))

        # 4. kill -9 between the record and the delivery, restart on the same store.
        receiver.stop()
        d = biz.callback("demo/kill-9", "FhashD")
        ids["d"] = d["id"]
        biz.kill9()
        receiver.start()
        time.sleep(1)
        check("nothing was delivered before the kill", not receiver.tries(d["id"]))
        biz.start(config)
        check("kill -9: delivered after the restart", receiver.wait_delivered(d["id"], timeout=30))

        # 5. Exactly one verified delivery per record id, every attempt verified by the new secret.
        time.sleep(2)
        for name, record_id in ids.items():
            got = receiver.delivered(record_id)
            check(f"record {name}: exactly one verified delivery", len(got) == 1, len(got))
        hook = [t for t in receiver.snapshot() if t["path"] == "/hook"]
        check("every /hook attempt verified with only the newer secret", hook and all(t["verified"] for t in hook))
        check("two v1 signatures per attempt (rotation), the older secret verifies too",
              all(len(t["headers"]["webhook-signature"].split(" ")) == 2 for t in hook)
              and all(Webhook(OLD_SECRET).verify(t["body"], t["headers"]) for t in hook))
        check("a receiver with an unrelated secret refuses them",
              not any(_verifies(GONE_SECRET, t) for t in hook))

        # 6. 410 disables the /gone endpoint; its deliveries are dead and re-queueable. Record d's
        # /gone delivery may have been claimed when biz-server was killed: it is tried again only
        # after its lease (7 s) and the worker's next poll, so wait for it (bounded) as for /hook.
        gone = []
        deadline = time.time() + 30
        while time.time() < deadline:
            dead = biz.admin("GET", "/v1/admin/webhooks/deliveries?state=dead").json()["items"]
            gone = [x for x in dead if x["url"].endswith("/gone")]
            if len(gone) == 3:
                break
            time.sleep(0.2)
        check("410: the /gone deliveries are dead, one with lastStatus 410",
              len(gone) == 3 and any(x.get("lastStatus") == 410 for x in gone), gone)
        metrics = requests.get(f"{biz.base}/metrics", timeout=5).text
        check("metrics count the 410 and show dead deliveries",
              'upgate_biz_webhook_deliveries_total{outcome="gone"} 1' in metrics
              and "upgate_biz_webhook_deliveries_dead 3" in metrics, _grep(metrics, "webhook"))
        receiver.state["gone"] = False
        target = next(x for x in gone if x["webhookId"] == d["id"])
        r = biz.admin("POST", f"/v1/admin/webhooks/deliveries/{target['id']}/retry")
        check("retry re-queues a dead delivery", r.status_code == 200 and r.json()["state"] == "pending", r.text)
        check("re-queued delivery arrives verified", receiver.wait_delivered(d["id"], path="/gone"))
        time.sleep(1)
        r = biz.admin("POST", f"/v1/admin/webhooks/deliveries/{target['id']}/retry")
        check("retry of a delivered one is 409", r.status_code == 409 and "error" in r.json(), r.text)
        r = biz.admin("POST", "/v1/admin/webhooks/deliveries/999999/retry")
        check("retry of an unknown one is 404", r.status_code == 404 and "error" in r.json(), r.text)
        delivered = biz.admin("GET", "/v1/admin/webhooks/deliveries?state=delivered").json()["items"]
        check("delivered listing shows attempts and last status",
              any(x["webhookId"] == a["id"] and x["attempts"] == 3 and x["lastStatus"] == 204 for x in delivered),
              delivered[:3])

        # 7. The test event.
        r = biz.admin("POST", "/v1/admin/webhooks/test", json={"url": f"http://127.0.0.1:{receiver.port}/hook"})
        items = r.json().get("items", []) if r.status_code == 200 else []
        check("test event delivered at once", len(items) == 1 and items[0]["state"] == "delivered", r.text)
        test_id = items[0]["webhookId"] if items else ""
        got = receiver.delivered(test_id)
        check("test event verified by the receiver", len(got) == 1 and got[0]["event"]["type"] == "webhook.test")
        r = requests.get(f"{biz.base}/v1/admin/webhooks/deliveries", timeout=5)
        check("admin endpoints need the admin token", r.status_code == 401 and "error" in r.json(), r.text)
        r = biz.admin("GET", "/v1/admin/webhooks/deliveries?state=bogus")
        check("a bad state is a 400", r.status_code == 400 and "error" in r.json(), r.text)
        pending = biz.admin("GET", "/v1/admin/webhooks/deliveries?state=pending").json()["items"]
        check("nothing left pending", pending == [], pending)
    finally:
        biz.stop()
        receiver.stop()
    sys.exit(summary())


def _verifies(secret, attempt):
    try:
        Webhook(secret).verify(attempt["body"], attempt["headers"])
        return True
    except Exception:  # noqa: BLE001
        return False


def _grep(text, word):
    return "\n".join(line for line in text.splitlines() if word in line and not line.startswith("#"))


if __name__ == "__main__":
    main()
