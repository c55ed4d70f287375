// SPDX-License-Identifier: MIT
/*
 * listen-backlog.c - an LD_PRELOAD library for QEMU (tests/vm/run-in-vm.sh --forward) that
 * raises the backlog of every listen() to at least SOMAXCONN. libslirp 4.7.0 (Debian 12)
 * listens on a forwarded port (hostfwd) with a backlog of 1 and accepts from QEMU's main loop:
 * while the loop is busy, a burst of new connections overflows the accept queue, the kernel
 * drops their handshakes, and clients see their connections reset.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <sys/socket.h>

int listen(int fd, int backlog)
{
	static int (*next_listen)(int, int);

	if (!next_listen)
		next_listen = (int (*)(int, int))dlsym(RTLD_NEXT, "listen");
	if (!next_listen) {
		errno = ENOSYS;
		return -1;
	}
	return next_listen(fd, backlog < SOMAXCONN ? SOMAXCONN : backlog);
}
