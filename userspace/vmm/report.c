// SPDX-License-Identifier: MIT
/*
 * vmrapl-vmm: the summary printed at the end, as text or (--json) as one
 * JSON object; the selftests parse both, so their format is an interface.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "libvmrapl-host.h"
#include "vmm.h"

/* After vmrapl_open(): what the module says about itself (text mode). */
void report_vrapl_info(const struct vmm *m, const struct vmrapl_info *info)
{
	char doms[64], feats[256];

	if (m->o.json)
		return;
	vmrapl_host_domain_names(info->domains, doms, sizeof(doms));
	vmrapl_host_feature_names(info->features, feats, sizeof(feats));
	printf("vRAPL: abi %u, source %s, %u package(s), domains %s, "
	       "host ESU %u (1/%llu J), features %s\n",
	       info->abi_version, vmrapl_host_source_name(info->source),
	       info->nr_packages, doms[0] ? doms : "none", info->host_esu,
	       1ull << (info->host_esu & 63), feats[0] ? feats : "none");
}

/* --fake-vrapl: the same line for the in-process stand-in (text mode). */
void report_fake_info(const struct vmm *m)
{
	char doms[64];

	if (m->o.json)
		return;
	vmrapl_host_domain_names(m->domains, doms, sizeof(doms));
	printf("vRAPL: fake (in-process page, no module), domains %s, "
	       "%u W per busy vCPU\n", doms[0] ? doms : "none",
	       FAKE_WATTS_PER_VCPU);
}

static bool measured(const struct vmm *m, unsigned int dom)
{
	return m->domains & (1u << dom);
}

/* "1.234 J", or "not measured" for a domain the source does not measure. */
static const char *joules(const struct vmm *m, unsigned int dom, __u64 uj,
			  char *buf, size_t len)
{
	if (!measured(m, dom))
		return "not measured";
	snprintf(buf, len, "%.3f J", uj / 1e6);
	return buf;
}

static const char *guest_desc(const struct options *o, char *buf, size_t len)
{
	if (o->prog == PROG_DUTY)
		snprintf(buf, len, "duty:%u:%u", o->duty_pct, o->duty_period_ms);
	else if (o->prog == PROG_RDMSR)
		snprintf(buf, len, "rdmsr-loop:%s", regset_name(o->rdmsr_regset));
	else
		snprintf(buf, len, "%s", prog_name(o->prog));
	return buf;
}

/* ESU from the unit MSR the guest read, -1 if it never read one. */
static int guest_esu(const struct vcpu *v)
{
	int i;

	for (i = 0; i < v->nr_msrs; i++)
		if (v->msr[i].reg == VMRAPL_REG_UNIT && v->msr[i].seen)
			return (int)((v->msr[i].last >> 8) & 0x1f);
	return -1;
}

/* Seconds between the guest's first and last MSR report. */
static double report_span_s(const struct vcpu *v)
{
	return (double)(v->last_report_ns - v->first_report_ns) / 1e9;
}

/* "key": {"pkg": N, "core": N, "dram": N}; null for a domain not measured. */
static void json_energy(const struct vmm *m, const char *key, const __u64 *e)
{
	unsigned int d;

	printf("\"%s\": {", key);
	for (d = 0; d < VMRAPL_NR_DOMAINS; d++) {
		printf("%s\"%s\": ", d ? ", " : "", vmrapl_host_domain_name(d));
		if (measured(m, d))
			printf("%" PRIu64, (uint64_t)e[d]);
		else
			printf("null");
	}
	printf("}");
}

static bool have_stats(const struct vmm *m)
{
	return m->vstats && m->stats_rc == 0;
}

void print_json(const struct vmm *m, int code)
{
	char buf[64];
	unsigned int i, nvp;
	int j;

	printf("{\n  \"name\": ");
	json_str(stdout, m->o.name);
	printf(",\n  \"guest\": \"%s\",\n", guest_desc(&m->o, buf, sizeof(buf)));
	printf("  \"nr_vcpus\": %u,\n  \"duration_s\": %.6f,\n",
	       m->o.nr_vcpus, m->wall_s);
	printf("  \"interrupted\": %s,\n", m->interrupted ? "true" : "false");
	printf("  \"vrapl\": {\"on\": %s, \"mode\": \"%s\", ",
	       m->mode != VRAPL_OFF ? "true" : "false",
	       m->mode == VRAPL_KERNEL ? "kernel" :
	       m->mode == VRAPL_FAKE ? "fake" : "off");
	if (m->mode != VRAPL_OFF) {
		printf("\"regset\": \"%s\", \"page_mapped\": %s, ",
		       regset_name(m->o.regset),
		       m->page_mapped ? "true" : "false");
		printf("\"rdmsr\": %" PRIu64 ", \"rdmsr_page\": %" PRIu64
		       ", \"wrmsr_dropped\": %" PRIu64 ", \"gp\": %" PRIu64
		       ", \"stats_error\": ", m->xc.rdmsr, m->xc.rdmsr_page,
		       m->xc.wrmsr_dropped, m->xc.gp);
		if (m->stats_rc)
			json_str(stdout, strerror(-m->stats_rc));
		else
			printf("null");
	} else {
		printf("\"reason\": ");
		json_str(stdout, m->vrapl_off_reason);
	}
	printf("},\n  \"vcpus\": [\n");
	for (i = 0; i < m->o.nr_vcpus; i++) {
		const struct vcpu *v = &m->vcpus[i];
		double wall = (double)(v->end_ns - v->start_ns) / 1e9;
		double cpu = (double)v->cpu_ns / 1e9;
		int esu = guest_esu(v);

		printf("    {\"index\": %u, \"tid\": %d, \"cpu\": %d, "
		       "\"wall_s\": %.6f, \"cpu_s\": %.6f, \"util\": %.4f,\n",
		       v->idx, (int)v->tid, v->cpu, wall, cpu,
		       wall > 0 ? cpu / wall : 0.0);
		printf("     \"exits\": %" PRIu64 ", \"exits_io\": %" PRIu64
		       ", \"exits_hlt\": %" PRIu64 ", \"exits_msr\": %" PRIu64
		       ", \"exits_intr\": %" PRIu64 ", \"msr_foreign\": %" PRIu64
		       ", \"pio\": %" PRIu64 ", \"reports\": %" PRIu64
		       ", \"halted_s\": %.6f, \"report_span_s\": %.6f,\n"
		       "     \"tsc_since_read\": %" PRId64
		       ", \"report_ticks\": %" PRId64 ",\n"
		       "     \"report_host_uj\": %" PRIu64
		       ", \"window_s\": %.6f, \"window_host_uj\": %" PRIu64
		       ", \"window_max_step_uj\": %" PRIu64
		       ", \"window_max_step2_uj\": %" PRIu64 ",\n",
		       v->exits, v->exits_io, v->exits_hlt, v->exits_msr,
		       v->exits_intr, v->msr_foreign, v->pio, v->reports,
		       (double)v->halted_ns / 1e9, report_span_s(v),
		       v->tsc_since_read, v->report_ticks,
		       v->last_report_uj - v->first_report_uj,
		       v->warm_report_ns ? (double)(v->last_report_ns -
						    v->warm_report_ns) / 1e9 : 0.0,
		       v->warm_report_ns ? v->last_report_uj -
					   v->warm_report_uj : 0,
		       v->max_step_uj, v->max_step2_uj);
		printf("     \"guest_esu\": %d, \"msrs\": [", esu);
		for (j = 0; j < v->nr_msrs; j++) {
			const struct msr_track *t = &v->msr[j];

			printf("%s\n       {\"msr\": \"%#x\", \"energy\": %s, "
			       "\"count\": %" PRIu64 ", \"faults\": %" PRIu64,
			       j ? "," : "", t->index,
			       t->energy ? "true" : "false", t->count, t->faults);
			if (t->seen)
				printf(", \"first\": %" PRIu64 ", \"last\": %"
				       PRIu64, t->first, t->last);
			else
				printf(", \"first\": null, \"last\": null");
			if (t->energy) {
				printf(", \"wraps\": %" PRIu64 ", \"violations\": %"
				       PRIu64 ", \"delta\": %" PRIu64, t->wraps,
				       t->violations, t->delta);
				if (esu >= 0)
					printf(", \"joules\": %.6f, "
					       "\"window_joules\": %.6f",
					       ldexp((double)t->delta, -esu),
					       ldexp((double)(t->delta -
							      t->delta_warm),
						     -esu));
			} else {
				printf(", \"changes\": %" PRIu64, t->changes);
			}
			printf("}");
		}
		printf("%s],\n     \"host\": ", v->nr_msrs ? "\n     " : "");
		if (have_stats(m) && i < m->stats.nr_vcpus) {
			printf("{");
			json_energy(m, "energy_uj", m->vstats[i].energy_uj);
			printf(", \"runtime_ns\": %" PRIu64 "}",
			       (uint64_t)m->vstats[i].runtime_ns);
		} else {
			printf("null");
		}
		printf(",\n     \"error\": ");
		if (v->failed)
			json_str(stdout, v->err);
		else
			printf("null");
		printf("}%s\n", i + 1 < m->o.nr_vcpus ? "," : "");
	}
	printf("  ],\n  \"vm\": ");
	if (have_stats(m)) {
		const struct vmrapl_stats *st = &m->stats;

		printf("{");
		json_energy(m, "energy_uj", st->energy_uj);
		printf(", ");
		json_energy(m, "overhead_uj", st->overhead_uj);
		printf(", \"runtime_ns\": %" PRIu64 ", \"overhead_ns\": %" PRIu64
		       ", \"vpkgs\": [", (uint64_t)st->runtime_ns,
		       (uint64_t)st->overhead_ns);
		nvp = st->nr_vpkgs < VMRAPL_MAX_VPKGS ? st->nr_vpkgs :
							VMRAPL_MAX_VPKGS;
		for (i = 0; i < nvp; i++) {
			printf("%s\n    {\"vpkg\": %u, \"nr_vcpus\": %u, ",
			       i ? "," : "", i, m->vpstats[i].nr_vcpus);
			json_energy(m, "energy_uj", m->vpstats[i].energy_uj);
			printf(", ");
			json_energy(m, "overhead_uj", m->vpstats[i].overhead_uj);
			printf("}");
		}
		printf("%s]}", nvp ? "\n  " : "");
	} else {
		printf("null");
	}
	printf(",\n  \"overhead_thread\": ");
	if (m->o.overhead_pct >= 0)
		printf("{\"tid\": %d, \"pct\": %d, \"cpu_s\": %.6f, "
		       "\"added\": %s}", (int)m->ovh_tid, m->o.overhead_pct,
		       (double)m->ovh_cpu_ns / 1e9,
		       m->mode == VRAPL_KERNEL ? "true" : "false");
	else
		printf("null");
	printf(",\n  \"close_order\": \"%s\",\n  \"stats_after_kvm_close\": ",
	       m->o.kvm_first ? "kvm-first" : "vmrapl-first");
	if (!m->after_close_tried)
		printf("null");
	else if (m->after_close_rc == 0)
		printf("\"ok\"");
	else
		json_str(stdout, strerror(-m->after_close_rc));
	printf(",\n  \"exit_code\": %d\n}\n", code);
}

void print_human(const struct vmm *m)
{
	char buf[64], jbuf[3][32];
	unsigned int i;
	int j;

	printf("%s: guest %s, %u vCPU(s), %.3f s, vRAPL %s%s\n", m->o.name,
	       guest_desc(&m->o, buf, sizeof(buf)), m->o.nr_vcpus, m->wall_s,
	       m->mode == VRAPL_KERNEL ? "on" :
	       m->mode == VRAPL_FAKE ? "fake" : "off: ",
	       m->mode != VRAPL_OFF ? "" : m->vrapl_off_reason);
	if (m->mode != VRAPL_OFF)
		printf("MSR exits: %" PRIu64 " reads (%" PRIu64 " from the page), "
		       "%" PRIu64 " #GP\n", m->xc.rdmsr, m->xc.rdmsr_page,
		       m->xc.gp);
	for (i = 0; i < m->o.nr_vcpus; i++) {
		const struct vcpu *v = &m->vcpus[i];
		double wall = (double)(v->end_ns - v->start_ns) / 1e9;
		double cpu = (double)v->cpu_ns / 1e9;

		printf("vcpu %u tid %d: cpu %.3f s (%.1f%%), exits %" PRIu64
		       " (io %" PRIu64 ", hlt %" PRIu64 ", msr %" PRIu64 ")",
		       v->idx, (int)v->tid, cpu,
		       wall > 0 ? 100.0 * cpu / wall : 0.0, v->exits,
		       v->exits_io, v->exits_hlt, v->exits_msr);
		if (have_stats(m) && i < m->stats.nr_vcpus)
			printf(", host pkg %s",
			       joules(m, VMRAPL_DOM_PKG,
				      m->vstats[i].energy_uj[VMRAPL_DOM_PKG],
				      jbuf[0], sizeof(jbuf[0])));
		printf("\n");
		for (j = 0; j < v->nr_msrs; j++) {
			const struct msr_track *t = &v->msr[j];

			printf("  msr %#x: reads %" PRIu64 ", faults %" PRIu64,
			       t->index, t->count, t->faults);
			if (t->seen)
				printf(", first %#" PRIx64 ", last %#" PRIx64,
				       t->first, t->last);
			if (t->energy)
				printf(", wraps %" PRIu64 ", violations %" PRIu64,
				       t->wraps, t->violations);
			if (t->energy && guest_esu(v) >= 0 &&
			    report_span_s(v) > 0)
				printf(", %.3f J in %.3f s: %.2f W",
				       ldexp((double)t->delta, -guest_esu(v)),
				       report_span_s(v),
				       ldexp((double)t->delta, -guest_esu(v)) /
				       report_span_s(v));
			printf("\n");
		}
		if (v->failed)
			printf("  error: %s\n", v->err);
	}
	if (have_stats(m))
		printf("vm: pkg %.3f J (overhead %.3f J), core %s, dram %s, "
		       "runtime %.3f s\n",
		       m->stats.energy_uj[VMRAPL_DOM_PKG] / 1e6,
		       m->stats.overhead_uj[VMRAPL_DOM_PKG] / 1e6,
		       joules(m, VMRAPL_DOM_CORE,
			      m->stats.energy_uj[VMRAPL_DOM_CORE], jbuf[1],
			      sizeof(jbuf[1])),
		       joules(m, VMRAPL_DOM_DRAM,
			      m->stats.energy_uj[VMRAPL_DOM_DRAM], jbuf[2],
			      sizeof(jbuf[2])),
		       (double)m->stats.runtime_ns / 1e9);
	if (m->after_close_tried)
		printf("GET_STATS after KVM close: %s\n", m->after_close_rc ?
		       strerror(-m->after_close_rc) : "ok");
}
