#!/usr/bin/env python3
"""Helpers for scripts/bench/upload, run with the scripts/pyenv venv (official qiniu==7.18.0 SDK).

    upload_helper.py token KEY...                  an upload token for demo:KEY (1 h) per key, one a line
    upload_helper.py etag FILE                     qiniu.etag(FILE)
    upload_helper.py etag-pieces PIECE...          the etag of the concatenation of 4 MiB pieces
                                                   (every piece but the last exactly 4 MiB)
    upload_helper.py etag-groups N PIECE...        etag-pieces of each run of N consecutive pieces, one a line
    upload_helper.py sdk --up URL --key K --file F put_file v1 (the SDK's defaults: 3 threads,
                                                   4 MiB blocks); prints "<seconds> <hash>"
    upload_helper.py stat --up URL --key K         GET /stat with a QBox token; prints "<fsize> <hash>"

AK/SK are the development pair of Config/up-server.json (BENCH_AK / BENCH_SK to change).
"""
import base64
import hashlib
import os
import sys
import time
import warnings

import requests
from qiniu import Auth, Region, etag, put_file
from qiniu.utils import urlsafe_base64_encode

AK = os.environ.get("BENCH_AK", "dev-access-key")
SK = os.environ.get("BENCH_SK", "dev-secret-key")
BUCKET = "demo"
BLOCK = 4 * 1024 * 1024


def die(message):
    print(f"upload_helper: {message}", file=sys.stderr)
    sys.exit(1)


def option(args, name):
    try:
        return args[args.index(name) + 1]
    except (ValueError, IndexError):
        die(f"missing {name}")


def etag_of_pieces(paths):
    """qiniu-protocol §7.1: one block -> 0x16 + sha1; more -> 0x96 + sha1(concatenated block sha1s)."""
    digests = []
    for i, path in enumerate(paths):
        h = hashlib.sha1()
        size = 0
        with open(path, "rb") as f:
            while chunk := f.read(1 << 20):
                h.update(chunk)
                size += len(chunk)
        if i < len(paths) - 1 and size != BLOCK:
            die(f"{path} has {size} bytes, not 4 MiB")
        digests.append(h.digest())
    if len(digests) == 1:
        raw = b"\x16" + digests[0]
    else:
        raw = b"\x96" + hashlib.sha1(b"".join(digests)).digest()
    return base64.urlsafe_b64encode(raw).decode()


def main():
    if len(sys.argv) < 2:
        die("no command")
    command, args = sys.argv[1], sys.argv[2:]
    auth = Auth(AK, SK)
    if command == "token":
        print("\n".join(auth.upload_token(BUCKET, key, 3600) for key in args))
    elif command == "etag":
        print(etag(args[0]))
    elif command == "etag-pieces":
        print(etag_of_pieces(args))
    elif command == "etag-groups":
        n, pieces = int(args[0]), args[1:]
        if n <= 0 or len(pieces) % n:
            die(f"{len(pieces)} pieces do not split into groups of {n}")
        for i in range(0, len(pieces), n):
            print(etag_of_pieces(pieces[i:i + n]))
    elif command == "sdk":
        up, key, path = option(args, "--up"), option(args, "--key"), option(args, "--file")
        token = auth.upload_token(BUCKET, key, 3600)
        warnings.simplefilter("ignore", DeprecationWarning)   # put_file is "deprecated" in favour of v2
        start = time.monotonic()
        ret, info = put_file(token, key, path, regions=[Region(up_host=up)])
        seconds = time.monotonic() - start
        if info.status_code != 200 or not ret or "hash" not in ret:
            die(f"put_file failed: {info.status_code} {ret} {getattr(info, 'error', '')}")
        print(f"{seconds:.6f} {ret['hash']}")
    elif command == "stat":
        up, key = option(args, "--up"), option(args, "--key")
        url = f"{up}/stat/{urlsafe_base64_encode(f'{BUCKET}:{key}')}"
        r = requests.get(url, headers={"Authorization": "QBox " + auth.token_of_request(url)}, timeout=30)
        if r.status_code != 200:
            die(f"stat {key}: {r.status_code} {r.text[:200]}")
        body = r.json()
        print(f"{body['fsize']} {body['hash']}")
    else:
        die(f"unknown command {command}")


if __name__ == "__main__":
    main()
