# Private PostgreSQL clusters for tests and scripts: never the system service. Sourced, never run.
#
#   source scripts/lib/postgres.sh
#   pg_cluster_start DIR [NAME=VALUE...]  initdb into DIR/data (the first time), then start on a free
#                                         127.0.0.1 port (the same one again after a stop) with its
#                                         unix socket in DIR; extra server settings go into its
#                                         postgresql.conf (the first time); does
#                                         nothing if it is running
#   pg_cluster_url DIR [DATABASE]         postgresql://upgate@127.0.0.1:PORT/DATABASE?passfile=DIR/passfile
#   pg_cluster_createdb DIR NAME          creates database NAME ([a-z0-9_]+), prints its URL
#   pg_cluster_restart DIR                pg_ctl restart -m fast: same port, same data
#   pg_cluster_stop DIR                   stops the postmaster by its pid (fast shutdown, then immediate,
#                                         then SIGKILL; bounded: ~24 s)
#   pg_cluster_watch DIR                  waits until its standard input closes (the process that owns
#                                         the cluster died, however it died), then stops the cluster
#                                         and removes DIR
#
# DIR is an empty directory the caller made (mktemp -d) and removes. It ends up holding data/, port,
# passfile (mode 0600: the superuser upgate's password, random per cluster; libpq reads it through
# the URL's passfile=), log (the server's), pg_ctl.log and the socket.
#
# PostgreSQL refuses to run as root. Run as root, the server runs as $PG_CLUSTER_USER (default
# upgate-pg, created by scripts/bootstrap) and DIR is handed to that user; otherwise as the caller.
# Settings favour speed over crash safety (fsync off): the data is throwaway, and a killed server
# loses nothing the OS had been given.

PG_CLUSTER_BIN="${PG_CLUSTER_BIN:-/usr/lib/postgresql/15/bin}"
PG_CLUSTER_LIB="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PG_CLUSTER_USER="${PG_CLUSTER_USER:-upgate-pg}"

pg_cluster_fail() { echo "postgres.sh: $*" >&2; return 1; }

# pg_cluster_as COMMAND...: COMMAND as the cluster's owner.
pg_cluster_as() {
    if [[ $(id -u) -eq 0 ]]; then
        # From /: the caller's directory may be closed to that user (initdb complains about it).
        (cd / && runuser -u "$PG_CLUSTER_USER" -- "$@")
    else
        "$@"
    fi
}

# pg_cluster_detached COMMAND...: COMMAND without the descriptors above 2 this shell inherited. The
# postmaster pg_ctl starts lives on and would hold them open: a $(...) around the caller would wait
# for it forever, and so does Foundation's Process, which notices a child's exit by a socket the
# child inherits.
pg_cluster_detached() {
    local fd
    for fd in /proc/$BASHPID/fd/*; do
        fd="${fd##*/}"
        ((fd > 2)) && eval "exec $fd>&-" 2>/dev/null
    done
    "$@"
}

pg_cluster_free_port() {
    python3 "$PG_CLUSTER_LIB/ports.py"   # the picker of scripts/ (below the ephemeral range)
}

pg_cluster_start() {
    local dir="$1" attempt port setting
    shift
    [[ -d "$dir" ]] || pg_cluster_fail "no directory $dir" || return 1
    [[ -x "$PG_CLUSTER_BIN/initdb" ]] || pg_cluster_fail "no PostgreSQL in $PG_CLUSTER_BIN: run scripts/bootstrap" || return 1
    if [[ ! -d "$dir/data" ]]; then
        if [[ $(id -u) -eq 0 ]]; then
            id -u "$PG_CLUSTER_USER" >/dev/null 2>&1 \
                || pg_cluster_fail "PostgreSQL refuses root and user $PG_CLUSTER_USER does not exist: run scripts/bootstrap" \
                || return 1
            chown "$PG_CLUSTER_USER:" "$dir"
        fi
        chmod 700 "$dir"
        # The password goes to initdb through a file only the cluster's owner reads, then to
        # clients through the passfile; it is never on a command line.
        (umask 077 && od -An -N16 -tx1 /dev/urandom | tr -d ' \n' >"$dir/password")
        [[ $(id -u) -eq 0 ]] && chown "$PG_CLUSTER_USER" "$dir/password"
        (umask 077 && printf '*:*:*:upgate:%s\n' "$(cat "$dir/password")" >"$dir/passfile")
        # Connections over TCP need the password; the socket in DIR (only its owner can reach it) trusts.
        pg_cluster_as "$PG_CLUSTER_BIN/initdb" -D "$dir/data" -U upgate --pwfile="$dir/password" \
            --auth-local=trust --auth-host=scram-sha-256 -E UTF8 --no-locale --no-sync --no-instructions \
            >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; pg_cluster_fail "initdb failed"; return 1; }
        rm -f "$dir/password"
        {
            echo "# pg_cluster_start (scripts/lib/postgres.sh)"
            echo "listen_addresses = '127.0.0.1'"
            echo "unix_socket_directories = '$dir'"
            echo "fsync = off"
            echo "full_page_writes = off"
            echo "synchronous_commit = off"
            for setting in "$@"; do echo "${setting%%=*} = '${setting#*=}'"; done
        } | pg_cluster_as tee -a "$dir/data/postgresql.conf" >/dev/null
    fi
    local running
    running="$(head -n 1 "$dir/data/postmaster.pid" 2>/dev/null)" || running=""
    if [[ "$running" =~ ^[0-9]+$ ]] && pg_cluster_alive "$running"; then return 0; fi
    # A cluster started before keeps its port (clients hold URLs). Another process may take a
    # free port before the server binds it: then try another.
    for attempt in 1 2 3; do
        if [[ $attempt -eq 1 && -s "$dir/port" ]]; then
            port="$(cat "$dir/port")"
        else
            port="$(pg_cluster_free_port)"
            echo "port = $port" | pg_cluster_as tee -a "$dir/data/postgresql.conf" >/dev/null
        fi
        if (pg_cluster_detached pg_cluster_as "$PG_CLUSTER_BIN/pg_ctl" -D "$dir/data" -l "$dir/log" -w -t 30 start \
            </dev/null >"$dir/pg_ctl.log" 2>&1); then
            echo "$port" >"$dir/port"
            return 0
        fi
        grep -q "could not bind" "$dir/log" 2>/dev/null || break
    done
    cat "$dir/pg_ctl.log" >&2
    tail -n 20 "$dir/log" >&2 2>/dev/null
    pg_cluster_fail "the server in $dir did not start"
}

pg_cluster_url() {
    local dir="$1" database="${2:-postgres}"
    echo "postgresql://upgate@127.0.0.1:$(cat "$dir/port")/$database?passfile=$dir/passfile&sslmode=disable"
}

pg_cluster_createdb() {
    local dir="$1" name="$2"
    [[ "$name" =~ ^[a-z0-9_]+$ ]] || pg_cluster_fail "database name $name is not [a-z0-9_]+" || return 1
    # Over the socket in DIR, which trusts its owner's connections: no password needed here.
    "$PG_CLUSTER_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$dir" -p "$(cat "$dir/port")" -U upgate -d postgres \
        -c "CREATE DATABASE $name" >&2 || pg_cluster_fail "could not create database $name in $dir" || return 1
    pg_cluster_url "$dir" "$name"
}

pg_cluster_restart() {
    local dir="$1"
    (pg_cluster_detached pg_cluster_as "$PG_CLUSTER_BIN/pg_ctl" -D "$dir/data" -l "$dir/log" -w -t 30 -m fast restart \
        </dev/null >"$dir/pg_ctl.log" 2>&1) || { cat "$dir/pg_ctl.log" >&2; pg_cluster_fail "restart of $dir failed"; }
}

# pg_cluster_alive PID: whether PID is a live process (a zombie, dead but not yet reaped by
# whoever inherited the daemonized postmaster, counts as gone).
pg_cluster_alive() {
    local state
    state="$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" || return 1
    [[ -n "$state" && "$state" != "Z" && "$state" != "X" ]]
}

pg_cluster_stop() {
    local dir="$1" pid signal i
    pid="$(head -n 1 "$dir/data/postmaster.pid" 2>/dev/null)" || return 0
    [[ "$pid" =~ ^[0-9]+$ ]] || return 0
    # INT: fast shutdown (disconnect clients, checkpoint); QUIT: immediate; KILL: last resort.
    for signal in INT QUIT KILL; do
        kill -s "$signal" "$pid" 2>/dev/null || return 0
        for ((i = 0; i < 80; i++)); do
            pg_cluster_alive "$pid" || return 0
            sleep 0.1
        done
    done
    pg_cluster_fail "postmaster $pid of $dir did not stop"
}

pg_cluster_watch() {
    local dir="$1" _
    read -r _ || true
    pg_cluster_stop "$dir"
    rm -rf "$dir"
}
