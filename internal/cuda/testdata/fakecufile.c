/* A fake libcufile (GPUDirect Storage) for kvbench's tests: the calls
 * internal/cuda binds, over host memory (the fake CUDA runtime's device
 * memory is host memory) and pread/pwrite. FAKE_CUFILE_FAIL_OPEN makes
 * cuFileDriverOpen fail with status 5001 (CU_FILE_DRIVER_NOT_INITIALIZED);
 * FAKE_CUFILE_FAIL_IO makes reads and writes return -5011
 * (CU_FILE_CUDA_DRIVER_ERROR); FAKE_CUFILE_FAIL_REGISTER makes
 * cuFileHandleRegister fail with 5027 (CU_FILE_HANDLE_NOT_REGISTERED), as
 * libcufile 1.15 did for every file on a disk udev had no data on;
 * FAKE_CUFILE_MAX moves fewer bytes a call (see cuFileRead). Status values and the descriptor's layout
 * are cufile.h's. Built by the tests with the system's C compiler; never
 * shipped. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#define FAKE_ENV_NAMES "FAKE_CUFILE_DELAY_US", "FAKE_CUFILE_FAIL_IO", "FAKE_CUFILE_FAIL_OPEN", "FAKE_CUFILE_FAIL_REGISTER", "FAKE_CUFILE_MAX"
#include "fakeenv.h"

typedef struct { int err; int cu_err; } CUfileError_t;
typedef struct { int type; union { int fd; void *handle; } handle; const void *fs_ops; } CUfileDescr_t;

static int opened;
static CUfileError_t ok(void) { CUfileError_t e = {0, 0}; return e; }
static CUfileError_t fail(int code, int cu) { CUfileError_t e = {code, cu}; return e; }

CUfileError_t cuFileDriverOpen(void) {
	if (fakeenv("FAKE_CUFILE_FAIL_OPEN")) return fail(5001, 0);
	opened = 1;
	return ok();
}
CUfileError_t cuFileDriverClose_v2(void) { opened = 0; return ok(); }
CUfileError_t cuFileGetVersion(int *v) { *v = 1140; return ok(); }
/* A descriptor registered twice is refused with
 * CU_FILE_HANDLE_ALREADY_REGISTERED (5028), as libcufile documents: the
 * engine must register each file once. A handle type other than
 * CU_FILE_HANDLE_TYPE_OPAQUE_FD (1), or file system operations given with
 * one, is CU_FILE_INVALID_VALUE (5022). */
static volatile int lock;
static char registered[4096];
CUfileError_t cuFileHandleRegister(void **fh, CUfileDescr_t *d) {
	if (!opened) return fail(5001, 0);
	if (fakeenv("FAKE_CUFILE_FAIL_REGISTER")) return fail(5027, 0);
	int fd = d->handle.fd;
	if (d->type != 1 || d->fs_ops || fd < 0 || fd >= 4096) return fail(5022, 0);
	while (__sync_lock_test_and_set(&lock, 1));
	int twice = registered[fd];
	registered[fd] = 1;
	__sync_lock_release(&lock);
	if (twice) return fail(5028, 0);
	int *h = malloc(sizeof(int));
	*h = fd;
	*fh = h;
	return ok();
}
void cuFileHandleDeregister(void *fh) {
	while (__sync_lock_test_and_set(&lock, 1));
	registered[*(int *)fh] = 0;
	__sync_lock_release(&lock);
	free(fh);
}
/* Flags: CU_FILE_RDMA_REGISTER 1, CU_FILE_RDMA_RELAXED_ORDERING 2. A
 * buffer registered twice is refused with CU_FILE_MEMORY_ALREADY_REGISTERED
 * (5023), and deregistering one not registered with
 * CU_FILE_MEMORY_NOT_REGISTERED (5024), as libcufile documents. */
static const void *bufs[256];
CUfileError_t cuFileBufRegister(const void *p, size_t n, int flags) {
	if (!opened) return fail(5001, 0);
	if (flags & ~3) return fail(5022, 0);
	if (!p || !n) return fail(5012, 1);
	int r = 5023;
	while (__sync_lock_test_and_set(&lock, 1));
	int i;
	for (i = 0; i < 256 && bufs[i] != p; i++);
	if (i == 256) {
		for (i = 0; i < 256 && bufs[i]; i++);
		if (i < 256) { bufs[i] = p; r = 0; } else r = 5030;
	}
	__sync_lock_release(&lock);
	return r ? fail(r, 0) : ok();
}
CUfileError_t cuFileBufDeregister(const void *p) {
	int r = 5024;
	while (__sync_lock_test_and_set(&lock, 1));
	for (int i = 0; i < 256; i++)
		if (p && bufs[i] == p) { bufs[i] = 0; r = 0; break; }
	__sync_lock_release(&lock);
	return r ? fail(r, 0) : ok();
}
/* FAKE_CUFILE_MAX=k makes reads and writes move at most k bytes a call:
 * cuFileRead and cuFileWrite return the bytes they moved, which may be
 * fewer than asked for. FAKE_CUFILE_DELAY_US makes each call take that
 * long at least, as a slow device's would. */
static size_t most(size_t n) {
	const char *d = fakeenv("FAKE_CUFILE_DELAY_US"); /* a slow device: each call takes this long at least */
	if (d) usleep(atoi(d));
	const char *k = fakeenv("FAKE_CUFILE_MAX");
	size_t m = k ? strtoull(k, 0, 10) : 0;
	return m && m < n ? m : n;
}
ssize_t cuFileRead(void *fh, void *base, size_t n, off_t off, off_t boff) {
	if (fakeenv("FAKE_CUFILE_FAIL_IO")) return -5011;
	ssize_t r = pread(*(int *)fh, (char *)base + boff, most(n), off);
	return r < 0 ? -1 : r;
}
ssize_t cuFileWrite(void *fh, const void *base, size_t n, off_t off, off_t boff) {
	if (fakeenv("FAKE_CUFILE_FAIL_IO")) return -5011;
	ssize_t r = pwrite(*(int *)fh, (const char *)base + boff, most(n), off);
	return r < 0 ? -1 : r;
}
