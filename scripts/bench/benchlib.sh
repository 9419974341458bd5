# What the benchmarks share, on top of scripts/lib/common.sh (source that first, then this).
#
#   bench_init NAME ALL LAST "$@"   common_init NAME, cd to the repository, $command_line, then
#                              --quick / --check / --targets LIST / -h (usage: lines 2..LAST of $0)
#   bench_build PRODUCT...     the release binaries measured, in $bench_bin: built here, or taken
#                              as they are from BENCH_BIN=DIR (another build: scripts/bench/pairs)
#   want TARGET                whether TARGET is among --targets
#   settle                     sync the temp dir's disk, wait (bounded) for a calm machine
#   start_up [LEVEL] / stop_up a fresh release up-server (own data dir, own log) per run
#   up_cpu / up_hwm            its CPU seconds so far / its peak RSS (VmHWM, KiB)
#   verify_stat KEY SIZE ETAG  GET /stat (signed by the official SDK) must say SIZE and ETAG
#   start_nginx / run_nginx RUN  nginx's dav PUT and one timed `curl -T $file` into it (the ceiling)
#   record T RUN SECONDS BYTES [NOTE], median, median_of, range_of, max_of, range_plain   the figures
#   figure NAME VALUE          a figure for scripts/bench/run (into $BENCH_FIGURES when set)
#   now, elapsed, mbps, kib_to_mib, mib, ratio, verdict                        arithmetic
#   bench_provenance           the report's "command / commit" lines
#
# Everything listens on 127.0.0.1 and is stopped by pid (common.sh's track_pid).

# bench_init NAME ALL_TARGETS LAST_USAGE_LINE "$@": sets command_line, quick, check, targets.
bench_init() {
    local all="$2" last="$3" t
    common_init "$1"
    cd "$UPGATE_ROOT"
    command_line="scripts/${1}${4:+ ${*:4}}"
    shift 3
    quick=0 check=0 targets="$all"
    while (($#)); do
        case "$1" in
            --quick) quick=1 ;;
            --check) check=1 ;;
            --targets) [[ $# -ge 2 ]] || die "--targets needs a list"; targets="$2"; shift ;;
            --targets=*) targets="${1#--targets=}" ;;
            -h|--help) sed -n "2,${last}p" "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
            *) sed -n "2,${last}p" "$0" | sed 's/^# \{0,1\}//' >&2; die "unknown argument: $1" ;;
        esac
        shift
    done
    for t in ${targets//,/ }; do
        [[ ",$all," == *",$t,"* ]] || die "unknown target '$t' (${all//,/, })"
    done
}
want() { [[ ",$targets," == *",$1,"* ]]; }

# The directory of the binaries measured: BENCH_BIN (made absolute), else this checkout's release
# build (which bench_build makes, so it need not exist yet).
bench_bin="$UPGATE_ROOT/.build/release"
if [[ -n "${BENCH_BIN:-}" ]]; then
    bench_bin="$(cd "$BENCH_BIN" 2>/dev/null && pwd)" || die "BENCH_BIN=$BENCH_BIN is not a directory"
fi
bench_build() {
    local product
    if [[ -z "${BENCH_BIN:-}" ]]; then
        build_products release "$@"
        return
    fi
    for product in "$@"; do
        [[ -x "$bench_bin/$product" ]] || die "BENCH_BIN=$BENCH_BIN has no $product"
    done
    say "measuring the binaries in $bench_bin (BENCH_BIN), not this checkout's build"
}

now() { echo "$EPOCHREALTIME"; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
mbps() { awk -v bytes="$1" -v s="$2" 'BEGIN { printf "%.0f", bytes / s / 1e6 }'; }
kib_to_mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
mib() { awk -v b="$1" 'BEGIN { printf "%.2f", b / 1048576 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b }'; }
# verdict VALUE GOAL [ge|le]: "met" or "MISSED" (ge by default).
verdict() { awk -v r="$1" -v g="$2" -v dir="${3:-ge}" 'BEGIN { ok = (dir == "ge" ? r >= g : r <= g); print (ok ? "met" : "MISSED") }'; }

# Busy CPU % of the whole machine over the next second (from /proc/stat).
cpu_busy() {
    local a b
    a="$(awk '/^cpu / {print $2 + $3 + $4 + $7 + $8 + $9, $5 + $6}' /proc/stat)"
    sleep 1
    b="$(awk '/^cpu / {print $2 + $3 + $4 + $7 + $8 + $9, $5 + $6}' /proc/stat)"
    awk -v a="$a" -v b="$b" 'BEGIN { split(a, x, " "); split(b, y, " "); busy = y[1] - x[1]; all = busy + y[2] - x[2]
        printf "%.0f", (all > 0 ? 100 * busy / all : 0) }'
}

# Flushes dirty pages of the temp dir's file system (one run's writeback must not land in the
# next), then waits at most quiet_wait s (BENCH_QUIET_WAIT, default 20) for a second with the
# machine <= 20 % busy: other work on the 2 cores (builds) skews a run more than anything measured
# here. Runs that start busy are counted in busy_starts.
quiet_wait="${BENCH_QUIET_WAIT:-20}"
busy_starts=0
settle() {
    local deadline=$((SECONDS + quiet_wait)) busy
    timeout 300 sync -f "$work" || true
    while :; do
        busy="$(cpu_busy)"
        ((busy <= 20)) && return 0
        if ((SECONDS >= deadline)); then
            say "the machine is still ${busy}% busy after ${quiet_wait} s of waiting: measuring anyway"
            busy_starts=$((busy_starts + 1))
            return 0
        fi
    done
}

# --- up-server, one fresh process and data dir per run --------------------------------------------
up_pid=""; up_url=""; up_runs=0
start_up() {  # [log level, default $up_log_level, else warning]
    local port data level="${1:-${up_log_level:-warning}}"
    up_runs=$((up_runs + 1))
    port="$(free_port)"
    data="$work/up-data-$up_runs"
    mkdir -p "$data"
    track_log "$work/up-server-$up_runs.log"
    "${clean_env[@]}" "$bench_bin/up-server" --config "$UPGATE_ROOT/Config/up-server.json" \
        --port "$port" --data-dir "$data" --log-level "$level" >"$work/up-server-$up_runs.log" 2>&1 &
    up_pid=$!
    track_pid "$up_pid"
    up_url="http://127.0.0.1:$port"
    wait_ready up-server "$up_pid" "$up_url/healthz"
}
# CPU seconds (user + system) the processes PID... have used so far, together (one that has
# exited counts nothing): less sensitive than MB/s to whatever else shares the cores.
cpu_seconds() {
    local p
    for p in "$@"; do [[ -r /proc/$p/stat ]] && cat "/proc/$p/stat"; done \
        | awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); total += $12 + $13 } END { printf "%.2f", total / hz }'
}
# The same for the running up-server.
up_cpu() { cpu_seconds "$up_pid"; }
# VmHWM of the running up-server in KiB.
up_hwm() { awk '/^VmHWM:/ {print $2}' "/proc/$up_pid/status"; }
# bench_stop_hook: a function the benchmark may define to run before up-server stops (perf).
stop_up() {
    declare -F bench_stop_hook >/dev/null && bench_stop_hook
    stop_pid "$up_pid"
    rm -rf "$work/up-data-$up_runs"
    settle
}
verify_stat() {  # key fsize etag
    local got
    got="$("${helper[@]}" stat --up "$up_url" --key "$1")" || die "stat of $1 failed"
    [[ "$got" == "$2 $3" ]] || die "stat of $1: got '$got', expected '$2 $3'"
}

# --- nginx dav PUT: the byte-moving ceiling (upload, client) --------------------------------------------------------------------------------------------
nginx_pid=""; nginx_url=""
nginx_buffer="${BENCH_NGINX_BUFFER:-128k}"   # client_body_buffer_size: how much nginx reads before each write()
start_nginx() {
    local port
    port="$(free_port)"
    mkdir -p "$work/nginx/client_body" "$work/nginx/www/upload"
    track_log "$work/nginx/error.log"
    cat >"$work/nginx/nginx.conf" <<EOF
# Generated by scripts/bench (benchlib.sh): a PUT whose body nginx writes to a temp file, then renames.
daemon off;
# Workers as this user (not nobody, when run as root), so they can write into the 0700 temp dir.
user $(id -un) $(id -gn);
worker_processes auto;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log warn;
events { worker_connections 256; }
http {
    access_log off;
    client_body_temp_path $work/nginx/client_body;
    client_body_buffer_size $nginx_buffer;
    client_max_body_size 0;
    server {
        listen 127.0.0.1:$port;
        location = /healthz { return 200 'ok'; }
        location /upload/ {
            root $work/nginx/www;
            dav_methods PUT;
            dav_access user:rw;
        }
    }
}
EOF
    nginx -p "$work/nginx" -e "$work/nginx/error.log" -c "$work/nginx/nginx.conf" &
    nginx_pid=$!
    track_pid "$nginx_pid"
    nginx_url="http://127.0.0.1:$port"
    wait_ready nginx "$nginx_pid" "$nginx_url/healthz"
}

declare -A flush_of
run_nginx() {  # run (sends $file, $size bytes)
    local target="$work/nginx/www/upload/bench-$1.bin" t0 t1 t2 status
    settle
    t0="$(now)"
    status="$(timeout 900 curl -sS --max-time 900 -T "$file" -H 'Expect:' -o /dev/null -w '%{http_code}' \
        "$nginx_url/upload/bench-$1.bin")" || die "curl to nginx failed"
    t1="$(now)"
    # Not part of the ceiling: how long the kernel then takes to put the file on disk, for
    # comparison with up-server, which fsyncs every block before acknowledging it.
    timeout 300 sync -f "$target"
    t2="$(now)"
    [[ "$status" == 201 || "$status" == 204 ]] || die "nginx answered $status to the PUT"
    [[ "$(stat -c %s "$target")" == "$size" ]] || die "nginx stored $(stat -c %s "$target") bytes, not $size"
    cmp -s "$file" "$target" || die "nginx stored other bytes than were sent"
    flush_of[$1]="$(elapsed "$t1" "$t2")"
    record nginx "$1" "$(elapsed "$t0" "$t1")" "$size" ", then sync -f ${flush_of[$1]} s"
    rm -f "$target"
}

# --- figures: "<target>,<run>" keys in associative arrays -----------------------------------------
declare -A seconds_of
record() {  # target run seconds bytes [note]
    seconds_of[$1,$2]="$3"
    printf '  %-7s run %d: %8s s  %6s MB/s%s\n' "$1" "$2" "$3" "$(mbps "$4" "$3")" "${5:-}" >&2
}
median() { median_of seconds_of "$@"; }   # target count -> median seconds over the runs
median_of() {  # array-name target count -> the median value
    local -n a="$1"
    local t="$2" n="$3" i
    for ((i = 1; i <= n; i++)); do echo "${a[$t,$i]}"; done | sort -g \
        | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
# figure NAME VALUE: one "NAME VALUE" line for scripts/bench/run's table, into $BENCH_FIGURES if set.
figure() { [[ -z "${BENCH_FIGURES:-}" ]] || echo "$1 $2" >>"$BENCH_FIGURES"; }
range_of() {  # target count bytes -> "lo–hi" MB/s
    local t="$1" n="$2" i
    for ((i = 1; i <= n; i++)); do mbps "$3" "${seconds_of[$t,$i]}"; echo; done | sort -n \
        | awk 'NR == 1 {lo = $1} {hi = $1} END {print lo "–" hi}'
}
max_of() {  # array-name target count -> the largest value
    local -n a="$1"
    local t="$2" n="$3" i m=0
    for ((i = 1; i <= n; i++)); do
        [[ -n "${a[$t,$i]:-}" ]] && awk -v x="${a[$t,$i]}" -v m="$m" 'BEGIN { exit !(x > m) }' && m="${a[$t,$i]}"
    done
    echo "$m"
}
range_plain() {  # array-name target count -> "lo–hi" (or the one value)
    local -n a="$1"
    local t="$2" n="$3" i
    for ((i = 1; i <= n; i++)); do echo "${a[$t,$i]}"; done | sort -g \
        | awk 'NR == 1 {lo = $1} {hi = $1} END { print (lo == hi ? lo : lo "–" hi) }'
}

# bench_provenance COMMAND_LINE ENV_REGEX: the report's command (with the BENCH_* settings that
# matched) and commit lines.
bench_provenance() {
    echo "command: \`$1\`$(env | grep -E "^($2)=" | sort | tr '\n' ' ' | sed 's/^\(.\)/ (\1/; s/ $/)/')"
    echo "commit: $(git -C "$UPGATE_ROOT" rev-parse --short HEAD)$(git -C "$UPGATE_ROOT" diff --quiet HEAD 2>/dev/null \
        || echo ' (uncommitted changes)')"
    [[ -z "${BENCH_BIN:-}" ]] || echo "binaries: $bench_bin (BENCH_BIN), not necessarily this commit's"
}
