#pragma once
// Intel ISA-L (Debian libisal-dev): crc32_gzip_refl, the zlib CRC-32 with carry-less multiply
// (PCLMULQDQ / PMULL) picked at run time. Imports as is; no shims.
#include <isa-l/crc.h>
