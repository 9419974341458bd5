#pragma once
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>
#include <curl/curl.h>

// Swift cannot call C variadic functions: curl_easy_setopt, curl_easy_getinfo and
// curl_multi_setopt take their value through `...` (and are macros under GCC/clang type
// checking). These fixed-arity wrappers, one per argument type libcurl documents for an option,
// are the reason this file exists. Passing the wrong type for an option is undefined behaviour in
// C, so NativeCurl calls each wrapper only with options of the matching CURLOPTTYPE_*.

/// For CURLOPTTYPE_LONG and CURLOPTTYPE_VALUES options (timeouts, flags, sizes below 2 GiB).
static inline CURLcode ccurl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

/// For CURLOPTTYPE_OFF_T options (INFILESIZE_LARGE, MAXFILESIZE_LARGE): 64-bit on every target.
static inline CURLcode ccurl_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

/// For CURLOPTTYPE_STRINGPOINT options; libcurl copies the string, the caller may free it after.
static inline CURLcode ccurl_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

/// For CURLOPTTYPE_CBPOINT / OBJECTPOINT data pointers (WRITEDATA, READDATA, PRIVATE, ...).
static inline CURLcode ccurl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

/// For CURLOPTTYPE_SLISTPOINT options (HTTPHEADER); libcurl does NOT copy the list: it must
/// outlive the transfer.
static inline CURLcode ccurl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

/// WRITEFUNCTION and HEADERFUNCTION share this signature.
static inline CURLcode ccurl_easy_setopt_write_function(CURL *handle, CURLoption option, curl_write_callback value) {
    return curl_easy_setopt(handle, option, value);
}

/// READFUNCTION.
static inline CURLcode ccurl_easy_setopt_read_function(CURL *handle, curl_read_callback value) {
    return curl_easy_setopt(handle, CURLOPT_READFUNCTION, value);
}

/// SEEKFUNCTION: lets libcurl rewind a body when it retries on a fresh connection after a
/// reused one turned out dead.
static inline CURLcode ccurl_easy_setopt_seek_function(CURL *handle, curl_seek_callback value) {
    return curl_easy_setopt(handle, CURLOPT_SEEKFUNCTION, value);
}

/// XFERINFOFUNCTION (progress, and a cancellation point).
static inline CURLcode ccurl_easy_setopt_xferinfo_function(CURL *handle, curl_xferinfo_callback value) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, value);
}

/// For CURLINFO_LONG items (RESPONSE_CODE, NUM_CONNECTS, ...).
static inline CURLcode ccurl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

/// For CURLINFO_OFF_T items (SIZE_UPLOAD_T, CONTENT_LENGTH_DOWNLOAD_T, ...).
static inline CURLcode ccurl_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}

/// For CURLINFO_DOUBLE items (TOTAL_TIME, ...).
static inline CURLcode ccurl_easy_getinfo_double(CURL *handle, CURLINFO info, double *value) {
    return curl_easy_getinfo(handle, info, value);
}

/// CURLINFO_PRIVATE: the context pointer stored with CURLOPT_PRIVATE.
static inline CURLcode ccurl_easy_getinfo_private(CURL *handle, void **value) {
    return curl_easy_getinfo(handle, CURLINFO_PRIVATE, (char **)value);
}

/// For CURLMOPT long options (MAXCONNECTS, MAX_HOST_CONNECTIONS, MAX_TOTAL_CONNECTIONS).
static inline CURLMcode ccurl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

/// The easy handle and result of a CURLMSG_DONE message (the result sits in a union Swift
/// would otherwise have to pick apart).
static inline CURL *ccurl_message_done(const CURLMsg *message, CURLcode *result) {
    if (message == NULL || message->msg != CURLMSG_DONE) {
        return NULL;
    }
    *result = message->data.result;
    return message->easy_handle;
}
