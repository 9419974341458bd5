#!/usr/bin/env python3
"""The Python peer of scripts/bench/token: what `POST /v1/uptoken` costs when written the obvious way
with the standard library and the official Qiniu SDK (qiniu==7.18.0).

    token_peer.py --config Config/biz-server.json --port N

It does the same work per request as biz-server: check the Bearer key by SHA-256 against the
configured clients, parse the JSON body, check the key prefix and declared size, build the same
policy shape (scope bucket:key, deadline, endUser, fsizeLimit, callbackUrl, form callbackBody with
the client's constants, callbackBodyType), sign it with `Auth.upload_token`, and answer the same JSON
shape with a Content-Length, over HTTP/1.1 keep-alive. It is a yardstick, not a server to deploy:
no rate limit, no logging, only the token route and /healthz.
"""
import argparse
import hashlib
import hmac
import json
import secrets
import sys
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from qiniu import Auth

# Names the up server fills in, in biz-server's callback-body order (TokenIssuer.magicFields).
MAGIC_FIELDS = [("bucket", "bucket"), ("key", "key"), ("hash", "etag"), ("fsize", "fsize"),
                ("mimeType", "mimeType"), ("fname", "fname"), ("endUser", "endUser")]


def percent(text):
    # Unreserved characters only, like biz-server's FormURLEncoding: `$ ( & =` in a value stay inert.
    return urllib.parse.quote(text, safe="-_.~")


class Peer:
    def __init__(self, config, port):
        self.auth = Auth(config["accessKey"], config["secretKey"])
        self.up_hosts = config["upHosts"]
        self.clients = {c["apiKeySHA256"].lower(): c for c in config["clients"]}
        self.callback_url = f"http://{config.get('host', '127.0.0.1')}:{port}/v1/callback"

    def client_for(self, authorization):
        if not authorization or not authorization.startswith("Bearer "):
            return None
        digest = hashlib.sha256(authorization[7:].encode()).hexdigest()
        # Constant-time comparison against every client, as a real server should.
        found = None
        for stored, client in self.clients.items():
            if hmac.compare_digest(stored, digest):
                found = client
        return found

    def issue(self, client, request):
        """Returns (status, JSON-able body)."""
        if not isinstance(request, dict):
            return 400, {"error": "invalid_request", "message": "body must be a JSON object"}
        key = request.get("key")
        prefix = client.get("keyPrefix", "")
        if key is not None and (not isinstance(key, str) or not key.startswith(prefix)):
            return 403, {"error": "key_outside_prefix"}
        fsize = request.get("fsize")
        if fsize is not None:
            if not isinstance(fsize, int) or fsize < 0:
                return 400, {"error": "invalid_request", "message": "fsize must be a non-negative integer"}
            if "fsizeLimit" in client and fsize > client["fsizeLimit"]:
                return 413, {"error": "file_too_large"}
        trace_id = request.get("traceId") or secrets.token_urlsafe(12)
        constants = [("clientId", client["id"]), ("traceId", trace_id)]
        constants += sorted(client.get("vars", {}).items())
        callback_body = "&".join([f"{name}=$({var})" for name, var in MAGIC_FIELDS] +
                                 [f"{percent(n)}={percent(v)}" for n, v in constants])
        policy = {
            "endUser": client.get("endUser", client["id"]),
            "callbackUrl": self.callback_url,
            "callbackBody": callback_body,
            "callbackBodyType": "application/x-www-form-urlencoded",
        }
        if key is None:
            policy.update(isPrefixalScope=1, saveKey=prefix + "$(etag)$(ext)", forceSaveKey=True)
        if client.get("insertOnly"):
            policy["insertOnly"] = 1
        for name in ("fsizeMin", "fsizeLimit", "mimeLimit", "returnBody"):
            if name in client:
                policy[name] = client[name]
        lifetime = client.get("tokenLifetimeSeconds", 3600)
        # upload_token computes the deadline from time.time() itself; this is the same second.
        expires_at = int(time.time()) + lifetime
        token = self.auth.upload_token(client["bucket"], key if key is not None else prefix, lifetime, policy)
        return 200, {"uptoken": token, "bucket": client["bucket"], "key": key, "expiresAt": expires_at,
                     "upHosts": self.up_hosts, "traceId": trace_id}


class Handler(BaseHTTPRequestHandler):
    # Keep-alive, like biz-server and nginx; HTTP/1.0 would reconnect for every request.
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes; with Nagle on, the body waits for the peer's
    # delayed ACK (~40 ms) and the benchmark would measure that stall, not Python (DESIGN.md).
    disable_nagle_algorithm = True
    peer = None  # set in main()

    def log_message(self, format, *args):
        pass  # no access log: nginx runs with access_log off as well

    def reply(self, status, body):
        data = json.dumps(body, separators=(",", ":")).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/healthz":
            self.reply(200, {"status": "ok"})
        else:
            self.reply(404, {"error": "not_found"})

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.path != "/v1/uptoken":
            return self.reply(404, {"error": "not_found"})
        client = self.peer.client_for(self.headers.get("Authorization"))
        if client is None:
            return self.reply(401, {"error": "unauthorized"})
        try:
            request = json.loads(raw) if raw else {}
        except ValueError:
            return self.reply(400, {"error": "invalid_request", "message": "body is not valid JSON"})
        self.reply(*self.peer.issue(client, request))


class Server(ThreadingHTTPServer):
    # The stdlib default backlog is 5: 64 connections opened at once would see dropped SYNs and
    # second-long retransmits, which is a listen() setting, not the cost of the work.
    request_queue_size = 1024
    daemon_threads = True

    def handle_error(self, request, client_address):
        # wrk resets its connections when a run ends; that is not worth a traceback.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", required=True, help="biz-server JSON configuration (keys, clients)")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    args = ap.parse_args()
    with open(args.config, encoding="utf-8") as f:
        config = json.load(f)
    Handler.peer = Peer(config, args.port)
    server = Server((args.host, args.port), Handler)
    print(f"token_peer: listening on http://{args.host}:{args.port}", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
