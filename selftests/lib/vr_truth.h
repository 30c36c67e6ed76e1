/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The rig's rapl variant: the power model's own running totals (its
 * truth), which the project's QEMU publishes as the fw_cfg file
 * opt/org.vmrapl/rapl (Documentation/testing.rst has the format).
 */
#ifndef _VR_TRUTH_H
#define _VR_TRUTH_H

#include <stdint.h>

#define TRUTH		"/sys/firmware/qemu_fw_cfg/by_name/opt/org.vmrapl/rapl/raw"
#define MAX_PKGS	2
#define MAX_CORES	16

struct truth {
	uint64_t time_ns, ticks, start_pj;	/* ticks: the model's updates */
	uint64_t tick_max_ns;	/* the longest of the last 100 to 200 ticks */
	uint64_t tick_ns;	/* the update interval (rapl-update-us) */
	uint64_t pc6_delay_ns;	/* rapl-pc6-delay-us; 0 from an older QEMU */
	unsigned int idle_mw, uncore_mw;
	int npkgs, ncores;
	uint64_t pkg_pj[MAX_PKGS], idle_pj[MAX_PKGS], uncore_pj[MAX_PKGS];
	uint64_t core_pj[MAX_CORES], core_cpu_ns[MAX_CORES];
	unsigned int core_mw[MAX_CORES];
	unsigned int core_mhz[MAX_CORES];	/* APERF's, 0: none */
	int core_pkg[MAX_CORES];
	/* The register set's energy status unit: 1/2^esu J. */
	unsigned int esu;
	/*
	 * Intel's register set (the intel variant): PP0 and the DRAM term
	 * per package, each counter with its own start; the DRAM counter in
	 * 1/2^dram_esu J (0: none).
	 */
	int intel;
	unsigned int dram_esu, dram_idle_mw, dram_mw;
	uint64_t pp0_start_pj, dram_start_pj;
	uint64_t pp0_pj[MAX_PKGS], dram_pj[MAX_PKGS], dram_idle_pj[MAX_PKGS];
};

/* One reading of the truth: 0, -errno without the file, -EIO if torn. */
int read_truth(struct truth *t);

#endif /* _VR_TRUTH_H */
