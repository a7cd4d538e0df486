#ifndef ROOST_CCURL_SHIM_H
#define ROOST_CCURL_SHIM_H

#include <curl/curl.h>

// Swift cannot call curl's variadic setters and getters: one typed wrapper per argument type.

static inline CURLcode roost_curl_easy_set_long(CURL *easy, CURLoption option, long value) {
    return curl_easy_setopt(easy, option, value);
}

static inline CURLcode roost_curl_easy_set_string(CURL *easy, CURLoption option, const char *value) {
    return curl_easy_setopt(easy, option, value);
}

static inline CURLcode roost_curl_easy_set_pointer(CURL *easy, CURLoption option, void *value) {
    return curl_easy_setopt(easy, option, value);
}

static inline CURLcode roost_curl_easy_set_headers(CURL *easy, struct curl_slist *headers) {
    return curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
}

typedef size_t (*roost_curl_data_callback)(char *data, size_t size, size_t count, void *context);

static inline CURLcode roost_curl_easy_set_callback(CURL *easy, CURLoption option, roost_curl_data_callback callback) {
    return curl_easy_setopt(easy, option, callback);
}

static inline CURLcode roost_curl_easy_get_long(CURL *easy, CURLINFO info, long *value) {
    return curl_easy_getinfo(easy, info, value);
}

static inline CURLcode roost_curl_easy_get_pointer(CURL *easy, CURLINFO info, char **value) {
    return curl_easy_getinfo(easy, info, value);
}

static inline CURLMcode roost_curl_multi_set_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

// Constants defined as macros over casts, which Swift does not import.
static inline long roost_curl_pipe_multiplex(void) { return CURLPIPE_MULTIPLEX; }
static inline long roost_curl_http_version_2tls(void) { return CURL_HTTP_VERSION_2TLS; }
static inline long roost_curl_global_default(void) { return CURL_GLOBAL_DEFAULT; }

#endif
