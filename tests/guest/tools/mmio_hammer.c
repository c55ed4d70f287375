// SPDX-License-Identifier: MIT
// mmio_hammer: reads a card's ID register through /dev/mem in bursts of 1000 reads, 100 us
// apart. Each read takes QEMU's big lock and the device's lock. Needs root and iomem=relaxed.
//
//   mmio_hammer BAR0_PHYS_ADDR MAX_SECONDS
// Across the card's hot-unplug (tests/vm/check-hotunplug.sh): until two seconds after the card
// stopped answering or MAX_SECONDS. The mapping outlives the PCI device, so the reads go on
// while QEMU unrealizes it and after: the card's answers (TPU_ID_MAGIC) end, then the empty
// address answers something else. Prints both counts; exits 0 once it saw both, 1 otherwise.
//
//   mmio_hammer BAR0_PHYS_ADDR MAX_SECONDS steady
// While the card works (tests/vm/guest-iommu-hammer.sh): until SIGTERM or MAX_SECONDS. Prints
// the counts; exits 0 if every read returned the card's ID, 1 otherwise.
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "tpu_hw.h"

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	unsigned long long card = 0, gone = 0;
	volatile uint32_t *regs;
	double end, gone_since = 0;
	off_t addr;
	int steady, fd;

	if (argc != 3 && !(argc == 4 && !strcmp(argv[3], "steady"))) {
		fprintf(stderr, "usage: %s BAR0_PHYS_ADDR MAX_SECONDS [steady]\n", argv[0]);
		return 2;
	}
	steady = argc == 4;
	signal(SIGTERM, on_term);
	addr = (off_t)strtoull(argv[1], NULL, 0);
	end = now() + atof(argv[2]);
	fd = open("/dev/mem", O_RDONLY | O_SYNC);
	if (fd < 0) {
		perror("mmio_hammer: /dev/mem");
		return 2;
	}
	regs = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, addr);
	if (regs == MAP_FAILED) {
		perror("mmio_hammer: mmap");
		return 2;
	}
	while (!stop && now() < end && (steady || !gone_since || now() < gone_since + 2)) {
		for (int i = 0; i < 1000; i++) {
			if (regs[TPU_REG_ID / 4] == TPU_ID_MAGIC)
				card++;
			else
				gone++;
		}
		if (gone && !gone_since)
			gone_since = now();
		usleep(100);	/* QEMU's main loop needs the big lock too */
	}
	printf("mmio_hammer: %llu reads answered by the card, %llu not\n", card, gone);
	if (steady)
		return card && !gone ? 0 : 1;
	return card && gone ? 0 : 1;
}
