/* A fake CUDA runtime for kvbench's tests: the calls internal/cuda binds,
 * over host memory. FAKE_CUDA_DEVICES sets the device count (default 1),
 * FAKE_CUDA_MEM each device's bytes (default 1 GiB). Built by the tests
 * with the system's C compiler; never shipped. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#define FAKE_ENV_NAMES "FAKE_CUDA_ASYNC", "FAKE_CUDA_COPY_US", "FAKE_CUDA_DEVICES", "FAKE_CUDA_FAIL_ASYNC", "FAKE_CUDA_FAIL_MARK", "FAKE_CUDA_HOST_ALLOC_MAX", "FAKE_CUDA_MEM", "FAKE_CUDA_NOT_READY", "FAKE_CUDA_QUERY_FAIL"
#include "fakeenv.h"

static int devices(void) { const char *s = fakeenv("FAKE_CUDA_DEVICES"); return s ? atoi(s) : 1; }
static unsigned long long mem(void) { const char *s = fakeenv("FAKE_CUDA_MEM"); return s ? strtoull(s, 0, 10) : (1ull << 30); }
/* The current device is per thread, as CUDA's is. */
static __thread int current;
static unsigned long long used;
/* Live counts of what the fake hands out and takes back (device
 * allocations, pinned host allocations, streams, events), for tests that
 * check every resource is released: fake_cuda_live(0..3). Not a CUDA
 * call. */
static long live[4];
long fake_cuda_live(int what) { return what >= 0 && what < 4 ? __atomic_load_n(&live[what], __ATOMIC_SEQ_CST) : -1; }
static void count(int what, long d) { __atomic_add_fetch(&live[what], d, __ATOMIC_SEQ_CST); }
/* Device allocations, so a copy can tell device pointers from host ones. */
static volatile int devlock;
static struct { unsigned long long base, n; } devs[256];
static int ondevice(const void *p) {
	unsigned long long a = (unsigned long long)p;
	int r = 0;
	while (__sync_lock_test_and_set(&devlock, 1));
	for (int i = 0; i < 256; i++)
		if (devs[i].n && a >= devs[i].base && a < devs[i].base + devs[i].n) { r = 1; break; }
	__sync_lock_release(&devlock);
	return r;
}
static void track(void *p, unsigned long long n) {
	while (__sync_lock_test_and_set(&devlock, 1));
	for (int i = 0; i < 256; i++) {
		if (n && !devs[i].n) { devs[i].base = (unsigned long long)p; devs[i].n = n; break; }
		if (!n && devs[i].n && devs[i].base == (unsigned long long)p) { devs[i].n = 0; break; }
	}
	__sync_lock_release(&devlock);
}

const char *cudaGetErrorString(int e) {
	switch (e) {
	case 0: return "no error";
	case 1: return "invalid argument";
	case 2: return "out of memory";
	case 100: return "no CUDA-capable device is detected";
	case 101: return "invalid device ordinal";
	case 400: return "invalid resource handle";
	case 600: return "device not ready";
	case 712: return "part or all of the requested memory range is already mapped";
	case 713: return "pointer does not correspond to a registered memory region";
	}
	return "unrecognized error code";
}
int cudaGetDeviceCount(int *n) { *n = devices(); return devices() > 0 ? 0 : 100; }
int cudaSetDevice(int d) { if (d < 0 || d >= devices()) return 101; current = d; return 0; }
/* CUDA 12's header maps cudaGetDeviceProperties to its _v2; the plain
 * symbol fills the CUDA 11 layout. Both start with char name[256].
 * Built with -DFAKE_CUDA11, the fake is a CUDA 11 runtime, without _v2. */
#ifndef FAKE_CUDA11
int cudaGetDeviceProperties_v2(void *prop, int d) {
	if (d < 0 || d >= devices()) return 101;
	memset(prop, 0, 1032); /* sizeof(struct cudaDeviceProp) in CUDA 12.x */
	strcpy((char *)prop, "Fake GPU");
	return 0;
}
#endif
int cudaGetDeviceProperties(void *prop, int d) {
	if (d < 0 || d >= devices()) return 101;
	memset(prop, 0, 712);
	strcpy((char *)prop, "Fake GPU (CUDA 11 layout)");
	return 0;
}
/* cudaDevAttrPciBusId 33, cudaDevAttrPciDeviceId 34, cudaDevAttrPciDomainId
 * 50 (driver_types.h); the fake knows no others. */
int cudaDeviceGetAttribute(int *v, int attr, int d) {
	if (d < 0 || d >= devices()) return 101;
	switch (attr) {
	case 33: *v = 0x17 + d; return 0;
	case 34: *v = 0; return 0;
	case 50: *v = 0; return 0;
	}
	return 1;
}
int cudaMemGetInfo(unsigned long long *free, unsigned long long *total) { *total = mem(); *free = mem() - used; return 0; }
int cudaDriverGetVersion(int *v) { *v = 12040; return 0; }
int cudaRuntimeGetVersion(int *v) { *v = 12020; return 0; }
/* Device allocations carry their size in a header of a page before them,
 * so cudaFree gives the bytes back to cudaMemGetInfo's free count; they
 * are page-aligned, as the fake libcufile's O_DIRECT I/O on them needs
 * (real device allocations are aligned too). */
int cudaMalloc(void **p, unsigned long long n) {
	if (used + n > mem()) return 2;
	void *h;
	if (posix_memalign(&h, 4096, n + 4096)) return 2;
	*(unsigned long long *)h = n;
	used += n;
	*p = (char *)h + 4096;
	track(*p, n ? n : 1);
	count(0, 1);
	return 0;
}
int cudaFree(void *p) {
	if (!p) return 0;
	unsigned long long *h = (unsigned long long *)((char *)p - 4096);
	used -= h[0];
	track(p, 0);
	count(0, -1);
	free(h);
	return 0;
}
/* cudaHostAllocDefault 0, Portable 1, Mapped 2, WriteCombined 4. The
 * flags of the last call are kept for tests (fake_cuda_host_flags; not a
 * CUDA call): write-combined memory is slow for the CPU to read. */
static unsigned int hostflags;
unsigned int fake_cuda_host_flags(void) { return hostflags; }
/* The device current on the thread of the last cudaHostAlloc, for tests
 * (fake_cuda_host_device; not a CUDA call): pinned memory belongs to the
 * current device's context. */
static int hostdev = -1;
int fake_cuda_host_device(void) { return __atomic_load_n(&hostdev, __ATOMIC_SEQ_CST); }
/* FAKE_CUDA_HOST_ALLOC_MAX=k: an allocation past k live ones fails with
 * cudaErrorMemoryAllocation (2), as pinning does past what the machine
 * lets a process lock. */
int cudaHostAlloc(void **p, unsigned long long n, unsigned int flags) {
	if (flags & ~7u) return 1;
	const char *mx = fakeenv("FAKE_CUDA_HOST_ALLOC_MAX");
	if (mx && fake_cuda_live(1) >= atol(mx)) return 2;
	hostflags = flags;
	__atomic_store_n(&hostdev, current, __ATOMIC_SEQ_CST);
	*p = malloc(n ? n : 1);
	if (*p) count(1, 1);
	return *p ? 0 : 2;
}
int cudaFreeHost(void *p) { if (p) count(1, -1); free(p); return 0; }
/* Registered ranges: a range overlapping one registered is refused with
 * cudaErrorHostMemoryAlreadyRegistered (712), and unregistering a pointer
 * that starts none with cudaErrorHostMemoryNotRegistered (713), as CUDA
 * does. Flags: cudaHostRegisterDefault 0, Portable 1, Mapped 2,
 * IoMemory 4, ReadOnly 8. */
static volatile int reglock;
static struct { unsigned long long base, n; } regs[256];
int cudaHostRegister(void *p, unsigned long long n, unsigned int flags) {
	if (!p || !n || (flags & ~15u)) return 1;
	unsigned long long b = (unsigned long long)p;
	int r = 2;
	while (__sync_lock_test_and_set(&reglock, 1));
	for (int i = 0; i < 256; i++)
		if (regs[i].n && b < regs[i].base + regs[i].n && regs[i].base < b + n) { r = 712; goto out; }
	for (int i = 0; i < 256; i++)
		if (!regs[i].n) { regs[i].base = b; regs[i].n = n; r = 0; break; }
out:
	__sync_lock_release(&reglock);
	return r;
}
int cudaHostUnregister(void *p) {
	int r = 713;
	while (__sync_lock_test_and_set(&reglock, 1));
	for (int i = 0; i < 256; i++)
		if (regs[i].n && regs[i].base == (unsigned long long)p) { regs[i].n = 0; r = 0; break; }
	__sync_lock_release(&reglock);
	return r;
}
/* CUDA leaves a copy whose kind does not match its pointers undefined;
 * the fake refuses it (cudaErrorInvalidValue), so that a copy in the
 * wrong direction shows. */
int cudaMemcpy(void *dst, const void *src, unsigned long long n, int kind) {
	if (kind != 1 && kind != 2) return 1;
	if (n && (ondevice(dst) != (kind == 1) || ondevice(src) != (kind == 2))) return 1;
	memcpy(dst, src, n);
	return 0;
}
/* Streams run nothing in the background by default: an async copy is
 * done when the call returns, so events are complete when recorded.
 * With FAKE_CUDA_ASYNC set when a stream is made, the stream runs its
 * copies and event records in order on a thread of its own, as a GPU's
 * stream does: an event recorded on it is not ready (cudaEventQuery 600)
 * until the work queued before it is done, and FAKE_CUDA_COPY_US makes
 * each copy take that long. Events hold the monotonic time of their
 * record (on an async stream, of its turn). FAKE_CUDA_FAIL_ASYNC makes
 * async copies fail with "invalid argument". fake_cuda_timed_between
 * counts the copies queued on an async stream behind a timed event that
 * was itself queued behind a copy, both still to run: a timed event
 * between two copies, which on a real GPU slows them. */
typedef struct ev { double t, flags, queries; volatile int pending; } ev;
typedef struct op { int record, behind; void *dst; const void *src; unsigned long long n; ev *e; struct op *next; } op;
typedef struct stream { int async, busy, quit, copies, timed; op *head, *tail; pthread_mutex_t mu; pthread_cond_t work, idle; pthread_t th; } stream;
static double now_ms(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}
/* The copies running on async streams now, and the most at once
 * (fake_cuda_peak_copies): copies on two streams overlap, as a GPU's
 * two copy engines run the two directions at once. */
static long running, peak;
long fake_cuda_peak_copies(void) { return __atomic_load_n(&peak, __ATOMIC_SEQ_CST); }
/* Copies queued on async streams and not yet done (fake_cuda_outstanding). */
static long outstanding;
long fake_cuda_outstanding(void) { return __atomic_load_n(&outstanding, __ATOMIC_SEQ_CST); }
static void *run_stream(void *arg) {
	stream *st = arg;
	pthread_mutex_lock(&st->mu);
	for (;;) {
		while (!st->head && !st->quit) pthread_cond_wait(&st->work, &st->mu);
		if (!st->head) break;
		op *o = st->head;
		st->head = o->next;
		if (!st->head) st->tail = 0;
		st->busy = 1;
		pthread_mutex_unlock(&st->mu);
		if (o->record) {
			o->e->t = now_ms();
			o->e->queries = 0;
			__atomic_store_n(&o->e->pending, 0, __ATOMIC_SEQ_CST);
		} else {
			long now = __atomic_add_fetch(&running, 1, __ATOMIC_SEQ_CST), was = __atomic_load_n(&peak, __ATOMIC_SEQ_CST);
			while (now > was && !__atomic_compare_exchange_n(&peak, &was, now, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {}
			const char *us = fakeenv("FAKE_CUDA_COPY_US");
			if (us) usleep(atoi(us));
			memcpy(o->dst, o->src, o->n);
			__atomic_sub_fetch(&running, 1, __ATOMIC_SEQ_CST);
			__atomic_sub_fetch(&outstanding, 1, __ATOMIC_SEQ_CST);
		}
		int copied = !o->record, behind = o->behind;
		free(o);
		pthread_mutex_lock(&st->mu);
		st->busy = 0;
		st->copies -= copied;
		st->timed -= behind;
		if (!st->head) pthread_cond_broadcast(&st->idle);
	}
	pthread_mutex_unlock(&st->mu);
	return 0;
}
static long timed_between;
long fake_cuda_timed_between(void) { return __atomic_load_n(&timed_between, __ATOMIC_SEQ_CST); }
static void enqueue(stream *st, op *o) {
	pthread_mutex_lock(&st->mu);
	if (!o->record) {
		__atomic_add_fetch(&outstanding, 1, __ATOMIC_SEQ_CST);
		if (st->timed > 0) __atomic_add_fetch(&timed_between, 1, __ATOMIC_SEQ_CST);
		st->copies++;
	} else if (!((unsigned)o->e->flags & 2) && st->copies > 0) {
		o->behind = 1;
		st->timed++;
	}
	if (st->tail) st->tail->next = o; else st->head = o;
	st->tail = o;
	pthread_cond_signal(&st->work);
	pthread_mutex_unlock(&st->mu);
}
/* cudaStreamDefault 0, cudaStreamNonBlocking 1. */
int cudaStreamCreateWithFlags(void **s, unsigned int flags) {
	if (flags & ~1u) return 1;
	stream *st = calloc(1, sizeof *st);
	if (!st) return 2;
	if (fakeenv("FAKE_CUDA_ASYNC")) {
		st->async = 1;
		pthread_mutex_init(&st->mu, 0);
		pthread_cond_init(&st->work, 0);
		pthread_cond_init(&st->idle, 0);
		if (pthread_create(&st->th, 0, run_stream, st)) { free(st); return 2; }
	}
	*s = st;
	count(2, 1);
	return 0;
}
int cudaStreamSynchronize(void *s) {
	stream *st = s;
	if (!st || !st->async) return 0;
	pthread_mutex_lock(&st->mu);
	while (st->head || st->busy) pthread_cond_wait(&st->idle, &st->mu);
	pthread_mutex_unlock(&st->mu);
	return 0;
}
int cudaStreamDestroy(void *s) {
	stream *st = s;
	if (!st) return 0;
	if (st->async) {
		cudaStreamSynchronize(st);
		pthread_mutex_lock(&st->mu);
		st->quit = 1;
		pthread_cond_signal(&st->work);
		pthread_mutex_unlock(&st->mu);
		pthread_join(st->th, 0);
	}
	count(2, -1);
	free(st);
	return 0;
}
int cudaMemcpyAsync(void *dst, const void *src, unsigned long long n, int kind, void *s) {
	stream *st = s;
	if (fakeenv("FAKE_CUDA_FAIL_ASYNC")) return 1;
	if (!st || !st->async) return cudaMemcpy(dst, src, n, kind);
	if (kind != 1 && kind != 2) return 1;
	if (n && (ondevice(dst) != (kind == 1) || ondevice(src) != (kind == 2))) return 1;
	op *o = calloc(1, sizeof *o);
	if (!o) return 2;
	o->dst = dst, o->src = src, o->n = n;
	enqueue(st, o);
	return 0;
}
/* cudaEventDefault 0, BlockingSync 1, DisableTiming 2, Interprocess 4:
 * an event without timing cannot be timed (cudaErrorInvalidResourceHandle). */
int cudaEventCreateWithFlags(ev **e, unsigned int flags) {
	if (flags & ~7u) return 1;
	*e = calloc(1, sizeof(ev));
	if (!*e) return 2;
	(*e)->flags = flags;
	count(3, 1);
	return 0;
}
/* FAKE_CUDA_FAIL_MARK: recording an event without timing fails. */
int cudaEventRecord(ev *e, void *s) {
	stream *st = s;
	if (((unsigned)e->flags & 2) && fakeenv("FAKE_CUDA_FAIL_MARK")) return 1;
	if (st && st->async) {
		op *o = calloc(1, sizeof *o);
		if (!o) return 2;
		o->record = 1, o->e = e;
		__atomic_store_n(&e->pending, 1, __ATOMIC_SEQ_CST);
		enqueue(st, o);
		return 0;
	}
	e->t = now_ms();
	e->queries = 0;
	e->pending = 0;
	return 0;
}
int cudaEventSynchronize(ev *e) {
	while (__atomic_load_n(&e->pending, __ATOMIC_SEQ_CST)) usleep(10);
	return 0;
}
/* FAKE_CUDA_NOT_READY=k: an event answers cudaErrorNotReady (600) to its
 * first k queries after each record, as a real one does while the copy
 * before it runs; FAKE_CUDA_QUERY_FAIL makes queries fail. */
int cudaEventQuery(ev *e) {
	if (fakeenv("FAKE_CUDA_QUERY_FAIL")) return 1;
	if (__atomic_load_n(&e->pending, __ATOMIC_SEQ_CST)) return 600;
	const char *k = fakeenv("FAKE_CUDA_NOT_READY");
	if (k && e->queries < atof(k)) { e->queries += 1; return 600; }
	return 0;
}
/* Timing an event still pending is cudaErrorNotReady (600). */
int cudaEventElapsedTime(float *ms, ev *a, ev *b) {
	if (((unsigned)a->flags | (unsigned)b->flags) & 2) return 400;
	if (__atomic_load_n(&a->pending, __ATOMIC_SEQ_CST) || __atomic_load_n(&b->pending, __ATOMIC_SEQ_CST)) return 600;
	*ms = (float)(b->t - a->t);
	return 0;
}
int cudaEventDestroy(ev *e) { if (e) count(3, -1); free(e); return 0; }
