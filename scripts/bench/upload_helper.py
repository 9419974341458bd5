#!/usr/bin/env python3
"""Helpers for scripts/bench/upload and scripts/bench/client, run with the scripts/pyenv venv
(official qiniu==7.18.0 SDK) and scripts/lib/harness.

    upload_helper.py token KEY...                  an upload token for demo:KEY (1 h) per key, one a line
    upload_helper.py etag FILE                     qiniu.etag(FILE)
    upload_helper.py etag-pieces PIECE...          the etag of the concatenation of 4 MiB pieces
                                                   (every piece but the last exactly 4 MiB)
    upload_helper.py etag-groups N PIECE...        etag-pieces of each run of N consecutive pieces, one a line
    upload_helper.py sdk --up URL --key K --file F put_file v1 (the SDK's defaults: 3 threads,
                                                   4 MiB blocks); prints "<seconds> <hash>"
    upload_helper.py stat --up URL --key K         GET /stat with a QBox token; prints "<fsize> <hash>"
    upload_helper.py floor FILE                    the hash floor: CPU seconds of SHA-1 (OpenSSL, via
                                                   hashlib) + CRC-32 (zlib) over FILE in one pass of
                                                   4 MiB reads; prints "<cpu seconds>"
    upload_helper.py floor-v2 FILE                 v2's own floor: SHA-1 + MD5 (both OpenSSL) the same
                                                   way, what a v2 upload of 4 MiB parts requires
    upload_helper.py floor-write FILE DIR          the write floor: CPU seconds (user + system) of
                                                   storing FILE as a new file in DIR the way a server
                                                   must, 4 MiB written then fsync'ed at a time; the
                                                   file is removed afterwards

AK/SK are the development pair of Config/up-server.json.
"""
import hashlib
import os
import sys
import time
import warnings
import zlib

from qiniu import Region, put_file

import harness as h


def die(message):
    print(f"upload_helper: {message}", file=sys.stderr)
    sys.exit(1)


def option(args, name):
    try:
        return args[args.index(name) + 1]
    except (ValueError, IndexError):
        die(f"missing {name}")


def etag_of_pieces(paths):
    """The etag of the pieces' concatenation (the SDK's etag_stream), after checking that every
    piece but the last is one 4 MiB block."""
    for path in paths[:-1]:
        if os.path.getsize(path) != 4 << 20:
            die(f"{path} has {os.path.getsize(path)} bytes, not 4 MiB")
    return h.etag_of_files(paths)


def blocks(path):
    """PATH in 4 MiB blocks, read one after another into one reused buffer (each view is valid
    until the next is read)."""
    buffer = bytearray(4 << 20)
    view = memoryview(buffer)
    with open(path, "rb", buffering=0) as f:
        while n := f.readinto(buffer):
            yield view[:n]


def hash_floor(path, check):
    """CPU seconds spent hashing PATH the way both ends of an upload must: SHA-1 per 4 MiB block
    (the etag) and `check` of every byte (v1: CRC-32 of each chunk; v2: the part's Content-MD5),
    from one read of each block into a reused buffer."""
    if type(hashlib.sha1()).__module__ != "_hashlib" or type(hashlib.md5()).__module__ != "_hashlib":
        die("hashlib's SHA-1/MD5 are not OpenSSL's here")   # _hashlib is the OpenSSL binding
    start = time.process_time()
    for block in blocks(path):
        hashlib.sha1(block).digest()
        check(block)
    return time.process_time() - start


def write_floor(path, directory):
    """CPU seconds (this process's user + system time) of writing PATH's bytes to a new file in
    DIRECTORY in 4 MiB pieces, each made durable with fsync before the next, as a server does
    before it acknowledges a block. Only the writes and fsyncs are timed, not the reads: the
    kernel's copy into fresh page-cache pages, which on a VM can cost several times the hashing,
    is part of any server's job, not of ours alone."""
    target = os.path.join(directory, f"write-floor-{os.getpid()}.bin")
    spent = 0.0
    with open(target, "wb", buffering=0) as sink:
        for block in blocks(path):
            start = time.process_time()
            sink.write(block)
            os.fsync(sink.fileno())
            spent += time.process_time() - start
    os.unlink(target)
    return spent


def main():
    if len(sys.argv) < 2:
        die("no command")
    command, args = sys.argv[1], sys.argv[2:]
    if command == "token":
        print("\n".join(h.upload_token(key) for key in args))
    elif command == "etag":
        print(h.etag(args[0]))
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
        token = h.upload_token(key)
        warnings.simplefilter("ignore", DeprecationWarning)   # put_file is "deprecated" in favour of v2
        start = time.monotonic()
        ret, info = put_file(token, key, path, regions=[Region(up_host=up)])
        seconds = time.monotonic() - start
        if info.status_code != 200 or not ret or "hash" not in ret:
            die(f"put_file failed: {info.status_code} {ret} {getattr(info, 'error', '')}")
        print(f"{seconds:.6f} {ret['hash']}")
    elif command == "stat":
        status, body = h.stat(option(args, "--up"), option(args, "--key"))
        if status != 200:
            die(f"stat: {status}")
        print(f"{body['fsize']} {body['hash']}")
    elif command == "floor":
        print(f"{hash_floor(args[0], zlib.crc32):.3f}")
    elif command == "floor-v2":
        print(f"{hash_floor(args[0], lambda piece: hashlib.md5(piece).digest()):.3f}")
    elif command == "floor-write":
        print(f"{write_floor(args[0], args[1]):.3f}")
    else:
        die(f"unknown command {command}")


if __name__ == "__main__":
    main()
