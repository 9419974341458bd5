"""Raw-socket HTTP/1.1 exchanges for the fuzzer: send bytes, read the status line, classify.

No HTTP library on purpose: the requests the fuzzer sends are mostly not valid HTTP.
"""
import socket
import time

# Outcomes of one exchange.
ANSWERED = "answered"   # a status line came back
CLOSED = "closed"       # the server closed (or reset) without a status line: fine for garbage
WAITED = "waited"       # no answer within the short timeout of a request that was not complete
HANG = "hang"           # no answer within the hang timeout of a complete request
REFUSED = "refused"     # could not connect: the server is down


class Result:
    __slots__ = ("outcome", "status", "head", "elapsed")

    def __init__(self, outcome, status=None, head=b"", elapsed=0.0):
        self.outcome, self.status, self.head, self.elapsed = outcome, status, head, elapsed


def exchange(port, data, complete=True, hang_timeout=10.0, wait_timeout=0.5, read_body=True):
    """Sends `data` (bytes, or a list of byte strings sent one by one) to 127.0.0.1:port.

    complete: the request's framing is complete, so a healthy server must answer (or close)
    within hang_timeout; otherwise the server may legitimately wait for more, and a silence
    of wait_timeout ends the exchange as WAITED.
    """
    started = time.monotonic()
    timeout = hang_timeout if complete else wait_timeout
    try:
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    except OSError:
        return Result(REFUSED, elapsed=time.monotonic() - started)
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.settimeout(timeout)
        try:
            for piece in (data if isinstance(data, list) else [data]):
                sock.sendall(piece)
            if not complete:
                # Tell the server nothing more is coming: it should answer or close now, not wait.
                sock.shutdown(socket.SHUT_WR)
        except socket.timeout:
            # The server stopped reading (its buffers are full): it may answer anyway.
            pass
        except OSError:
            pass  # reset while sending: the server may have answered early; read below
        head = b""
        deadline = time.monotonic() + timeout
        while b"\r\n\r\n" not in head and len(head) < 65536:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            sock.settimeout(remaining)
            try:
                got = sock.recv(65536)
            except socket.timeout:
                break
            except OSError:
                got = b""
            if not got:
                break
            head += got
        elapsed = time.monotonic() - started
        if head.startswith(b"HTTP/"):
            status = None
            try:
                status = int(head.split(b" ", 2)[1][:3])
            except (IndexError, ValueError):
                pass
            if read_body and b"\r\n\r\n" in head:
                _drain(sock, head, min(timeout, 5.0))
            return Result(ANSWERED, status, head[:2048], elapsed)
        if head:
            return Result(ANSWERED, None, head[:2048], elapsed)  # garbage back: counted as an odd answer
        if time.monotonic() >= deadline - 0.01:
            return Result(HANG if complete else WAITED, elapsed=elapsed)
        return Result(CLOSED, elapsed=elapsed)
    finally:
        try:
            sock.close()
        except OSError:
            pass


def _drain(sock, head, timeout, cap=1 << 20):
    """Reads the body announced by Content-Length (at most cap bytes), so a slow body shows."""
    header_end = head.index(b"\r\n\r\n") + 4
    length = None
    for line in head[:header_end].split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            try:
                length = int(value.strip())
            except ValueError:
                return
    if length is None:
        return
    have = len(head) - header_end
    want = min(length, cap)
    deadline = time.monotonic() + timeout
    while have < want:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return
        sock.settimeout(remaining)
        try:
            got = sock.recv(65536)
        except OSError:
            return
        if not got:
            return
        have += len(got)


def request(method, target, headers=(), body=b"", host="127.0.0.1", close=True, content_length=True):
    """Builds request bytes. headers: list of (name, value) as str or bytes."""
    def b(x):
        return x if isinstance(x, bytes) else str(x).encode("utf-8", "surrogateescape")
    lines = [b(method) + b" " + b(target) + b" HTTP/1.1", b"Host: " + b(host)]
    names = set()
    for name, value in headers:
        lines.append(b(name) + b": " + b(value))
        names.add(b(name).lower())
    if content_length and b"content-length" not in names and b"transfer-encoding" not in names:
        lines.append(b"Content-Length: " + str(len(body)).encode())
    if close and b"connection" not in names:
        lines.append(b"Connection: close")
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


def simple(port, method, target, headers=(), body=b"", timeout=10.0, host="127.0.0.1"):
    """A well-formed exchange; returns (status, body bytes) or (None, b"")."""
    data = request(method, target, headers, body, host=host)
    try:
        sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    except OSError:
        return None, b""
    sock.settimeout(timeout)
    chunks = []
    try:
        sock.sendall(data)
        while True:
            got = sock.recv(65536)
            if not got:
                break
            chunks.append(got)
    except OSError:
        pass
    finally:
        sock.close()
    raw = b"".join(chunks)
    if not raw.startswith(b"HTTP/"):
        return None, b""
    head, _, rest = raw.partition(b"\r\n\r\n")
    try:
        status = int(head.split(b" ", 2)[1])
    except (IndexError, ValueError):
        return None, b""
    if b"transfer-encoding: chunked" in head.lower():
        rest = _dechunk(rest)
    return status, rest


def _dechunk(data):
    out, i = [], 0
    while i < len(data):
        j = data.find(b"\r\n", i)
        if j < 0:
            break
        try:
            size = int(data[i:j].split(b";")[0], 16)
        except ValueError:
            break
        if size == 0:
            break
        out.append(data[j + 2:j + 2 + size])
        i = j + 2 + size + 2
    return b"".join(out)
