/* The fake libraries' view of their FAKE_* variables: a copy of the
 * environment taken when the library loads and again at each
 * fake_refresh_env() (cudatest.Setenv calls it after the test's setenv),
 * read under a lock. libc's getenv on the fakes' own threads (a stream's,
 * a Go poller's) raced the test's setenv, which may move the environment
 * array and free the old one: the tests died of SIGSEGV now and then. An
 * empty value is no value. Not a CUDA call; never shipped. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static const char *const fake_names[] = {FAKE_ENV_NAMES};
#define FAKE_ENV_N (sizeof fake_names / sizeof fake_names[0])
static pthread_mutex_t fake_env_mu = PTHREAD_MUTEX_INITIALIZER;
static char fake_vals[FAKE_ENV_N][64];
static int fake_set[FAKE_ENV_N];

void fake_refresh_env(void) {
	pthread_mutex_lock(&fake_env_mu);
	for (size_t i = 0; i < FAKE_ENV_N; i++) {
		const char *s = getenv(fake_names[i]);
		fake_set[i] = s && *s;
		if (fake_set[i]) {
			strncpy(fake_vals[i], s, sizeof fake_vals[i] - 1);
			fake_vals[i][sizeof fake_vals[i] - 1] = 0;
		}
	}
	pthread_mutex_unlock(&fake_env_mu);
}

__attribute__((constructor)) static void fake_env_init(void) { fake_refresh_env(); }

/* fakeenv is getenv of one of fake_names, from the copy: the value is the
 * calling thread's own, valid until its next call. */
static const char *fakeenv(const char *name) {
	static __thread char buf[64];
	const char *r = 0;
	pthread_mutex_lock(&fake_env_mu);
	for (size_t i = 0; i < FAKE_ENV_N; i++) {
		if (strcmp(fake_names[i], name) == 0 && fake_set[i]) {
			memcpy(buf, fake_vals[i], sizeof buf);
			r = buf;
		}
	}
	pthread_mutex_unlock(&fake_env_mu);
	return r;
}
