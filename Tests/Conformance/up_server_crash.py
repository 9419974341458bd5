#!/usr/bin/env python3
"""kill -9 of up-server in the middle of an SDK upload, restart on the same data dir, resume.

    up_server_crash.py --binary .build/debug/up-server --config Config/up-server.json --workdir DIR

Checks that every acknowledged block survives (the resumed upload only sends what is missing and
ends with the right etag) and that the object downloads back byte for byte.
Last line: "N passed, M failed".
"""
import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time

import requests
from qiniu import Auth, Region, etag, put_file, UploadProgressRecorder
from qiniu.utils import urlsafe_base64_encode

from checks import check, free_port, summary



def start(binary, config, port, data_dir, log):
    process = subprocess.Popen([binary, "--config", config, "--port", str(port), "--data-dir", data_dir],
                               stdout=subprocess.DEVNULL, stderr=log)
    deadline = time.time() + 20
    while time.time() < deadline:
        try:
            if requests.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return process
        except requests.RequestException:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("up-server did not become healthy")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--config", required=True)
    ap.add_argument("--workdir", required=True)
    args = ap.parse_args()
    auth = Auth("dev-access-key", "dev-secret-key")
    port = free_port()
    up = f"http://127.0.0.1:{port}"
    data_dir = os.path.join(args.workdir, "data")
    log = open(os.path.join(args.workdir, "up-server.log"), "ab")
    data = bytes(((i * 31) + (i >> 12)) & 0xFF for i in range(24 << 20))
    path = os.path.join(args.workdir, "crash.bin")
    with open(path, "wb") as f:
        f.write(data)
    record_dir = tempfile.mkdtemp()
    token = auth.upload_token("demo", "crash.bin", 3600)
    server = start(args.binary, args.config, port, data_dir, log)
    try:
        acknowledged = []

        def progress(done, total):
            acknowledged.append(done)
            if len(acknowledged) == 2:
                server.send_signal(signal.SIGKILL)  # kill -9 while the other blocks are in flight

        ret, info = put_file(token, "crash.bin", path, regions=[Region(up_host=up)], progress_handler=progress,
                             upload_progress_recorder=UploadProgressRecorder(record_dir))
        server.wait(timeout=10)
        check("the upload fails while up-server is down", info.status_code != 200, f"{info.status_code} {ret}")
        check("the SDK kept a resume record", len(os.listdir(record_dir)) == 1, os.listdir(record_dir))

        server = start(args.binary, args.config, port, data_dir, log)
        ret, info = put_file(token, "crash.bin", path, regions=[Region(up_host=up)],
                             upload_progress_recorder=UploadProgressRecorder(record_dir))
        check("after restart the upload resumes and completes with the right etag",
              info.status_code == 200 and ret.get("hash") == etag(path), f"{info.status_code} {ret} {getattr(info, 'error', '')}")
        url = f"{up}/download/{urlsafe_base64_encode('demo:crash.bin')}"
        r = requests.get(url, headers={"Authorization": "QBox " + auth.token_of_request(url)}, timeout=60)
        check("no half-written object: the download equals the file", r.status_code == 200 and r.content == data,
              f"{r.status_code} {len(r.content)}")
    finally:
        if server.poll() is None:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=15)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
