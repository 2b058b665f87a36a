// SPDX-License-Identifier: MIT
/*
 * lldpcli as a child process (lldp.h): no shell, stdin /dev/null, none of our
 * descriptors (the HTTP listener, the packet socket), signals as exec leaves
 * them by default, and a bound on time and output, so a wedged lldpd or a
 * runaway answer costs a poll at most LLDP_CLI_TIMEOUT_MS.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lldp.h"
#include "util.h"

void lldp_cli_out_free(struct lldp_cli_out *r)
{
	free(r->out);
	r->out = NULL;
	r->len = 0;
}

struct cli_pipes {
	int out[2], err[2];
};

static void pipes_close(struct cli_pipes *p)
{
	for (int i = 0; i < 2; i++) {
		if (p->out[i] >= 0)
			close(p->out[i]);
		if (p->err[i] >= 0)
			close(p->err[i]);
		p->out[i] = p->err[i] = -1;
	}
}

static int spawn(pid_t *pid, char *const argv[], struct cli_pipes *p)
{
	static const int dfl[] = { SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGCHLD };
	const char *path = getenv("PATH");
	char env_path[1024];
	char *envp[] = { env_path, "LC_ALL=C", NULL };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, def;
	int r;

	snprintf(env_path, sizeof(env_path), "PATH=%s",
		 path ? path : "/usr/sbin:/usr/bin:/sbin:/bin");
	sigemptyset(&none);
	sigemptyset(&def);
	for (size_t i = 0; i < ARRAY_SIZE(dfl); i++)
		sigaddset(&def, dfl[i]);
	if (posix_spawn_file_actions_init(&fa))
		return -ENOMEM;
	if (posix_spawnattr_init(&at)) {
		posix_spawn_file_actions_destroy(&fa);
		return -ENOMEM;
	}
	r = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (!r)
		r = posix_spawn_file_actions_adddup2(&fa, p->out[1], 1);
	if (!r)
		r = posix_spawn_file_actions_adddup2(&fa, p->err[1], 2);
	/* glibc 2.34: every descriptor above stderr, whoever opened it without O_CLOEXEC */
	if (!r)
		r = posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	if (!r)
		r = posix_spawnattr_setsigmask(&at, &none);
	if (!r)
		r = posix_spawnattr_setsigdefault(&at, &def);
	if (!r)
		r = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	if (!r)
		r = posix_spawnp(pid, argv[0], &fa, &at, argv, envp);
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	return -r;
}

/* Read what is there from fd into r (stdout) or its err line (stderr): false at EOF. */
static bool drain(int fd, bool is_out, struct lldp_cli_out *r, size_t max, size_t *err_len,
		  bool *too_big)
{
	char buf[4096];
	ssize_t n = read(fd, buf, sizeof(buf));

	if (n < 0)
		return errno == EINTR || errno == EAGAIN;
	if (n == 0)
		return false;
	if (!is_out) {
		size_t room = sizeof(r->err) - 1 - *err_len,
		       k = (size_t)n < room ? (size_t)n : room;

		memcpy(r->err + *err_len, buf, k);
		*err_len += k;
		r->err[*err_len] = '\0';
		return true;
	}
	if (r->len + (size_t)n > max) {
		*too_big = true;
		return false;
	}
	memcpy(r->out + r->len, buf, (size_t)n);
	r->len += (size_t)n;
	r->out[r->len] = '\0';
	return true;
}

/* Both pipes to EOF, or the deadline, or max: 0, -ETIMEDOUT or -EMSGSIZE. */
static int collect_output(struct cli_pipes *p, struct lldp_cli_out *r, size_t max, int64_t deadline)
{
	struct pollfd pfd[2] = { { .fd = p->out[0], .events = POLLIN },
				 { .fd = p->err[0], .events = POLLIN } };
	size_t err_len = 0;
	bool too_big = false;

	while (pfd[0].fd >= 0 || pfd[1].fd >= 0) {
		int64_t left = deadline - mono_ns();
		int n;

		if (left <= 0)
			return -ETIMEDOUT;
		n = poll(pfd, 2, (int)((left + 999999) / 1000000));
		if (n < 0 && errno != EINTR)
			return -errno;
		for (int i = 0; n > 0 && i < 2; i++) {
			if (pfd[i].fd < 0 || !(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (!drain(pfd[i].fd, i == 0, r, max, &err_len, &too_big))
				pfd[i].fd = -1;
			if (too_big)
				return -EMSGSIZE;
		}
	}
	return 0;
}

/* Reap pid by the deadline, else kill it: 0 with *status, or -ETIMEDOUT. */
static int reap(pid_t pid, int *status, int64_t deadline)
{
	for (;;) {
		pid_t w = waitpid(pid, status, WNOHANG);

		if (w == pid)
			return 0;
		if (w < 0 && errno != EINTR)
			return -errno;
		if (mono_ns() >= deadline)
			break;
		nanosleep(&(struct timespec){ .tv_nsec = 2000000 }, NULL);
	}
	kill(pid, SIGKILL);
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
	return -ETIMEDOUT;
}

int lldp_cli_run(char *const argv[], int timeout_ms, size_t max, struct lldp_cli_out *r)
{
	struct cli_pipes p = { { -1, -1 }, { -1, -1 } };
	int64_t deadline = mono_ns() + (int64_t)timeout_ms * 1000000;
	pid_t pid;
	int ret, st;

	memset(r, 0, sizeof(*r));
	r->out = malloc(max + 1);
	if (!r->out)
		return -ENOMEM;
	r->out[0] = '\0';
	if (pipe2(p.out, O_CLOEXEC) || pipe2(p.err, O_CLOEXEC)) {
		ret = -errno;
		goto out_pipes;
	}
	ret = spawn(&pid, argv, &p);
	if (ret)
		goto out_pipes;
	close(p.out[1]);
	close(p.err[1]);
	p.out[1] = p.err[1] = -1;
	ret = collect_output(&p, r, max, deadline);
	if (ret) {
		kill(pid, SIGKILL);
		deadline = mono_ns(); /* reap at once */
	}
	st = reap(pid, &r->status, deadline);
	if (!ret)
		ret = st;
	r->err[strcspn(r->err, "\n")] = '\0';
out_pipes:
	pipes_close(&p);
	return ret;
}
