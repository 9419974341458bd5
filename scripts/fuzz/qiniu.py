"""Qiniu signing helpers (qiniu-protocol.md §1, §3.2, §3.3), standalone so the fuzzer can build
valid and subtly invalid credentials without the SDK."""
import base64
import hashlib
import hmac
import json
import time

AK, SK = "dev-access-key", "dev-secret-key"
BUCKET = "demo"


def b64(data):
    if isinstance(data, str):
        data = data.encode()
    return base64.urlsafe_b64encode(data).decode()


def sign(data, sk=SK):
    if isinstance(data, str):
        data = data.encode()
    return b64(hmac.new(sk.encode(), data, hashlib.sha1).digest())


def policy(scope=BUCKET, lifetime=3600, **fields):
    p = {"scope": scope, "deadline": int(time.time()) + lifetime}
    p.update(fields)
    return p


def token(pol=None, ak=AK, sk=SK, raw_policy=None):
    encoded = b64(raw_policy if raw_policy is not None else json.dumps(pol or policy(), separators=(",", ":")))
    return f"{ak}:{sign(encoded, sk)}:{encoded}"


def qbox_authorization(path_and_query, body=b"", form=True, ak=AK, sk=SK):
    data = (path_and_query + "\n").encode() + (body if form else b"")
    return f"QBox {ak}:{sign(data, sk)}"


def qiniu_authorization(method, path_and_query, host, content_type, body, xqiniu=(), ak=AK, sk=SK):
    s = f"{method} {path_and_query}\nHost: {host}\n"
    if content_type:
        s += f"Content-Type: {content_type}\n"
    for name, value in sorted(xqiniu):
        s += f"{name}: {value}\n"
    s += "\n"
    data = s.encode()
    if content_type and content_type != "application/octet-stream" and body:
        data += body
    return f"Qiniu {ak}:{sign(data, sk)}"


def entry(bucket, key):
    return b64(f"{bucket}:{key}")
