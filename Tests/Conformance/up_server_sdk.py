#!/usr/bin/env python3
"""Conformance of up-server with the official Qiniu Python SDK (qiniu==7.18.0), unchanged.

Run by Tests/UpServerTests/SDKConformanceTests.swift against a live up-server (and biz-server):

    up_server_sdk.py --up http://127.0.0.1:PORT --biz http://127.0.0.1:PORT2 --ak AK --sk SK \
                     --bucket demo --api-key KEY --workdir DIR

Each check prints one line; the last line is "N passed, M failed".
"""
import argparse
import http.server
import io
import json
import os
import subprocess
import sys
import tempfile
import threading

import requests
from qiniu import Auth, Region, etag, put_data, put_file, put_file_v2, UploadProgressRecorder
from qiniu.utils import urlsafe_base64_encode, etag_stream

from checks import check, summary



def pattern(size):
    """The spec §10.4 test pattern: ((i*31) + (i>>12)) & 0xff."""
    return bytes(((i * 31) + (i >> 12)) & 0xFF for i in range(size))


def write_file(directory, name, data):
    path = os.path.join(directory, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


class CallbackTarget(http.server.BaseHTTPRequestHandler):
    """A callback receiver that checks what up-server sends with the SDK's own verify_callback."""
    protocol_version = "HTTP/1.1"
    auth = None
    received = []

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        url = f"http://{self.headers['Host']}{self.path}"
        ctype = self.headers.get("Content-Type")
        ok = CallbackTarget.auth.verify_callback(self.headers.get("Authorization", ""), url, body.decode(), ctype)
        CallbackTarget.received.append({"ok": ok, "body": body.decode(), "ctype": ctype})
        reply = json.dumps({"verified": ok, "echo": body.decode()}).encode()
        self.send_response(200 if ok else 401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args):
        pass


def stat(up, auth, bucket, key):
    url = f"{up}/stat/{urlsafe_base64_encode(f'{bucket}:{key}')}"
    r = requests.get(url, headers={"Authorization": "QBox " + auth.token_of_request(url)}, timeout=10)
    return r.status_code, (r.json() if r.headers.get("Content-Type", "").startswith("application/json") else {})


def download(up, auth, bucket, key):
    url = f"{up}/download/{urlsafe_base64_encode(f'{bucket}:{key}')}"
    r = requests.get(url, headers={"Authorization": "QBox " + auth.token_of_request(url)}, timeout=60)
    return r.status_code, r.content


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--up", required=True)
    ap.add_argument("--biz")
    ap.add_argument("--ak", required=True)
    ap.add_argument("--sk", required=True)
    ap.add_argument("--bucket", required=True)
    ap.add_argument("--api-key")
    ap.add_argument("--workdir", required=True)
    args = ap.parse_args()
    auth = Auth(args.ak, args.sk)
    up, bucket = args.up, args.bucket
    regions = [Region(up_host=up)]
    work = args.workdir

    # 1. Form upload (put_data) with key, x: vars, metadata, mime and fname.
    token = auth.upload_token(bucket, "hello.txt", 3600)
    ret, info = put_data(token, "hello.txt", b"hello", params={"x:a": "A"}, mime_type="text/plain", fname="h.txt",
                         metadata={"x-qn-meta-color": "red"}, regions=regions)
    check("form put_data with key", info.status_code == 200 and ret == {"hash": "Fqr0xh3cxeii2r7eDztILNmuqUNN", "key": "hello.txt"},
          f"{info.status_code} {ret} {getattr(info, 'error', '')}")
    # The key rule (Qiniu: at most 750 bytes of UTF-8; Upgate: and no NUL), through the SDK's form
    # and v2 uploads; bucket-scoped tokens so only the rule can refuse.
    any_key = auth.upload_token(bucket, None, 3600)
    longest = "k" * 749 + "/"
    for name, key, want in [("750-byte key is stored", longest, 200), ("751-byte key is 400", longest + "k", 400),
                            ("key with NUL is 400", "nul\x00key", 400)]:
        ret, info = put_data(any_key, key, b"key rule " + key.encode()[:8], regions=regions)
        check(f"form: {name}", info.status_code == want and (ret.get("key") == key if want == 200 else "invalid key" in str(info.error)),
              f"{info.status_code} {getattr(info, 'error', '')}")
    code, st = stat(up, auth, bucket, longest)
    check("stat of the 750-byte key", code == 200 and st.get("fsize") == len(b"key rule ") + 8, f"{code} {st}")
    nul_path = write_file(work, "nul.bin", b"v2 nul key")
    ret, info = put_file_v2(any_key, "v2\x00nul", nul_path, part_size=4 << 20, regions=regions,
                            upload_progress_recorder=UploadProgressRecorder(tempfile.mkdtemp()))
    check("v2: key with NUL is 400", info.status_code == 400, f"{info.status_code} {getattr(info, 'error', '')}")

    code, st = stat(up, auth, bucket, "hello.txt")
    check("stat after form upload", code == 200 and st.get("hash") == "Fqr0xh3cxeii2r7eDztILNmuqUNN" and st.get("fsize") == 5
          and st.get("mimeType") == "text/plain", f"{code} {st}")

    # 2. No key: bucket-scope token names the object by its hash.
    data = os.urandom(1000)
    ret, info = put_data(auth.upload_token(bucket, None, 3600), None, data, regions=regions)
    expected = etag_stream(io.BytesIO(data))
    check("form without key is named by etag", info.status_code == 200 and ret.get("key") == expected == ret.get("hash"),
          f"{info.status_code} {ret} {getattr(info, 'error', '')}")

    # 3. saveKey with $(etag)$(ext), forceSaveKey.
    policy = {"saveKey": "up/$(etag)$(ext)", "forceSaveKey": True}
    ret, info = put_data(auth.upload_token(bucket, None, 3600, policy), "ignored", b"\xff\xd8\xff jpeg-ish", fname="a.jpg",
                         regions=regions)
    check("saveKey renders $(etag)$(ext)", info.status_code == 200 and ret.get("key") == f"up/{ret.get('hash')}.jpg",
          f"{info.status_code} {ret} {getattr(info, 'error', '')}")

    # 4. v1 resumable (put_file > 8 MiB), with x: vars and metadata; returnBody rendering.
    big = pattern(9 << 20)
    big_path = write_file(work, "big.bin", big)
    policy = {"returnBody": '{"key":"$(key)","hash":"$(etag)","fsize":$(fsize),"a":"$(x:a)"}'}
    ret, info = put_file(auth.upload_token(bucket, "big-v1.bin", 3600, policy), "big-v1.bin", big_path,
                         params={"x:a": "A"}, metadata={"x-qn-meta-m": "1"}, regions=regions,
                         upload_progress_recorder=UploadProgressRecorder(tempfile.mkdtemp()))
    check("v1 put_file hash == qiniu.etag", info.status_code == 200 and ret.get("hash") == etag(big_path) == "litJxRiN_qpEphigieYPgiWEx2e9",
          f"{info.status_code} {ret} {getattr(info, 'error', '')}")
    check("v1 returnBody with x: var and fsize", ret is not None and ret.get("a") == "A" and ret.get("fsize") == len(big), ret)
    code, body = download(up, auth, bucket, "big-v1.bin")
    check("download returns the bytes", code == 200 and body == big, f"{code} {len(body)}")

    # 5. v2 multipart (put_file_v2), 4 MiB parts → v1-compatible hash; 5 MiB parts → v2 hash (spec §10.4).
    ret, info = put_file_v2(auth.upload_token(bucket, "big-v2.bin", 3600), "big-v2.bin", big_path, part_size=4 << 20,
                            regions=regions, upload_progress_recorder=UploadProgressRecorder(tempfile.mkdtemp()))
    check("v2 put_file_v2 (4 MiB parts) hash == qiniu.etag", info.status_code == 200 and ret.get("hash") == etag(big_path),
          f"{info.status_code} {ret} {getattr(info, 'error', '')}")
    ret, info = put_file_v2(auth.upload_token(bucket, "big-v2-5m.bin", 3600), "big-v2-5m.bin", big_path, part_size=5 << 20,
                            regions=regions, upload_progress_recorder=UploadProgressRecorder(tempfile.mkdtemp()))
    check("v2 with 5 MiB parts gives the qshell v2 hash", info.status_code == 200 and ret.get("hash") == "nlj9SMnk_F66LWrtfa-4ZfCxDv1Z",
          f"{info.status_code} {ret} {getattr(info, 'error', '')}")

    # 6. Callback verified by the SDK's verify_callback, reply relayed.
    CallbackTarget.auth = auth
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), CallbackTarget)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    cb_url = f"http://127.0.0.1:{server.server_address[1]}/cb?src=up"
    policy = {"callbackUrl": cb_url, "callbackBody": "key=$(key)&hash=$(etag)&fsize=$(fsize)&name=$(x:name)",
              "callbackBodyType": "application/x-www-form-urlencoded"}
    ret, info = put_file(auth.upload_token(bucket, "cb.bin", 3600, policy), "cb.bin", big_path, params={"x:name": "七 & 牛"},
                         regions=regions, upload_progress_recorder=UploadProgressRecorder(tempfile.mkdtemp()))
    check("up-server's QBox callback passes the SDK's verify_callback", info.status_code == 200 and ret.get("verified") is True,
          f"{info.status_code} {ret} {getattr(info, 'error', '')} {CallbackTarget.received[-1:]}")
    server.shutdown()

    # 7. Through biz-server: its token, its callback, its record relayed to the uploader.
    if args.biz and args.api_key:
        r = requests.post(f"{args.biz}/v1/uptoken", headers={"Authorization": f"Bearer {args.api_key}"},
                          json={"key": "demo/sdk/chain.bin", "fname": "chain.bin", "vars": {"x:color": "red"}}, timeout=10)
        check("biz-server issues a token", r.status_code == 200, r.text)
        biz_token = r.json()["uptoken"]
        ret, info = put_file(biz_token, "demo/sdk/chain.bin", big_path, regions=regions,
                             upload_progress_recorder=UploadProgressRecorder(tempfile.mkdtemp()))
        check("whole chain: biz-server's record relayed", info.status_code == 200 and ret.get("hash") == etag(big_path)
              and ret.get("key") == "demo/sdk/chain.bin" and ret.get("id", "").startswith("up_")
              and ret.get("vars", {}).get("x:color") == "red", f"{info.status_code} {ret} {getattr(info, 'error', '')}")

    # 8. Resume: the SDK process is killed after its second block; a new process finishes from the record.
    resume_data = pattern(20 << 20)
    resume_path = write_file(work, "resume.bin", resume_data)
    record_dir = tempfile.mkdtemp()
    token = auth.upload_token(bucket, "resume.bin", 3600)
    child = (
        "import os, signal, sys\n"
        "from qiniu import put_file, Region, UploadProgressRecorder\n"
        "seen = []\n"
        "def progress(done, total):\n"
        "    seen.append(done)\n"
        "    if len(seen) == 2: os.kill(os.getpid(), signal.SIGKILL)\n"
        f"put_file({token!r}, 'resume.bin', {resume_path!r}, regions=[Region(up_host={up!r})], progress_handler=progress,\n"
        f"         upload_progress_recorder=UploadProgressRecorder({record_dir!r}))\n"
    )
    killed = subprocess.run([sys.executable, "-c", child], timeout=120)
    records = os.listdir(record_dir)
    check("SDK killed mid-upload leaves its resume record", killed.returncode == -9 and len(records) == 1,
          f"rc={killed.returncode} records={records}")
    ret, info = put_file(token, "resume.bin", resume_path, regions=regions,
                         upload_progress_recorder=UploadProgressRecorder(record_dir))
    check("resumed upload finishes with the right etag", info.status_code == 200 and ret.get("hash") == etag(resume_path),
          f"{info.status_code} {ret} {getattr(info, 'error', '')}")
    check("resume record removed after success", os.listdir(record_dir) == [], os.listdir(record_dir))

    return summary()


if __name__ == "__main__":
    sys.exit(main())
