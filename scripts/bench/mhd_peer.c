/*
 * The token benchmark's engine yardstick: libmicrohttpd alone, started with the flags and limits
 * NativeHTTP uses (an internal epoll thread pool of 2, suspend/resume allowed, 32 KiB per
 * connection, 4096 connections), answering every request with 200 and a fixed JSON body once
 * its body has arrived. No routing, no logging, no signing: what biz-server would reach if
 * everything above libmicrohttpd cost nothing.
 *
 *   mhd_peer PORT BODY_BYTES      listens on 127.0.0.1:PORT until SIGTERM or SIGINT
 *
 * Built by scripts/bench/token with `cc -O2 ... -lmicrohttpd`.
 */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct MHD_Response *answer;

static enum MHD_Result on_request(void *cls, struct MHD_Connection *connection, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **request_state) {
    (void)cls; (void)url; (void)method; (void)version; (void)upload_data;
    static int started;
    if (*request_state == NULL) {       /* the head has arrived: come back for the body */
        *request_state = &started;
        return MHD_YES;
    }
    if (*upload_data_size != 0) {       /* a piece of the body: consumed, not kept */
        *upload_data_size = 0;
        return MHD_YES;
    }
    return MHD_queue_response(connection, MHD_HTTP_OK, answer);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: mhd_peer PORT BODY_BYTES\n");
        return 2;
    }
    int port = atoi(argv[1]);
    long size = atol(argv[2]);
    if (port <= 0 || port > 65535 || size < 2 || size > 1 << 20) {
        fprintf(stderr, "mhd_peer: PORT must be 1-65535 and BODY_BYTES 2-1048576\n");
        return 2;
    }
    char *body = malloc((size_t)size);
    memset(body, 'x', (size_t)size);
    body[0] = '"';
    body[size - 1] = '"';
    answer = MHD_create_response_from_buffer((size_t)size, body, MHD_RESPMEM_PERSISTENT);
    MHD_add_response_header(answer, "Content-Type", "application/json");
    MHD_add_response_header(answer, "Cache-Control", "no-store");

    struct sockaddr_in address;
    memset(&address, 0, sizeof address);
    address.sin_family = AF_INET;
    address.sin_port = htons((uint16_t)port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);

    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);    /* the daemon's threads inherit the mask */

    struct MHD_Daemon *daemon = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME, (uint16_t)port, NULL,
        NULL, on_request, NULL, MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)&address,
        MHD_OPTION_THREAD_POOL_SIZE, 2u, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(32 << 10),
        MHD_OPTION_CONNECTION_LIMIT, 4096u, MHD_OPTION_CONNECTION_TIMEOUT, 60u, MHD_OPTION_END);
    if (daemon == NULL) {
        fprintf(stderr, "mhd_peer: cannot listen on 127.0.0.1:%d\n", port);
        return 1;
    }
    int signal_number = 0;
    sigwait(&stop, &signal_number);
    MHD_stop_daemon(daemon);
    MHD_destroy_response(answer);
    free(body);
    return 0;
}
