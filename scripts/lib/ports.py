"""free_port() / free_ports(n): TCP ports on 127.0.0.1 that nothing holds, for the servers tests
and benchmarks start.

The one picker of scripts/ (common.sh's free_port, postgres.sh, seaweedfs.sh and the harness all
call it; `python3 ports.py [N]` prints N distinct ports). It picks below the kernel's ephemeral range
(net.ipv4.ip_local_port_range) instead of binding port 0: bind(0) hands out a port from that
range, and the range is also where every outgoing connection takes its local port, so between
the pick and the server's own bind a client connection (a readiness probe polling another
server, say) could take it and the server fails with "address already in use". No outgoing
connection is ever given a port below the range.
"""
import random
import socket

FLOOR = 10000  # above the ports services usually listen on


def ephemeral_range():
    """The kernel's (low, high) range for outgoing connections' local ports."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range", encoding="ascii") as f:
            low, high = (int(v) for v in f.read().split())
        return low, high
    except (OSError, ValueError):
        return 32768, 60999  # Linux's default


def _bound_socket():
    """A socket bound to 127.0.0.1 on a port below the ephemeral range when there is room."""
    low, _ = ephemeral_range()
    if low - FLOOR >= 1000:
        for _ in range(200):
            s = socket.socket()
            try:
                s.bind(("127.0.0.1", random.randrange(FLOOR, low)))  # no SO_REUSEADDR: TIME_WAIT ports are passed over
                return s
            except OSError:
                s.close()
    s = socket.socket()  # no room below the range (or nothing free there): the kernel's choice
    s.bind(("127.0.0.1", 0))
    return s


def free_ports(count):
    """`count` distinct ports that bind right now (each held until all are picked)."""
    held = []
    try:
        for _ in range(count):
            held.append(_bound_socket())
        return [s.getsockname()[1] for s in held]
    finally:
        for s in held:
            s.close()


def free_port():
    """One port that binds on 127.0.0.1 right now."""
    return free_ports(1)[0]


if __name__ == "__main__":  # ports.py [N]: N distinct ports (default 1) on one line
    import sys
    print(" ".join(str(p) for p in free_ports(int(sys.argv[1]) if len(sys.argv) > 1 else 1)))
