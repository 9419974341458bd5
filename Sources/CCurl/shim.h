#pragma once
#include <curl/curl.h>
// curl_easy_setopt / curl_easy_getinfo are variadic: typed static inline shims go here.
