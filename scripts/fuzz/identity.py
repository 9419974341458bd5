"""Generators for biz-server's end-user JWTs and its admin API (issue 11): malformed JWTs in
POST /v1/uptoken (truncated, huge, bad base64, bad JSON, nested, numeric claims as strings, and
well-signed HS256 tokens whose claims are wrong) and /v1/admin/keys, /v1/admin/webhooks/...
requests with and without the admin token. Each family's answers must be in its DOCUMENTED set
(fuzz.py tallies the others as undocumented; verdict.py fails on any)."""
import base64
import hashlib
import hmac
import json
import time

from rawhttp import request

# scripts/fuzz/run writes these into the fuzzed biz-server's configuration (jwt block, admin token).
HS256_SECRET = "fuzz-hs256-secret-0123456789abcdef-0123456789"
ISSUER = "https://fuzz.example/"
AUDIENCE = "upgate"
ADMIN_TOKEN = "fuzz-admin-token-0123456789abcdef"

# What each family may answer (README "Fuzzing"): refusals are the documented 4xx of the API;
# 200/201 only where a request can be valid (admin calls with the token).
DOCUMENTED = {
    "token-refuse/jwt": {400, 401, 403, 413, 429, 431},
    "biz/admin": {200, 201, 400, 401, 404, 405, 409, 413, 414, 429, 431},
}


def b64u(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def sign_hs256(header, claims):
    head = b64u(json.dumps(header).encode()) + "." + b64u(json.dumps(claims).encode())
    mac = hmac.new(HS256_SECRET.encode(), head.encode(), hashlib.sha256).digest()
    return head + "." + b64u(mac)


def claims(**changes):
    now = int(time.time())
    base = {"iss": ISSUER, "aud": AUDIENCE, "sub": "fuzz-user", "exp": now + 600, "nbf": now - 5, "iat": now}
    base.update(changes)
    return {k: v for k, v in base.items() if v is not DROP}


DROP = object()


def _wrong_claims(rng):
    """Claims every one of which biz-server must refuse (an exp far in the future, or an extra
    claim, is a valid token: not here)."""
    now = int(time.time())
    return rng.choice([
        claims(exp=str(now + 600)), claims(nbf=str(now)), claims(iat="now"), claims(exp=now - 3600),
        claims(nbf=now + 3600), claims(exp=-1),
        claims(exp=True), claims(exp=None), claims(exp=[now]), claims(iss="https://evil.example/"),
        claims(iss=1), claims(aud="other"), claims(aud=["x", "y"]), claims(aud=[]), claims(aud={"a": 1}),
        claims(aud=7), claims(sub=DROP), claims(sub=""), claims(sub=12), claims(sub="a/b"), claims(sub=".."),
        claims(sub="x\u0000y"), claims(sub="u" * 129), claims(exp=DROP),
        claims(sub={"nested": claims()}), claims(sub=claims()["sub"], aud={"deep": [[[[[[[[[[{}]]]]]]]]]]}),
    ])


def jwt(rng):
    """One bearer that looks like a JWT (three dot-separated parts) or nearly."""
    header = {"alg": "HS256", "typ": "JWT"}
    good = sign_hs256(header, claims())
    kind = rng.randrange(12)
    if kind == 0:  # truncated
        return good[:rng.randrange(1, len(good))]
    if kind == 1:  # huge
        n = rng.choice([4000, 7000, 60000])
        return b64u(b"{" * 3) + "." + "A" * n + "." + "B" * 43
    if kind == 2:  # bad base64
        parts = good.split(".")
        i = rng.randrange(3)
        parts[i] = rng.choice(["!!", "a=b", "+/+/", "%41", " ", "\u00e9", "A", parts[i] + "="])
        return ".".join(parts)
    if kind == 3:  # bad JSON
        text = rng.choice([b"{", b"[]", b"null", b'"s"', b'{"alg":1}', b'{"alg":"HS256","alg":"none"}',
                           b"\xff\xfe", b'{"alg":"HS256"}x', b"[" * 300 + b"]" * 300, b'{"alg":"HS256","crit":["x"]}'])
        if rng.random() < 0.5:
            return b64u(text) + "." + b64u(json.dumps(claims()).encode()) + "." + b64u(b"s" * 32)
        return b64u(json.dumps(header).encode()) + "." + b64u(text) + "." + b64u(b"s" * 32)
    if kind == 4:  # nested: a token inside a token, a JWE's five parts, deep JSON
        return rng.choice([sign_hs256({"alg": "HS256", "cty": "JWT"}, {"jwt": good}),
                           b64u(good.encode()) + "." + b64u(good.encode()) + "." + b64u(b"x"),
                           ".".join(["eyJhbGciOiJSU0EtT0FFUCJ9"] * 5), good + "." + good,
                           sign_hs256(header, {"a": json.loads("[" * 40 + "1" + "]" * 40)})])
    if kind == 5:  # algorithm games
        alg = rng.choice(["none", "None", "RS256", "ES256", "EdDSA", "HS512", "", "HS256 "])
        head = {"alg": alg, "kid": rng.choice(["dev-rs256-1", "nope", "", "k" * 300])}
        text = b64u(json.dumps(head).encode()) + "." + b64u(json.dumps(claims()).encode()) + "."
        return text + rng.choice(["", b64u(b"x" * 256), good.split(".")[2]])
    if kind <= 8:  # well signed, claims wrong (numeric claims as strings and more)
        return sign_hs256(header, _wrong_claims(rng))
    if kind == 9:  # bad signature
        return good[:-4] + rng.choice(["AAAA", "____", "aaaa"])
    if kind == 10:
        return rng.choice(["..", "a..", ".b.", "a.b.c.d", "...", "a.b.", "eyJ.eyJ.x"])
    return sign_hs256({"alg": "HS256", "typ": "JWT", "kid": 5}, claims())


def biz_jwt(rng, c):
    """POST /v1/uptoken with a malformed or wrong end-user JWT: a 2xx is an auth bypass."""
    token = jwt(rng)
    body = json.dumps(rng.choice([{}, {"key": "users/fuzz-user/a"}, {"key": "demo/x"}])).encode()
    headers = [("Authorization", "Bearer " + token), ("Content-Type", "application/json")]
    data = request("POST", "/v1/uptoken", headers, body)
    return data, True, "token-refuse/jwt"


def biz_admin(rng, c):
    """The admin API: keys and webhooks, with the token, without, or with a wrong one."""
    auth = rng.choice([[("Authorization", "Bearer " + ADMIN_TOKEN)]] * 4
                      + [[], [("Authorization", "Bearer wrong-admin-token-000000")], [("Authorization", "Bearer " + "t" * 600)],
                         [("Authorization", "Basic " + ADMIN_TOKEN)]])
    ident = rng.choice(["1", "0", "-1", "999999999", "99999999999999999999", "abc", "1e3", "", "%00", "1/2", " 1"])
    method, target, body = rng.choice([
        ("GET", "/v1/admin/webhooks/deliveries?state=" + rng.choice(["pending", "delivered", "dead", "claimed", "", "x" * 300]), b""),
        ("GET", "/v1/admin/webhooks/deliveries?limit=" + rng.choice(["1", "0", "-5", "x", "1001", "9" * 30]) + "&before=" + ident, b""),
        ("GET", "/v1/admin/webhooks/deliveries?state=dead&state=pending", b""),
        ("POST", f"/v1/admin/webhooks/deliveries/{ident}/retry", b""),
        ("POST", "/v1/admin/webhooks/test", rng.choice([b"", b"{}", b'{"url":"http://127.0.0.1:1/none"}', b"[", b'{"url":1}',
                                                        b'{"x":1}', b'{"url":null}', b"{" * 300, b"x" * 5000])),
        ("DELETE", "/v1/admin/webhooks/test", b""),
        ("GET", "/v1/admin/keys?client=" + rng.choice(["demo", "", "nosuch", "x" * 300]), b""),
        ("POST", "/v1/admin/keys", rng.choice([b'{"client":"nosuch"}', b'{"client":1}', b"{", b'{"client":"demo","expires":"x"}',
                                               b'{"client":"demo","bogus":1}', b"[]", b""])),
        ("DELETE", "/v1/admin/keys/" + ident, b""),
        ("PUT", "/v1/admin/webhooks/deliveries", b""),
    ])
    headers = auth + ([("Content-Type", "application/json")] if body else [])
    return request(method, target, headers, body), True, "biz/admin"


# Weights next to generators.BIZ_FAMILIES (which sum to 100).
FAMILIES = [(biz_jwt, 14), (biz_admin, 12)]
