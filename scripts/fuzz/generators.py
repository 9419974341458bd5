"""Malformed-request generators. Each returns (data, complete, label):
data is bytes (or a list of byte strings sent one after the other), complete says whether the
request's HTTP framing is complete (a healthy server must then answer or close within the hang
timeout), label names the family for the tallies."""
import json
import time

import harness as h
from rawhttp import request

# --- building blocks -------------------------------------------------------------------------

def policy(scope=h.BUCKET, lifetime=3600, **fields):
    """A put policy dict (qiniu-protocol.md §1) with any fields, valid or not."""
    return dict({"scope": scope, "deadline": int(time.time()) + lifetime}, **fields)


def token(pol=None, ak=h.AK, sk=h.SK, raw_policy=None):
    """An upload token over `pol` (default: the bucket, 1 h) or over raw policy text, signed by the
    official SDK (`Auth.token_with_data`) with any AK/SK: the fuzzer's valid and invalid tokens."""
    return h.token_with_policy(raw_policy if raw_policy is not None else (pol or policy()), ak, sk)


NUMBERS = ["0", "1", "4", "-1", "4194304", "4194305", "18446744073709551616", "9223372036854775807",
           "9223372036854775808", "-9223372036854775808", "1e3", "0x10", " 1", "1 ", "+1", "01", "", "%31",
           "1.5", "NaN", "٣", "4194304\x00", "99999999999999999999999999999999"]
SEGMENTS = ["", ".", "..", "%2e%2e", "%2F", "%00", "%", "%zz", "~", "a" * 4096, "é", "\u202e", ":", "x:a",
            "key", "fname", "mimeType", "x-qn-meta-a", "ZGVtbw==", "ZGVtbzprZXk=", "!!", "==", "-_", "%ff%fe",
            "..%2f..%2fetc%2fpasswd", "ZGVtbzouLi8uLi8uLi9ldGMvcGFzc3dk"]
KEYS = ["../../x", "../../../../tmp/x", "/etc/passwd", "a/../../b", "..", ".", "", "~", "%2e%2e/x", "\\..\\x",
        "con", "a\x00b", "a" * 1024, "é/ü/../", "x:y", "//", "a//b", "\u202e.txt"]
METHODS = ["GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH", "TRACE", "CONNECT", "FOO", "get", "P0ST",
           "GET\x00", "POST POST", "A" * 300]
CONTENT_TYPES = ["application/octet-stream", "application/json", "text/plain", "multipart/form-data",
                 "multipart/form-data; boundary=", "multipart/form-data; boundary=\"\"", "application/x-www-form-urlencoded",
                 "application/x-www-form-urlencoded; charset=utf-8", "x" * 5000, "", ";;;", "multipart/form-data; boundary=" + "b" * 300,
                 "application/json; charset=\x00"]


def rnd_bytes(rng, n):
    return bytes(rng.getrandbits(8) for _ in range(n))


def mutate_bytes(rng, data, n=None):
    data = bytearray(data)
    for _ in range(n or rng.randint(1, 4)):
        op = rng.randrange(5)
        if not data or op == 0:
            data[rng.randint(0, len(data)):rng.randint(0, len(data))] = rnd_bytes(rng, rng.randint(1, 8))
        elif op == 1:
            data[rng.randrange(len(data))] = rng.getrandbits(8)
        elif op == 2:
            i = rng.randrange(len(data))
            del data[i:i + rng.randint(1, 16)]
        elif op == 3:
            i = rng.randrange(len(data))
            data[i:i] = data[i:i + rng.randint(1, 64)] * rng.randint(2, 20)
        else:
            i = rng.randrange(len(data))
            data[i:i] = rng.choice([b"\r\n", b"\n", b"\r", b"\x00", b":", b" ", b"%", b"=", b"\r\n\r\n"])
    return bytes(data)


def mutate_text(rng, text):
    return mutate_bytes(rng, text.encode()).decode("latin-1")


class Context:
    """Valid material obtained from the live servers at setup (ctx values, upload ids, ids)."""

    def __init__(self):
        self.ctx = []          # valid ctx strings (4-byte blocks) with their offset
        self.open_ctx = []     # valid ctx of a block still open (offset 4 of 8)
        self.upload_ids = []   # (encoded key, uploadId) of v2 uploads
        self.record_ids = []   # biz upload record ids
        self.part_etags = []
        self.marker = "fuzzmark"
        self.biz_host = "127.0.0.1"


# --- tokens ----------------------------------------------------------------------------------

def bad_token(rng, ctx):
    """A token that must be refused (401/403/631), never accepted; see must_refuse."""
    return bad_token_kind(rng, ctx)[0]


# Kinds of bad_token_kind whose token no upload request may ever accept (2xx = auth bypass).
# Not in it: 5 and 13 (random mutations, which may leave a token valid), 11 (valid, wrong scope:
# mkblk/bput take no key), 12 (unknown bucket).
MUST_REFUSE = {0, 1, 2, 3, 4, 6, 7, 8, 9, 10}


def bad_token_kind(rng, ctx):
    kind = rng.randrange(14)
    return _bad_token(rng, ctx, kind), kind


def _bad_token(rng, ctx, kind):
    if kind == 0:
        return token(policy(lifetime=-rng.randint(1, 10 ** 6)))  # expired
    if kind == 1:
        return token(sk="foreign-secret", ak=rng.choice(["foreign-ak", h.AK]))  # foreign AK / wrong SK
    if kind == 2:
        t = token().split(":")
        return ":".join(t[:2])  # two fields
    if kind == 3:
        return token() + ":" + h.b64("extra") + ":x"  # four / five fields
    if kind == 4:
        ak, s, p = token().split(":")
        pol = json.loads(__import__("base64").urlsafe_b64decode(p))
        pol["scope"] = "demo:other"  # tampered policy, old signature
        return f"{ak}:{s}:{h.b64(json.dumps(pol))}"
    if kind == 5:
        return mutate_text(rng, token())
    if kind == 6:
        return h.AK + ":" + "!!!notbase64" + ":" + "%%%"
    if kind == 7:
        return token(raw_policy=rng.choice(["", "[]", "null", "{", '{"scope":1}', '{"deadline":"x"}',
                                                   '{"scope":"demo"}', '{"scope":"demo","deadline":1e99}',
                                                   '{"scope":"nosuchbucket","deadline":9999999999}',
                                                   '{"scope":"demo","deadline":-1}', "\xff\xfe",
                                                   '{"scope":"demo","deadline":99999999999999999999999}']))
    if kind == 8:
        return ""
    if kind == 9:
        return "x" * rng.choice([100, 10000, 70000])
    if kind == 10:
        return ":" * rng.randint(1, 10)
    if kind == 11:
        return token(policy(scope="demo:only/this/key", fsizeLimit=1))  # valid, wrong scope
    if kind == 12:
        return token(policy(scope="nosuchbucket"))
    return token(raw_policy=mutate_bytes(rng, json.dumps(policy()).encode()))


def auth_header(rng, token):
    form = rng.randrange(8)
    if form == 0:
        return ("Authorization", "UpToken " + token)
    if form == 1:
        return ("Authorization", "uptoken " + token)
    if form == 2:
        return ("Authorization", "UpToken  " + token)
    if form == 3:
        return ("Authorization", "Bearer " + token)
    if form == 4:
        return ("Authorization", token)
    if form == 5:
        return ("authorization", "UpToken " + token)
    return ("Authorization", "UpToken " + token)


def good_token(**fields):
    return token(policy(**fields))


# --- up-server families ----------------------------------------------------------------------

def up_token_paths(rng, c):
    """Every upload path with a token that must be refused."""
    tok, kind = bad_token_kind(rng, c)
    data, complete, label = _up_token_paths(rng, c, tok)
    return data, complete, label.replace("token/", "token-refuse/" if kind in MUST_REFUSE else "token-other/")


def _up_token_paths(rng, c, tok):
    which = rng.randrange(6)
    body = rnd_bytes(rng, rng.randint(0, 64))
    if which == 0:
        return request("POST", "/mkblk/" + str(max(1, len(body))), [auth_header(rng, tok)], body), True, "token/mkblk"
    if which == 1 and c.open_ctx:
        cx = rng.choice(c.open_ctx)
        return request("POST", f"/bput/{cx}/4", [auth_header(rng, tok)], b"abcd"), True, "token/bput"
    if which == 2 and c.ctx:
        return request("POST", f"/mkfile/4/key/{h.b64('demo/t')}", [auth_header(rng, tok)],
                       rng.choice(c.ctx).encode()), True, "token/mkfile"
    if which == 3:
        return request("POST", f"/put/{len(body)}/key/{h.b64('demo/t')}", [auth_header(rng, tok)], body), True, "token/put"
    if which == 4:
        return request("POST", f"/buckets/demo/objects/{h.b64('demo/t')}/uploads", [auth_header(rng, tok)]), True, "token/v2init"
    return form_request(rng, c, tok, simple_form=True), True, "token/form"


def num(rng):
    return rng.choice(NUMBERS) if rng.random() < 0.7 else str(rng.randint(-10, 5 << 20))


def seg(rng):
    r = rng.random()
    if r < 0.4:
        return rng.choice(SEGMENTS)
    if r < 0.6:
        return h.b64(rng.choice(KEYS))
    if r < 0.8:
        return num(rng)
    return mutate_text(rng, rng.choice(SEGMENTS) or "x")


def up_paths(rng, c):
    """Valid token, mutated path segments on every route."""
    tok = good_token(scope="demo")
    body = rnd_bytes(rng, rng.randint(0, 32))
    cx = rng.choice(c.ctx) if c.ctx and rng.random() < 0.5 else seg(rng)
    routes = [
        lambda: f"/mkblk/{num(rng)}",
        lambda: f"/mkblk/{num(rng)}/{seg(rng)}",
        lambda: f"/bput/{cx}/{num(rng)}",
        lambda: f"/bput/{seg(rng)}/{num(rng)}/{seg(rng)}",
        lambda: f"/mkfile/{num(rng)}" + "".join("/" + seg(rng) for _ in range(rng.randint(0, 8))),
        lambda: "/rs-mkfile/" + "/".join(seg(rng) for _ in range(rng.randint(0, 8))),
        lambda: f"/put/{num(rng)}" + "".join("/" + seg(rng) for _ in range(rng.randint(0, 6))),
        lambda: f"/putb64/{num(rng)}" + "".join("/" + seg(rng) for _ in range(rng.randint(0, 6))),
        lambda: f"/buckets/{seg(rng)}/objects/{seg(rng)}/uploads" + "".join("/" + seg(rng) for _ in range(rng.randint(0, 3))),
        lambda: f"/stat/{seg(rng)}",
        lambda: f"/download/{seg(rng)}",
        lambda: "/admin/outbox?state=" + seg(rng) + "&limit=" + num(rng),
        lambda: "/" + "/".join(seg(rng) for _ in range(rng.randint(0, 5))),
        lambda: "/healthz" + rng.choice(["", "?", "?a=%", "/x", "#x"]),
    ]
    target = rng.choice(routes)()
    if c.ctx and target.startswith("/mkfile"):
        body = ",".join(rng.sample(c.ctx, min(len(c.ctx), rng.randint(0, 3)))).encode()
        if rng.random() < 0.5:
            body = mutate_bytes(rng, body)
    method = rng.choice(["POST", "POST", "POST", "PUT", "GET", "DELETE"])
    if rng.random() < 0.05:
        target = target.replace("/", "//", 1)
    if rng.random() < 0.05:
        target = "http://127.0.0.1" + target  # absolute-form
    return request(method, target, [("Authorization", "UpToken " + tok)], body), True, "up/paths"


def up_ctx(rng, c):
    """Forged, mutated and cross-wired ctx values and offsets for bput and mkfile."""
    tok = good_token(scope="demo")
    base = rng.choice(c.open_ctx or c.ctx or ["AAAA"])
    kind = rng.randrange(6)
    if kind == 0:
        cx = mutate_text(rng, base)
    elif kind == 1:
        cx = base[:rng.randint(0, len(base))]
    elif kind == 2:
        cx = base + rng.choice(["A", "==", "-", "_" * 10])
    elif kind == 3:
        cx = h.b64(rnd_bytes(rng, rng.randint(0, 120)))
    elif kind == 4:
        cx = base.swapcase()
    else:
        cx = base
    if rng.random() < 0.5:
        return request("POST", f"/bput/{cx}/{num(rng)}", [("Authorization", "UpToken " + tok)],
                       rnd_bytes(rng, rng.randint(0, 16))), True, "up/ctx-bput"
    ctxs = [cx] + rng.sample(c.ctx, min(len(c.ctx), rng.randint(0, 2)))
    rng.shuffle(ctxs)
    sep = rng.choice([",", ",,", " ,", "\n", ";"])
    return request("POST", f"/mkfile/{num(rng)}/key/{h.b64('demo/ctx')}", [("Authorization", "UpToken " + tok)],
                   sep.join(ctxs).encode()), True, "up/ctx-mkfile"


def form_request(rng, c, tok, simple_form=False, key=None):
    boundary = "----fuzz" + str(rng.getrandbits(32))
    fields = [("token", tok)]
    if key is not None:
        fields.append(("key", key))
    parts = []
    for name, value in fields:
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode())
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="f.bin"\r\n'
                 f'Content-Type: application/octet-stream\r\n\r\n'.encode() + rnd_bytes(rng, rng.randint(0, 64)) + b"\r\n")
    body = b"".join(parts) + f"--{boundary}--\r\n".encode()
    return request("POST", "/", [("Content-Type", f"multipart/form-data; boundary={boundary}")], body)


def up_multipart(rng, c):
    """Broken multipart bodies on the form upload."""
    tok = good_token(scope="demo") if rng.random() < 0.8 else bad_token(rng, c)
    boundary = rng.choice(["b", "----fuzz", "x" * 70, "x" * 200, "a b", "\"q\"", "--", "é", ""])
    crlf = rng.choice([b"\r\n"] * 6 + [b"\n", b"\r", b""])
    fields = [("token", tok), ("key", "demo/" + rng.choice(KEYS)), ("x:a", "v"), ("crc32", rng.choice(["0", "x", "4294967296"])),
              ("fname", rng.choice(KEYS)), ("accept", "text/plain")]
    rng.shuffle(fields)
    fields = fields[:rng.randint(0, len(fields))]
    parts = []
    for name, value in fields:
        parts.append(b"--" + boundary.encode() + crlf + f'Content-Disposition: form-data; name="{name}"'.encode() + crlf + crlf
                     + value.encode() + crlf)
    file_part = (b"--" + boundary.encode() + crlf + b'Content-Disposition: form-data; name="file"; filename="'
                 + rng.choice(KEYS).encode() + b'"' + crlf + b"Content-Type: application/octet-stream" + crlf + crlf
                 + rnd_bytes(rng, rng.randint(0, 200)) + crlf)
    kind = rng.randrange(10)
    if kind == 0:
        parts.insert(rng.randint(0, len(parts)), b"X-Huge: " + b"h" * rng.choice([9000, 70000, 300000]) + crlf)
    if kind == 1:
        parts.append(file_part)
        parts.append(b"--" + boundary.encode() + crlf + b'Content-Disposition: form-data; name="token"' + crlf + crlf + tok.encode() + crlf)
    elif kind == 2:
        parts.append(file_part + file_part)
    elif kind == 3:
        parts.append(b"--" + boundary.encode() + crlf + b"Content-Type: text/plain" + crlf + crlf + b"no disposition" + crlf)
        parts.append(file_part)
    elif kind == 4:
        parts.append(b"--" + boundary.encode() + crlf + b'Content-Disposition: form-data; name="file"; filename="a' + b"a" * 100000 + b'"' + crlf + crlf + b"x" + crlf)
    else:
        parts.insert(rng.randint(0, len(parts)), file_part)
    ending = rng.choice([b"--" + boundary.encode() + b"--" + crlf, b"--" + boundary.encode() + b"--", b"", b"--" + boundary.encode() + crlf,
                         b"--other--\r\n"])
    body = b"".join(parts) + ending
    if rng.random() < 0.3:
        body = mutate_bytes(rng, body)
    ctype = rng.choice([f"multipart/form-data; boundary={boundary}"] * 5 + [f'multipart/form-data; boundary="{boundary}"',
                        "multipart/form-data", "multipart/form-data; boundary=other", rng.choice(CONTENT_TYPES),
                        f"multipart/form-data; boundary={boundary}; boundary=z", f"MULTIPART/FORM-DATA; BOUNDARY={boundary}"])
    return request("POST", "/", [("Content-Type", ctype)], body), True, "up/multipart"


def up_json(rng, c):
    """v2 complete (and init / part) with mutated JSON bodies."""
    tok = good_token(scope="demo")
    enc, upload_id = rng.choice(c.upload_ids) if c.upload_ids else (h.b64("demo/v2"), "nosuch")
    etag = rng.choice(c.part_etags) if c.part_etags else "x"
    docs = [
        {"parts": [{"partNumber": 1, "etag": etag}]},
        {"parts": [{"partNumber": rng.choice([0, -1, 10001, 2 ** 63, 1.5, "1", None]), "etag": etag}]},
        {"parts": [{"partNumber": 1, "etag": etag}] * rng.randint(2, 50)},
        {"parts": [], "fname": rng.choice(KEYS), "mimeType": "x/y", "metadata": {"x-qn-meta-a": "b"}, "customVars": {"x:a": "b"}},
        {"parts": "x"}, [], None, "str", 1e308, {"parts": [{"etag": None}]},
        {"parts": [{"partNumber": 1, "etag": etag}], "customVars": {"x:" + "a" * 1000: "b" * 100000}},
    ]
    text = json.dumps(rng.choice(docs))
    kind = rng.randrange(8)
    if kind == 0:
        text = "[" * rng.choice([255, 256, 257, 5000, 100000]) + "]" * rng.randint(0, 10)
    elif kind == 1:
        text = '{"a":' * rng.choice([300, 20000]) + "1" + "}" * 10
    elif kind == 2:
        text = mutate_text(rng, text)
    elif kind == 3:
        text = rng.choice(['"\\ud800"', '{"parts":[{"partNumber":1,"etag":"\\u0000"}]}', "1" * 5000, "-", "{\"a\":1,}", "\xef\xbb\xbf{}",
                           '{"parts":[{"partNumber":1e400,"etag":"x"}]}', "NaN", "{\"parts\":[]}" + "x", "\"" + "\\" * 3001 + "\""])
    body = text.encode("utf-8", "surrogateescape")
    if rng.random() < 0.15:
        return request("PUT", f"/buckets/demo/objects/{enc}/uploads/{upload_id}/{num(rng)}",
                       [("Authorization", "UpToken " + tok), ("Content-MD5", rng.choice(["", "x", "0" * 32, "AAAA"]))],
                       rnd_bytes(rng, rng.randint(0, 64))), True, "up/v2-part"
    if rng.random() < 0.1:
        return request("POST", f"/buckets/demo/objects/{enc}/uploads", [("Authorization", "UpToken " + tok)], body), True, "up/v2-init"
    return request("POST", f"/buckets/demo/objects/{enc}/uploads/{upload_id}",
                   [("Authorization", "UpToken " + tok), ("Content-Type", rng.choice(["application/json", "text/plain"]))],
                   body), True, "up/v2-complete"


def up_escape(rng, c):
    """Valid uploads whose key tries to escape the data dir (must store the key as data only)."""
    mark = f"{c.marker}-{rng.getrandbits(24)}"
    key = rng.choice(["../../", "../../../../", "/tmp/", "../../../../../../tmp/", "..\\..\\", "blobs/../../", "./", ""]) + mark
    tok = good_token(scope="demo")
    body = rnd_bytes(rng, rng.randint(1, 32))
    which = rng.randrange(4)
    if which == 0:
        return form_request(rng, c, tok, key=key), True, "up/escape-form"
    if which == 1:
        return request("POST", f"/put/{len(body)}/key/{h.b64(key)}/fname/{h.b64(key)}",
                       [("Authorization", "UpToken " + tok)], body), True, "up/escape-put"
    if which == 2:
        return request("POST", f"/buckets/demo/objects/{h.b64(key)}/uploads", [("Authorization", "UpToken " + tok)]), True, "up/escape-v2"
    if c.ctx:
        return request("POST", f"/mkfile/4/key/{h.b64(key)}", [("Authorization", "UpToken " + tok)],
                       rng.choice(c.ctx).encode()), True, "up/escape-mkfile"
    return request("GET", "/healthz"), True, "up/escape-none"


# --- shared families (both servers) ----------------------------------------------------------

def headers_family(targets):
    def gen(rng, c):
        method, target, hdrs, body = rng.choice(targets)(rng, c)
        kind = rng.randrange(12)
        complete = True
        hdrs = list(hdrs)
        extra = []
        content_length = True
        if kind == 0:
            extra.append(("X-Huge", "h" * rng.choice([8000, 16000, 70000, 1 << 20])))
        elif kind == 1:
            extra += [("X-Many-" + str(i), "v") for i in range(rng.choice([100, 1000, 5000]))]
        elif kind == 2:
            extra += [("Content-Length", str(len(body))), ("Content-Length", str(len(body) + rng.randint(0, 5)))]
            content_length = False
        elif kind == 3:
            content_length = False  # no Content-Length with a body
            complete = not body
        elif kind == 4:
            extra.append(("Transfer-Encoding", rng.choice(["chunked", "gzip", "chunked, gzip", "identity", "x", "chunked\x00", "CHUNKED"])))
            extra.append(("Content-Length", str(len(body))))
            content_length = False
            complete = False  # framing is ambiguous; the server may wait
        elif kind == 5:
            extra.append(("Transfer-Encoding", "chunked"))
            chunks = b""
            for i in range(0, len(body), 7):
                chunks += b"%x\r\n" % len(body[i:i + 7]) + body[i:i + 7] + b"\r\n"
            body = chunks + rng.choice([b"0\r\n\r\n", b"0\r\n", b"fffffffffffffffff\r\n", b"-1\r\n\r\n", b"z\r\n\r\n", b""])
            complete = body.endswith(b"0\r\n\r\n")
            if not complete:
                body = body  # truncated chunked: the server may wait
            content_length = False
        elif kind == 6:
            hdrs = [(n, rng.choice(CONTENT_TYPES)) if n.lower() == "content-type" else (n, v) for n, v in hdrs]
            extra.append(("Content-Type", rng.choice(CONTENT_TYPES)))
        elif kind == 7:
            extra.append(("Content-Length", rng.choice(["-1", "abc", "18446744073709551616", "1e3", " 0", "0x10", "", "99999999999"])))
            content_length = False
            complete = False
        elif kind == 8:
            extra += [("Authorization", v) for _, v in hdrs if _.lower() == "authorization"] * 2
            extra.append(("Host", "evil.example"))
        elif kind == 9:
            extra.append(("X-Reqid", rng.choice(["a" * 5000, "\x01\x02", "ok-1", "../../", "\"\\", "é"])))
        elif kind == 10:
            extra.append(("Expect", rng.choice(["100-continue", "999-x", ""])))
        else:
            extra.append((rng.choice(["", " ", "Bad Name", "X\x00", ":", "X-Ünicode"]), "v"))
        data = request(method, target, hdrs + extra, body, content_length=content_length)
        return data, complete, "headers"
    return gen


def garbage(rng, c):
    kind = rng.randrange(9)
    if kind == 0:
        return rnd_bytes(rng, rng.randint(1, 4096)), False, "garbage/random"
    if kind == 1:
        return (rng.choice(METHODS) + " " + rng.choice(["/", "*", "", "/healthz", "http://x/", "/%00", "\x00"]) + " "
                + rng.choice(["HTTP/1.1", "HTTP/1.0", "HTTP/2.0", "HTTP/9.9", "HTTP/1", "", "http/1.1", "HTTP/1.1 x"])
                + "\r\nHost: x\r\nConnection: close\r\n\r\n").encode("latin-1"), True, "garbage/requestline"
    if kind == 2:
        return b"\r\n" * rng.randint(1, 1000), False, "garbage/crlf"
    if kind == 3:
        return b"GET /" + b"a" * rng.choice([4000, 9000, 70000, 300000]) + b" HTTP/1.1\r\nConnection: close\r\n\r\n", True, "garbage/longline"
    if kind == 4:
        return b"GET /healthz HTTP/1.1\n" + b"Host: x\nConnection: close\n\n", True, "garbage/lf"
    if kind == 5:
        req = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
        return req * rng.randint(2, 50), True, "garbage/pipeline"
    if kind == 6:
        return b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + rnd_bytes(rng, 200), False, "garbage/tls"
    if kind == 7:
        return b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + rnd_bytes(rng, 50), False, "garbage/h2"
    return mutate_bytes(rng, request("GET", "/healthz"), rng.randint(1, 10)), False, "garbage/mutated"


# --- biz-server families ---------------------------------------------------------------------

API_KEY = h.API_KEY


def bearer(rng):
    r = rng.random()
    if r < 0.6:
        return [("Authorization", "Bearer " + API_KEY)]
    if r < 0.7:
        return []
    return [("Authorization", rng.choice(["Bearer", "Bearer ", "bearer " + API_KEY, "Bearer other-key", "Basic eDp5",
                                          "Bearer " + "k" * 600, "Bearer  " + API_KEY + " ", "Bearer dev-api-keyX",
                                          "Bearer \x00", "Token " + API_KEY]))]


def biz_uptoken(rng, c):
    docs = [{}, {"key": "demo/" + rng.choice(KEYS)}, {"key": rng.choice(KEYS)}, {"fsize": rng.choice([0, -1, 2 ** 63, 1.5, "1", 17179869185])},
            {"vars": {"x:" + rng.choice(["a", "", "a" * 65, "é", "a b"]): rng.choice(["v", "$(key)", "x" * 1025, "\u0000"])}},
            {"vars": {f"x:v{i}": "v" for i in range(rng.choice([20, 21, 500]))}},
            {"traceId": rng.choice(["short", "a" * 65, "good_trace_id", "\u0000" * 8])}, {"unknown": 1},
            {"mimeType": rng.choice(["image/png", "", "x" * 1000])}, {"fname": rng.choice(KEYS)}, [], None, 1, "s"]
    doc = rng.choice(docs)
    if isinstance(doc, dict) and rng.random() < 0.5:
        doc = dict(doc, **rng.choice(docs[:10]))
    text = json.dumps(doc)
    kind = rng.randrange(6)
    if kind == 0:
        text = mutate_text(rng, text)
    elif kind == 1:
        text = "[" * rng.choice([256, 257, 16000]) + "]"
    elif kind == 2:
        text = '{"key":"' + "a" * rng.choice([16000, 17000, 70000]) + '"}'
    elif kind == 3:
        text = rng.choice(['{"key":"demo/a","key":"demo/b"}', '{"key":"\\ud800"}', '{"fsize":1e400}', "{", "", "\xef\xbb\xbf{}"])
    ctype = rng.choice(["application/json"] * 4 + CONTENT_TYPES)
    return request("POST", "/v1/uptoken", bearer(rng) + [("Content-Type", ctype)], text.encode("utf-8", "surrogateescape")), True, "biz/uptoken"


def callback_body(rng, c):
    fields = [("bucket", "demo"), ("key", "demo/" + rng.choice(KEYS)), ("hash", rng.choice(["Fu-hash", "", "x" * 5000])),
              ("fsize", rng.choice(["4", "-1", "x", "99999999999999999999", ""])), ("mimeType", "a/b"), ("fname", rng.choice(KEYS)),
              ("endUser", "demo"), ("clientId", rng.choice(["demo", "other", "", "nosuch"])), ("traceId", "t"), ("x:app", "v")]
    rng.shuffle(fields)
    fields = fields[:rng.randint(0, len(fields))] + ([rng.choice(fields)] if rng.random() < 0.1 else [])
    from urllib.parse import quote
    body = "&".join(quote(k, safe=":") + "=" + quote(v) for k, v in fields).encode()
    if rng.random() < 0.2:
        body = mutate_bytes(rng, body)
    return body


def biz_callback(rng, c):
    """Callbacks: forged, stale, tampered, and validly signed but malformed (the parser after auth)."""
    form = "application/x-www-form-urlencoded"
    target = rng.choice(["/v1/callback"] * 6 + ["/v1/callback?x=1", "/v1/callback?", "/v1/callback/", "/v1/callback?%zz"])
    if rng.random() < 0.3:
        body = json.dumps(rng.choice([{"bucket": "demo", "key": "demo/j", "hash": "h", "fsize": 1, "vars": {"x:a": "b"}},
                                      {"bucket": 1}, [], {"vars": "x"}, {"bucket": "demo", "key": "k", "hash": "h", "fsize": -1}])).encode()
        ctype = "application/json"
    else:
        body = callback_body(rng, c)
        ctype = rng.choice([form] * 5 + ["application/x-www-form-urlencoded; charset=utf-8", "text/plain", ""])
    kind = rng.randrange(7)
    if kind <= 2:
        auth = h.qbox_authorization(target, body, ctype)  # valid: exercises the parser
    elif kind == 3:
        auth = h.qbox_authorization(target, body, ctype, sk="wrong")
    elif kind == 4:
        old = rng.choice(["20200101T000000Z", "29991231T235959Z", "garbage", "20260101T000000"])
        auth = h.qiniu_authorization("POST", target, c.biz_host, ctype, body, [("X-Qiniu-Date", old)])
        return request("POST", target, [("Authorization", auth), ("Content-Type", ctype), ("X-Qiniu-Date", old)],
                       body, host=c.biz_host), True, "biz/callback-stale"
    elif kind == 5:
        auth = rng.choice(["QBox", "QBox ", "QBox :", "QBox dev-access-key:", "Qiniu x:y", "QBox dev-access-key:" + "A" * 28,
                           "QBox " + "a" * 9000, mutate_text(rng, h.qbox_authorization(target, body, form))])
    else:
        auth = h.qbox_authorization(target, body, form, ak="foreign-ak")
    hdrs = [("Authorization", auth)] + ([("Content-Type", ctype)] if ctype else [])
    return request("POST", target, hdrs, body), True, "biz/callback"


def biz_uploads(rng, c):
    rid = rng.choice(c.record_ids) if c.record_ids and rng.random() < 0.5 else seg(rng)
    target = rng.choice([
        lambda: "/v1/uploads?limit=" + num(rng) + "&after=" + seg(rng),
        lambda: "/v1/uploads?" + mutate_text(rng, "limit=10&after=abc"),
        lambda: "/v1/uploads/" + rid,
        lambda: "/v1/uploads/" + rid + "/" + seg(rng),
        lambda: "/v1/" + seg(rng),
        lambda: "/" + "/".join(seg(rng) for _ in range(rng.randint(0, 4))),
        lambda: "/metrics" + rng.choice(["", "?x", "/"]),
    ])()
    method = rng.choice(["GET"] * 5 + ["POST", "DELETE", "PUT", "HEAD", "OPTIONS"])
    return request(method, target, bearer(rng), b"" if method == "GET" else rnd_bytes(rng, rng.randint(0, 20))), True, "biz/uploads"


# Targets the header family wraps: (method, target, headers, body).
def up_base(rng, c):
    tok = good_token(scope="demo")
    return rng.choice([
        ("POST", "/mkblk/4", [("Authorization", "UpToken " + tok)], b"abcd"),
        ("POST", f"/put/4/key/{h.b64('demo/h')}", [("Authorization", "UpToken " + tok)], b"abcd"),
        ("GET", "/healthz", [], b""),
        ("POST", "/buckets/demo/objects/~/uploads", [("Authorization", "UpToken " + tok)], b""),
    ])


def biz_base(rng, c):
    return rng.choice([
        ("POST", "/v1/uptoken", [("Authorization", "Bearer " + API_KEY), ("Content-Type", "application/json")], b'{"key":"demo/h"}'),
        ("GET", "/v1/uploads?limit=2", [("Authorization", "Bearer " + API_KEY)], b""),
        ("GET", "/healthz", [], b""),
        ("POST", "/v1/callback", [("Content-Type", "application/x-www-form-urlencoded")], b"bucket=demo"),
    ])


UP_FAMILIES = [(up_token_paths, 14), (up_paths, 20), (up_ctx, 12), (up_multipart, 14), (up_json, 12), (up_escape, 4),
               (headers_family([up_base]), 12), (garbage, 12)]
BIZ_FAMILIES = [(biz_uptoken, 30), (biz_callback, 30), (biz_uploads, 14), (headers_family([biz_base]), 14), (garbage, 12)]


def pick(rng, families):
    total = sum(w for _, w in families)
    r = rng.uniform(0, total)
    for gen, w in families:
        r -= w
        if r <= 0:
            return gen
    return families[-1][0]
