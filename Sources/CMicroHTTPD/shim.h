#pragma once
#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <microhttpd.h>

// Swift cannot call C variadic functions (MHD_start_daemon, MHD_get_daemon_info,
// MHD_get_connection_info); these fixed-arity wrappers are the reason this file exists.

/// Starts a daemon bound to the dotted IPv4 address `ipv4` (e.g. "127.0.0.1") and `port` (0 picks
/// a free one). Returns NULL if the address does not parse or MHD refuses to start.
/// MHD_OPTION_SOCK_ADDR is used so the daemon never listens on every interface by accident.
static inline struct MHD_Daemon *cmhd_start_daemon(unsigned int flags, const char *ipv4, uint16_t port,
                                                   MHD_AcceptPolicyCallback accept_policy, void *accept_policy_cls,
                                                   MHD_AccessHandlerCallback handler, void *handler_cls,
                                                   MHD_RequestCompletedCallback completed, void *completed_cls,
                                                   void *(*uri_log)(void *cls, const char *uri,
                                                                    struct MHD_Connection *connection),
                                                   void *uri_log_cls,
                                                   unsigned int connection_timeout_seconds,
                                                   unsigned int thread_pool_size,
                                                   size_t connection_memory_limit,
                                                   unsigned int listen_backlog,
                                                   unsigned int connection_limit,
                                                   MHD_NotifyConnectionCallback notify_connection,
                                                   void *notify_connection_cls,
                                                   unsigned int per_ip_connection_limit) {
    struct sockaddr_in address;
    memset(&address, 0, sizeof(address));
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    if (inet_pton(AF_INET, ipv4, &address.sin_addr) != 1) {
        return NULL;
    }
    return MHD_start_daemon(flags, port, accept_policy, accept_policy_cls, handler, handler_cls,
                            MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)&address,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls,
                            MHD_OPTION_URI_LOG_CALLBACK, uri_log, uri_log_cls,
                            MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout_seconds,
                            MHD_OPTION_THREAD_POOL_SIZE, thread_pool_size,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, connection_memory_limit,
                            MHD_OPTION_LISTEN_BACKLOG_SIZE, listen_backlog,
                            MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                            MHD_OPTION_NOTIFY_CONNECTION, notify_connection, notify_connection_cls,
                            MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip_connection_limit,
                            MHD_OPTION_END);
}

/// The port the daemon actually listens on (useful after binding port 0); 0 if unknown.
static inline uint16_t cmhd_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

/// Writes the client's IP address as text into `buffer` (NUL-terminated); returns its length,
/// or 0 if unknown. Copying here keeps sockaddr casts (a macro-and-union dance) out of Swift.
static inline size_t cmhd_client_address(struct MHD_Connection *connection, char *buffer, size_t capacity) {
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL || info->client_addr == NULL || capacity == 0) {
        return 0;
    }
    const struct sockaddr *address = info->client_addr;
    const void *raw = NULL;
    if (address->sa_family == AF_INET) {
        raw = &((const struct sockaddr_in *)address)->sin_addr;
    } else if (address->sa_family == AF_INET6) {
        raw = &((const struct sockaddr_in6 *)address)->sin6_addr;
    } else {
        return 0;
    }
    if (inet_ntop(address->sa_family, raw, buffer, (socklen_t)capacity) == NULL) {
        return 0;
    }
    return strlen(buffer);
}

/// The connection's socket, or -1 if unknown.
static inline int cmhd_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}

/// Closes a descriptor this process owns (a file body's fd MHD did not take over).
static inline void cmhd_close_fd(int fd) {
    if (fd >= 0) {
        close(fd);
    }
}

/// 1 if the peer has finished sending (FIN received) and no byte is left to read on `fd`; 0
/// otherwise (data waiting, still open, or an error). Peeks without blocking or consuming.
static inline int cmhd_peer_finished(int fd) {
    char byte;
    if (fd < 0) {
        return 0;
    }
    return recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 0 ? 1 : 0;
}

/// Bytes received on `fd` that no read has taken yet (FIONREAD); 0 when none or on an error.
static inline int cmhd_bytes_waiting(int fd) {
    int count = 0;
    if (fd < 0 || ioctl(fd, FIONREAD, &count) != 0) {
        return 0;
    }
    return count;
}

/// Shuts both directions of a connection's socket down without closing it: MHD's own loop then
/// sees the connection fail and closes it on its thread (the fd stays MHD's to close).
static inline void cmhd_shutdown_socket(int fd) {
    if (fd >= 0) {
        shutdown(fd, SHUT_RDWR);
    }
}

