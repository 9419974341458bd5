#!/usr/bin/env python3
"""Conformance of biz-server with the official Qiniu Python SDK (qiniu==7.18.0).

Run by Tests/BizServerTests/SDKConformanceTests.swift against a biz-server on loopback:

    biz_server_sdk.py --base http://127.0.0.1:PORT --ak AK --sk SK --api-key KEY --key-prefix demo/

Checks, each printed as one line, then "N passed, M failed":
  * the SDK's Auth re-signing our encoded policy reproduces our token byte for byte;
  * the policy the SDK decodes is bounded by the declared fsize (fsizeLimit; fsizeMin too with
    "exactSize": true), and a client x: variable that clashes with a configured one (--server-var) is a 400;
  * callbacks signed by the SDK (QBox via token_of_request; Qiniu via QiniuMacRequestsAuth, which
    adds a signed X-Qiniu-Date) are accepted, a redelivery returns the same record, tampered ones get 401.
"""
import argparse
import hashlib
import json
import re
import sys
import urllib.parse

import requests
from qiniu import Auth, QiniuMacAuth
from qiniu.auth import QiniuMacRequestsAuth
from qiniu.utils import urlsafe_base64_decode

from checks import check, summary



def render(template, values, style):
    """What an up-server does with callbackBody (qiniu-protocol.md §2): form values percent-encoded,
    JSON values outside string literals as JSON."""
    def sub(match):
        name = match.group(1) or match.group(2)
        value = values.get(name, "")
        if style == "form":
            return urllib.parse.quote(str(value), safe="")
        return json.dumps(value, ensure_ascii=False)
    return re.sub(r"\$\(([^)]+)\)|\$\{([^}]+)\}", sub, template)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True)
    ap.add_argument("--ak", required=True)
    ap.add_argument("--sk", required=True)
    ap.add_argument("--api-key", required=True)
    ap.add_argument("--key-prefix", required=True)
    ap.add_argument("--server-var", help="an x: variable the client entry configures (vars)")
    args = ap.parse_args()
    auth = Auth(args.ak, args.sk)
    bearer = {"Authorization": f"Bearer {args.api_key}"}
    key = args.key_prefix + "sdk/七牛 & co.txt"

    r = requests.post(f"{args.base}/v1/uptoken", headers=bearer, timeout=10,
                      json={"key": key, "fname": "a.txt", "fsize": 5, "vars": {"x:color": "red"}})
    check("uptoken issued", r.status_code == 200, r.text)
    issued = r.json()
    token = issued["uptoken"]
    ak, sign, encoded_policy = token.split(":")
    policy_bytes = urlsafe_base64_decode(encoded_policy)
    check("SDK re-signs our policy to the same token", auth.token_with_data(policy_bytes) == token,
          f"{auth.token_with_data(policy_bytes)} != {token}")
    _, _, policy = Auth.up_token_decode(token)
    check("scope is bucket:key", policy["scope"] == f"{issued['bucket']}:{key}", policy["scope"])
    check("SDK reads the bucket", Auth.get_bucket_name(token) == issued["bucket"])
    check("declared fsize is the policy's fsizeLimit", policy.get("fsizeLimit") == 5 and "fsizeMin" not in policy,
          policy)
    r = requests.post(f"{args.base}/v1/uptoken", headers=bearer, timeout=10,
                      json={"key": key, "fsize": 5, "exactSize": True})
    exact = Auth.up_token_decode(r.json()["uptoken"])[2] if r.status_code == 200 else {}
    check("exactSize makes fsizeMin = fsizeLimit = fsize", exact.get("fsizeMin") == 5 and exact.get("fsizeLimit") == 5,
          f"{r.status_code} {exact or r.text}")
    if args.server_var:
        r = requests.post(f"{args.base}/v1/uptoken", headers=bearer, timeout=10,
                          json={"key": key, "vars": {args.server_var: "client-value"}})
        check("a client var clashing with a configured one is a 400", r.status_code == 400, f"{r.status_code} {r.text}")

    # The callback an up-server would send for this token, rendered from the signed policy.
    values = {"bucket": issued["bucket"], "key": key, "etag": "Fqr0xh3cxeii2r7eDztILNmuqUNN", "fsize": 5,
              "mimeType": "text/plain", "fname": "a.txt", "endUser": policy.get("endUser", "")}
    url = policy["callbackUrl"]
    style = "json" if policy.get("callbackBodyType") == "application/json" else "form"
    body = render(policy["callbackBody"], values, style)
    ctype = "application/x-www-form-urlencoded" if style == "form" else "application/json"
    if "$(bodySha1)" in url:
        url = url.replace("$(bodySha1)", hashlib.sha1(body.encode()).hexdigest())

    qbox = "QBox " + auth.token_of_request(url, body, ctype)
    check("SDK verify_callback accepts its own QBox signature", auth.verify_callback(qbox, url, body, ctype))
    r1 = requests.post(url, data=body.encode(), headers={"Authorization": qbox, "Content-Type": ctype}, timeout=10)
    check("QBox callback accepted", r1.status_code == 200, f"{r1.status_code} {r1.text}")
    reply = r1.json() if r1.status_code == 200 else {}
    check("reply carries key/hash/fsize/bucket/id", reply.get("key") == key and reply.get("hash") == values["etag"]
          and reply.get("fsize") == 5 and reply.get("bucket") == issued["bucket"] and reply.get("id"), reply)
    check("reply carries the client's x: var", reply.get("vars", {}).get("x:color") == "red", reply)
    r2 = requests.post(url, data=body.encode(), headers={"Authorization": qbox, "Content-Type": ctype}, timeout=10)
    check("redelivered QBox callback returns the same record", r2.status_code == 200 and r2.json() == reply, r2.text)

    tampered = body.replace("fsize=5", "fsize=6") if style == "form" else body.replace('"fsize": 5', '"fsize": 6')
    r3 = requests.post(url, data=tampered.encode(), headers={"Authorization": qbox, "Content-Type": ctype}, timeout=10)
    check("tampered QBox callback refused with 401", r3.status_code == 401, f"{r3.status_code} {r3.text}")

    # Qiniu scheme, JSON body, with the SDK's signed X-Qiniu-Date.
    mac = QiniuMacAuth(args.ak, args.sk, disable_qiniu_timestamp_signature=False)
    json_values = dict(values, etag="FtaXAk7ZP_YlMw0FA5Gt6ZzVy92t", fsize=4194304)
    json_body = json.dumps({"bucket": json_values["bucket"], "key": key, "hash": json_values["etag"],
                            "fsize": json_values["fsize"], "mimeType": "application/octet-stream",
                            "fname": "b.bin", "endUser": json_values["endUser"], "clientId": policy.get("endUser"),
                            "traceId": issued["traceId"]})
    plain_url = f"{args.base}/v1/callback"
    r4 = requests.post(plain_url, data=json_body.encode(), headers={"Content-Type": "application/json"},
                       auth=QiniuMacRequestsAuth(mac), timeout=10)
    check("Qiniu-scheme JSON callback (signed X-Qiniu-Date) accepted", r4.status_code == 200, f"{r4.status_code} {r4.text}")
    check("new hash for the same key is a new version", r4.status_code == 200 and r4.json().get("id") != reply.get("id"))

    req = requests.Request("POST", plain_url, data=json_body.encode(), headers={"Content-Type": "application/json"})
    prepared = QiniuMacRequestsAuth(mac)(req.prepare())
    prepared.body = json_body.replace("4194304", "4194305").encode()
    prepared.headers["Content-Length"] = str(len(prepared.body))
    r5 = requests.Session().send(prepared, timeout=10)
    check("tampered Qiniu-scheme callback refused with 401", r5.status_code == 401, f"{r5.status_code} {r5.text}")

    # QBox cannot sign a JSON body (spec §3.2), so biz-server refuses an unsigned JSON body under QBox.
    qbox_json = "QBox " + auth.token_of_request(plain_url, json_body, "application/json")
    r6 = requests.post(plain_url, data=json_body.encode(),
                       headers={"Authorization": qbox_json, "Content-Type": "application/json"}, timeout=10)
    check("QBox JSON callback without bodySha1 refused", r6.status_code == 401, f"{r6.status_code} {r6.text}")
    sha_url = plain_url + "?bodySha1=" + hashlib.sha1(json_body.encode()).hexdigest()
    qbox_sha = "QBox " + auth.token_of_request(sha_url, json_body, "application/json")
    r7 = requests.post(sha_url, data=json_body.encode(),
                       headers={"Authorization": qbox_sha, "Content-Type": "application/json"}, timeout=10)
    check("QBox JSON callback with signed bodySha1 accepted (same record)",
          r7.status_code == 200 and r7.json().get("id") == r4.json().get("id"), f"{r7.status_code} {r7.text}")

    return summary()


if __name__ == "__main__":
    sys.exit(main())
