"""On the wire: HTTP requests, multipart form bodies, and Qiniu's tokens, signatures and etags
through the official SDK (qiniu==7.18.0 in the scripts/pyenv venv), the oracle that is not ours."""
import hashlib
import http.client
import io
import json
import urllib.parse
import uuid

import qiniu
from qiniu.utils import etag_stream, urlsafe_base64_encode

AK, SK, API_KEY, BUCKET = "dev-access-key", "dev-secret-key", "dev-api-key", "demo"
FORM = "application/x-www-form-urlencoded"
BLOCK = 4 << 20


# ---------------------------------------------------------------- HTTP

def connect(base, timeout=60):
    """A keep-alive connection to http://host:port (or a bare port on 127.0.0.1)."""
    if isinstance(base, int):
        return http.client.HTTPConnection("127.0.0.1", base, timeout=timeout)
    parts = urllib.parse.urlsplit(base)
    return http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)


def send(conn, method, path, body=b"", headers=None):
    """One exchange on `conn`: (status, headers lower-cased, body). Network errors raise."""
    headers = dict(headers or {})
    headers.setdefault("Content-Length", str(len(body)))
    conn.request(method, path, body=body, headers=headers)
    r = conn.getresponse()
    return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()


def request(base, method, path, body=b"", headers=None, timeout=60):
    """One exchange on a new connection: (status, headers, body); status None on a network error."""
    conn = connect(base, timeout)
    try:
        return send(conn, method, path, body, headers)
    except (OSError, http.client.HTTPException):
        return None, {}, b""
    finally:
        conn.close()


def get(url, headers=None, timeout=30):
    """GET url: (status, body); status None on a network error."""
    parts = urllib.parse.urlsplit(url)
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    status, _, body = request(f"{parts.scheme}://{parts.netloc}", "GET", path or "/", headers=headers,
                              timeout=timeout)
    return status, body


def form_body(fields, data, filename="file.bin", content_type="application/octet-stream"):
    """A multipart/form-data body (qiniu-protocol.md §4): the fields in order, then the file part.
    Returns (body, Content-Type header)."""
    boundary = uuid.uuid4().hex
    parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
             for name, value in fields]
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{filename}"\r\n'
                 f"Content-Type: {content_type}\r\n\r\n".encode() + data + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


# ---------------------------------------------------------------- Qiniu credentials (the SDK)

def b64(data):
    return urlsafe_base64_encode(data)


def entry(key, bucket=BUCKET):
    """The EncodedEntryURI of bucket:key (management paths)."""
    return qiniu.utils.entry(bucket, key)


def upload_token(key=None, policy=None, lifetime=3600, bucket=BUCKET, ak=AK, sk=SK):
    """`Auth.upload_token`: scope bucket (or bucket:key), deadline now + lifetime, policy fields."""
    return qiniu.Auth(ak, sk).upload_token(bucket, key, lifetime, policy)


def token_with_policy(policy, ak=AK, sk=SK):
    """A token over any policy: a dict (compact JSON, as the SDK writes it) or raw text/bytes, for
    policies `upload_token` would refuse to build (the fuzzer's)."""
    data = json.dumps(policy, separators=(",", ":")) if isinstance(policy, dict) else policy
    return qiniu.Auth(ak, sk).token_with_data(data)


def qbox_authorization(path_and_query, body=b"", content_type=None, ak=AK, sk=SK):
    """`QBox AK:sign` (§3.2) by `Auth.token_of_request`: path?query, newline, and the body when it
    is a form. The SDK takes text bodies only; one that is not UTF-8 gets the same layout signed
    by the SDK's `Auth.token`."""
    auth = qiniu.Auth(ak, sk)
    try:
        text = body.decode() if isinstance(body, bytes) else body
    except UnicodeDecodeError:
        path = path_and_query.encode()
        return "QBox " + auth.token(path + b"\n" + (body if content_type == FORM else b""))
    return "QBox " + auth.token_of_request("http://signed" + path_and_query, text, content_type)


def qiniu_authorization(method, path_and_query, host, content_type, body, x_qiniu=(), ak=AK, sk=SK):
    """`Qiniu AK:sign` (§3.3) by `QiniuMacAuth.token_of_request`, signing the X-Qiniu-* headers."""
    mac = qiniu.QiniuMacAuth(ak, sk)
    headers = mac.qiniu_headers(dict(x_qiniu))
    try:
        text = body.decode() if isinstance(body, bytes) else body
    except UnicodeDecodeError:  # the SDK decodes bodies as UTF-8: the same layout, signed by Auth.token
        head = f"{method} {path_and_query}\nHost: {host}" + (f"\nContent-Type: {content_type}" if content_type else "")
        head += (f"\n{headers}" if headers else "") + "\n\n"
        signed = head.encode() + (body if content_type and content_type != "application/octet-stream" else b"")
        return "Qiniu " + qiniu.Auth(ak, sk).token(signed)
    return "Qiniu " + mac.token_of_request(method, host, "http://signed" + path_and_query, headers, content_type, text)


# ---------------------------------------------------------------- etags

def etag(path):
    """`qiniu.etag` of a file (§7.1)."""
    return qiniu.etag(path)


def etag_of_bytes(data):
    return etag_stream(io.BytesIO(data))


class _Concatenation:
    """The files one after another as one read-only stream (what `etag_stream` reads)."""

    def __init__(self, paths):
        self.paths, self.index, self.current = list(paths), 0, None

    def seek(self, offset):
        assert offset == 0
        self.index, self.current = 0, None

    def read(self, n):
        out = b""
        while len(out) < n and self.index < len(self.paths):
            if self.current is None:
                self.current = open(self.paths[self.index], "rb")
            piece = self.current.read(n - len(out))
            if piece:
                out += piece
            else:
                self.current.close()
                self.current, self.index = None, self.index + 1
        return out


def etag_of_files(paths):
    """The etag of the files' concatenation, by the SDK's `etag_stream`."""
    return etag_stream(_Concatenation(paths))


def v2_hash(path, part_size):
    """The hash of a v2 multipart upload in parts of `part_size` (§7.2), computed here: the plain
    etag for 4 MiB parts, else urlsafe-b64(0x9E + SHA1(the parts' digests)), a part's digest being
    SHA-1 of its bytes (≤ 4 MiB) or SHA-1 of its 4 MiB blocks' SHA-1s."""
    if part_size == BLOCK:
        return etag(path)
    digests = []
    with open(path, "rb") as f:
        while part := f.read(part_size):
            if len(part) <= BLOCK:
                digests.append(hashlib.sha1(part).digest())
            else:
                inner = b"".join(hashlib.sha1(part[o:o + BLOCK]).digest() for o in range(0, len(part), BLOCK))
                digests.append(hashlib.sha1(inner).digest())
    return b64(b"\x9e" + hashlib.sha1(b"".join(digests)).digest())
