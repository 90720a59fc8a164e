/* Test scaffolding for running our Windows builds under Wine 8 (Debian
 * bookworm), which has no bcryptprimitives.dll. Rust's standard library
 * (1.78 and later) imports ProcessPrng from it for HashMap seeds and the
 * like. This stand-in answers from RtlGenRandom (advapi32's
 * SystemFunction036), which Wine has. Never shipped: scripts/test-windows.sh
 * builds it into the test's own Wine prefix. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    while (len > 0) {
        ULONG chunk = len > 0x10000000 ? 0x10000000 : (ULONG)len;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
