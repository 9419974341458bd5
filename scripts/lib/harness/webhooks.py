"""The app's webhook endpoint, as suites and conformance tests need it: a loopback HTTP receiver
that verifies every delivery with the Standard Webhooks oracle (PyPI `standardwebhooks`), never
with the product's code, and remembers every attempt.

    from harness.webhooks import Receiver
    receiver = Receiver({"/hook": SECRET}).start()     # receiver.url("/hook") goes into the config
    ...
    receiver.delivered(webhook_id)                     # verified attempts answered 2xx

A request is verified against the secret of its path (an unknown path, or a signature that does
not verify, is answered 400). `respond(path, event)` may choose the status of a verified request
(a receiver failing on purpose, or gone: 410); by default it is 204. Every answer closes its
connection, so a stopped receiver refuses the next delivery instead of taking it on a connection
opened before it stopped. `stop()` and `start()` again keep the port.
"""
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks.webhooks import Webhook


class Receiver:
    def __init__(self, secrets, respond=None, port=0):
        self.secrets = dict(secrets)
        self.respond = respond or (lambda path, event: 204)
        self.port = port
        self.lock = threading.Lock()
        self.attempts = []          # dict(path, id, ts, verified, status, body, headers, event, key)
        self.server = None

    def url(self, path):
        return f"http://127.0.0.1:{self.port}{path}"

    def start(self):
        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), self._handler())
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self):
        self.server.shutdown()
        self.server.server_close()

    def _handler(self):
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                headers = {k.lower(): v for k, v in self.headers.items()}
                event, verified = receiver._verify(self.path, body, headers)
                with receiver.lock:
                    status = receiver.respond(self.path, event) if verified else 400
                    receiver.attempts.append(dict(
                        path=self.path, id=headers.get("webhook-id"), ts=headers.get("webhook-timestamp"),
                        verified=verified, status=status, body=body, headers=headers, event=event,
                        key=((event or {}).get("data") or {}).get("key")))
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.send_header("Connection", "close")
                self.close_connection = True
                self.end_headers()

        return Handler

    def _verify(self, path, body, headers):
        secret = self.secrets.get(path)
        if secret is None:
            return None, False
        try:
            return Webhook(secret).verify(body, headers), True
        except Exception:  # noqa: BLE001 - any verification failure is a refusal
            return None, False

    def snapshot(self):
        with self.lock:
            return list(self.attempts)

    def tries(self, webhook_id, path="/hook"):
        return [a for a in self.snapshot() if a["path"] == path and a["id"] == webhook_id]

    def delivered(self, webhook_id, path="/hook"):
        return [a for a in self.tries(webhook_id, path) if a["verified"] and 200 <= a["status"] < 300]

    def wait_delivered(self, webhook_id, path="/hook", timeout=25):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.delivered(webhook_id, path):
                return True
            time.sleep(0.1)
        return False
