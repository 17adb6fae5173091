/*
 * A stand-in for Windows' bcryptprimitives.dll, for running the Windows
 * build's tests under wine 8 only (.ci/wine-setup builds it into a private
 * wine prefix; it is never part of a release).
 *
 * Go 1.22 and later fill their random source with ProcessPrng from
 * bcryptprimitives.dll, which wine 8 does not have: a Go program does not
 * start. ProcessPrng here forwards to advapi32's SystemFunction036
 * (RtlGenRandom), which wine has, in chunks that fit its ULONG length.
 */
#include <windows.h>

typedef BOOLEAN (WINAPI *rtl_gen_random)(PVOID, ULONG);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
	static rtl_gen_random gen;
	if (gen == NULL) {
		HMODULE advapi = LoadLibraryA("advapi32.dll");
		if (advapi == NULL)
			return FALSE;
		gen = (rtl_gen_random)GetProcAddress(advapi, "SystemFunction036");
		if (gen == NULL)
			return FALSE;
	}
	while (len > 0) {
		ULONG chunk = len > 0x10000000 ? 0x10000000 : (ULONG)len;
		if (!gen(data, chunk))
			return FALSE;
		data += chunk;
		len -= chunk;
	}
	return TRUE;
}

BOOL WINAPI DllMain(HINSTANCE inst, DWORD reason, LPVOID reserved)
{
	(void)inst;
	(void)reason;
	(void)reserved;
	return TRUE;
}
