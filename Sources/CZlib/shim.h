#pragma once
// zlib: crc32_z (size_t lengths, so no 4 GiB split). Imports as is; no shims.
#include <zlib.h>
