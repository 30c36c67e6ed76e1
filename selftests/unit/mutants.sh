#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Mutation check of the unit tests: each mutant below is a plausible
# mistake in a private copy of the core (kmod/ is never touched); every
# test_*.c is built against the copy and run.  A mutant is "killed" when
# at least one test fails.  Prints one line per mutant and exits non-zero
# if any survived.
#
#   selftests/unit/mutants.sh [filter]     (filter: substring of a name)
#
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
CC=${CC:-gcc}
CFLAGS="-O2 -g -Wall -Wextra -Werror -DVR_USERSPACE -DVR_LOCK_CHECK -DVR_TOP=\"$TOP\""
WORK=$(mktemp -d /tmp/vr-mutants.XXXXXX)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$WORK"' EXIT
FILTER=${1:-}

# name @@ file @@ exact text @@ replacement   (\n: a newline)
MUTANTS=$(cat <<'EOF'
wrap-no-mask @@ vr_units.c @@ return ((cur << shift) - (old << shift)) >> shift; @@ return (cur - old) + 0 * shift;
carry-dropped @@ vr_units.c @@ *carry = t & ((1ULL << sh) - 1); @@ *carry = 0;
carry-not-added @@ vr_units.c @@ return t >> sh; @@ return units >> sh;
eu-to-units-shift @@ vr_units.c @@ return eu << (esu - VR_EU_SHIFT); @@ return eu << (esu - VR_EU_SHIFT - 1);
uj-coarse @@ vr_units.c @@ return vr_mul_div(eu, 1000000, 1ULL << VR_EU_SHIFT); @@ return (eu >> VR_EU_SHIFT) * 1000000;
energy-rem-dropped @@ vr_units.c @@ *rem += r; @@ *rem = r;
energy-rem-no-carry @@ vr_units.c @@ 		q++; @@ 		q += 0;
drain-divisor @@ vr_lag.c @@ s = vr_mul_div(amount[d], cum, total); @@ s = vr_mul_div(amount[d], cum, total + 1);
drain-ns @@ vr_core.c @@ WRITE_ONCE(a->ns, a->ns + r); @@ WRITE_ONCE(a->ns, a->ns + r + (r > 1000));
idle-from-given @@ vr_core.c @@ st[d].idle = sp.de[d] - sp.cur[d] - sp.prev[d]; @@ st[d].idle = sp.de[d] - sp.given_cur[d] - sp.given_prev[d];
occupied-all-cpus @@ vr_core.c @@ cap = (u64)p->nr_online * dt; @@ cap = (u64)p->nr_cpus * dt;
occupied-no-static @@ vr_core.c @@ stat_busy = cap ? vr_mul_div(stat, @@ stat_busy = cap ? 0 * vr_mul_div(stat,
none-is-busy @@ vr_core.c @@ VR_STATIC_NONE)\n		stat_busy = 0; @@ VR_STATIC_NONE)\n		stat_busy = stat;
busy-is-dyn @@ vr_core.c @@ vr_mul_div(stat, dt - p->fold_idle, dt) : 0; @@ 0 * dt : 0;
busy-idle-charged @@ vr_core.c @@ vr_mul_div(stat, dt - p->fold_idle, dt) : 0; @@ stat : stat;
no-static-debt @@ vr_core.c @@ p->static_debt = want - de; @@ p->static_debt = 0;
doms-all-busy @@ vr_core.c @@ sp->cur[d] = de ? vr_mul_div(sp->de[d], @@ sp->cur[d] = de ? sp->de[d] + 0 * vr_mul_div(sp->de[d],
no-reset-check @@ vr_core.c @@ } else if (*eu > max_eu) { @@ } else if (0) {
percore-owed-dropped @@ vr_core.c @@ p->pc_owed = want - sp->pc; @@ p->pc_owed = 0;
percore-owed-ignored @@ vr_core.c @@ u64 want = seen_e + p->pc_owed, cap; @@ u64 want = seen_e, cap;
lag-owed-dropped @@ vr_lag.c @@ p->pc_owed += dprev - dyn; @@ p->pc_owed += 0;
no-overrun-check @@ vr_core.c @@ if (max_eu >= range_eu) { @@ if (max_eu >= range_eu && 0) {
wrap-count-le @@ vr_core.c @@ } else if (raw < p->raw[d] && d == VR_DOM_PKG) { @@ } else if (raw <= p->raw[d] && d == VR_DOM_PKG) {
no-slack @@ vr_core.c @@ slack = s->esu <= VR_EU_SHIFT ? 2ULL << (VR_EU_SHIFT - s->esu) : 2; @@ slack = 0;
reset-bound-dt @@ vr_core.c @@ dt + 2 * p->step_ns, &rem) + @@ dt, &rem) +
reset-keeps-delta @@ vr_core.c @@ *eu = vr_units_to_eu(raw, s->esu, &p->carry[d]); @@ (void)0;
offline-drops-busy @@ vr_cpu.c @@ p->fold_busy += c->busy_ns; @@ (void)0;
fold-same-seq @@ vr_cpu.c @@ c->seq = p->seq + 1; @@ c->seq = p->seq;
online-next-seq @@ vr_cpu.c @@ c->seq = p->seq; @@ c->seq = p->seq + 1;
fold-idle-busy @@ vr_cpu.c @@ 	if (!c->busy)\n		return;\n	c->busy_ns += d; @@ 	c->busy_ns += d;
lost-split @@ vr_core.c @@ if (!lost)\n		vr_split_policy @@ if (1)\n		vr_split_policy
baseline-not-lost @@ vr_core.c @@ d == VR_DOM_PKG)\n			lost = true; @@ d == VR_DOM_PKG)\n			lost = lost;
unread-pkg-not-lost @@ vr_core.c @@ if (d == VR_DOM_PKG)\n				lost = true; @@ if (d == VR_DOM_PKG)\n				lost = lost;
learn-per-epoch @@ vr_static.c @@ if (p->learn_ns < VR_LEARN_NS) { @@ if (p->learn_ns < VR_LEARN_NS / 100) {
learn-sum-reset @@ vr_static.c @@ p->learn_skip = 0;\n		return; @@ p->learn_skip = 0;\n		p->learn_eu = 0;\n		p->learn_ns = 0;\n		return;
learn-from-lost @@ vr_static.c @@ if (lost || busy) { @@ if (busy) {
learn-prov-early @@ vr_static.c @@ p->learn_ns < VR_LEARN_FIRST_NS) @@ p->learn_ns < VR_LEARN_FIRST_NS / 5)
learn-no-skip @@ vr_static.c @@ } else if (p->learn_skip < skip) { @@ } else if (0) {
lag-dropped @@ vr_lag.c @@ dprev = vr_mul_div(p->prev_dyn, p->prev_tail, @@ dprev = 0 * vr_mul_div(p->prev_dyn, p->prev_tail,
lag-tail-as-lag @@ vr_lag.c @@ vr_mul_div(p->prev_dyn, p->prev_tail, @@ vr_mul_div(p->prev_dyn, p->lag_ns + 0 * p->prev_tail,
lag-seen-own-only @@ vr_lag.c @@ p->prev_seen = (p->prev_busy ? p->prev_tail : 0) + busy - t; @@ p->prev_seen = busy - t;
lag-idle-tail-kept @@ vr_lag.c @@ if (t < p->prev_tail)\n			p->prev_tail = t; @@ if (0)\n			p->prev_tail = t;
lag-tail-dropped @@ vr_lag.c @@ dprev = dyn; @@ dprev = 0;
lag-cur-not-reduced @@ vr_core.c @@ (busy ? dyn - dprev : 0); @@ (busy ? dyn : 0);
lag-weights-total-ns @@ vr_lag.c @@ a->prev_e : a->prev_ns; @@ a->prev_e : a->ns;
lag-divisor @@ vr_lag.c @@ p->prev_busy_e : p->prev_busy; @@ p->prev_busy_e : p->prev_busy + 1;
lag-list-not-cleared @@ vr_lag.c @@ 	p->prev = NULL;\n	p->prev_busy = 0; @@ 	p->prev_busy = 0;
lag-busy-not-cleared @@ vr_lag.c @@ 	p->prev = NULL;\n	p->prev_busy = 0; @@ 	p->prev = NULL;
lag-window-long @@ vr_lag.c @@ now - p->prev_t > 2 * p->step_ns @@ now - p->prev_t > 20 * p->step_ns
lag-window-short @@ vr_lag.c @@ now - p->prev_t > 2 * p->step_ns @@ now - p->prev_t > 1 * p->step_ns
lag-lost-keeps @@ vr_lag.c @@ if (busy || !keep || !p->lag_ns || @@ if (busy || (!keep && 0) || !p->lag_ns ||
lag-lost-relists @@ vr_lag.c @@ if (busy && keep && p->lag_ns) { @@ if (busy && (keep || 1) && p->lag_ns) {
lag-no-list-ns @@ vr_core.c @@ a->prev_ns = r; @@ a->prev_ns = r / 2 + 1;
forget-noop @@ vr_lag.c @@ *pp = a->pprev; @@ pp = &a->pprev;
needed-misses-switch-out @@ vr_cpu.c @@ WRITE_ONCE(c->gate, next ? VR_GATE_SLOW : 0); @@ WRITE_ONCE(c->gate, next ? 0 : 0);
gate-misses-cur @@ vr_core.h @@ (c->cur ? VR_GATE_SLOW : 0) | (u32)c->core_due); @@ (u32)c->core_due);
needed-misses-core-due @@ vr_core.h @@ (c->cur ? VR_GATE_SLOW : 0) | (u32)c->core_due); @@ (c->cur ? VR_GATE_SLOW : 0));
needed-misses-next @@ vr_core.h @@ (busy ? 0 : VR_GATE_IDLE) || next; @@ (busy ? 0 : VR_GATE_IDLE) || (next && 0);
gate-idle-inverted @@ vr_core.h @@ (c->busy ? 0 : VR_GATE_IDLE) @@ (c->busy ? VR_GATE_IDLE : 0)
gate-stale-after-close @@ vr_cpu.c @@ WRITE_ONCE(c->core_due, true);\n					vr_cpu_gate_set(c); @@ WRITE_ONCE(c->core_due, true);
gate-stale-after-sample @@ vr_cpu.c @@ WRITE_ONCE(c->core_due, false);\n	vr_cpu_gate_set(c); @@ WRITE_ONCE(c->core_due, false);
gate-stale-after-purge @@ vr_cpu.c @@ c->cur = NULL;\n		vr_cpu_gate_set(c); @@ c->cur = NULL;
core-corr-dropped @@ vr_cpu.c @@ c->core_corr += (s64)(eu - cred); @@ (void)cred;
core-corr-unshared @@ vr_cpu.c @@ eu = busy ? vr_mul_div(eu, own, busy) : eu / 2; @@ (void)own;
core-corr-idle-dropped @@ vr_static.c @@ f->core_carry += core_corr; @@ (void)core_corr;
core-excess-dropped @@ vr_static.c @@ f->core_carry += f->blk_core - core; @@ (void)0;
zero-weight-is-none @@ vr_cpu.c @@ 				if (!c->core_wok) @@ 				if (!c->core_w)
core-mean-of-blocks @@ vr_static.c @@ t = vr_mul_div(f->blk_dt, 1, 1000); @@ t = 20000;
learn-first-epoch-skipped @@ vr_static.c @@ if (!p->learn_skip && dt >= skip) { @@ if (0) {
learn-first-epoch-no-tail @@ vr_static.c @@ de = de > tail ? de - tail : 0; @@ de = de + 0 * tail;
busy-power-no-lead @@ vr_static.c @@ lead = vr_energy_eu(vr_busy_before(p), p->lag_ns, &rem); @@ lead = 0 * vr_energy_eu(vr_busy_before(p), p->lag_ns, &rem);
tail-busy-whole @@ vr_cpu.c @@ d = (s64)(now - c->turn) > 0 ? now - c->turn : 0; @@ d = win + 0 * c->turn;
tail-busy-not-counted @@ vr_cpu.c @@ 		e = win;\n @@ 		e = 0;\n
tail-idle-not-counted @@ vr_cpu.c @@ e = c->turn - (now - win); @@ e = 0 * c->turn;
tail-idle-linear @@ vr_cpu.c @@ return d >= e ? e * e : d * (2 * e - d); @@ return d >= e ? e * win : d * (2 * e - d);
tail-run-ignored @@ vr_cpu.c @@ return d >= e ? e * e : d * (2 * e - d); @@ return e * e + 0 * d;
tail-turn-not-moved @@ vr_cpu.c @@ c->turn = now;\n	}\n @@ c->turn = c->turn + 0 * now;\n	}\n
tail-last-run-kept @@ vr_cpu.c @@ c->last_run = now - c->turn; @@ c->last_run = c->last_run + 0 * now;
tail-old-record @@ vr_static.c @@ p->learn_tail = lost ? 0 : p->fold_tail; @@ p->learn_tail = lost || !de || dt <= p->lag_ns ? p->learn_tail : p->fold_tail;
tail-over-no-estimate @@ vr_static.c @@ est = vr_mul_div(de, VR_FJ_PER_J >> VR_EU_SHIFT, dt); @@ est = 0 * de;
tail-none-without-estimate @@ vr_static.c @@ tail = vr_busy_tail(p, est, idle_dt); @@ tail = idle_dt ? 0 : vr_busy_tail(p, est, idle_dt);
tail-first-unsolved @@ vr_static.c @@ idle_dt = dt; @@ idle_dt = 0 * dt;
tail-first-lead-kept @@ vr_static.c @@ busy_uw = busy_uw > lead ? busy_uw - lead : 0; @@ busy_uw = busy_uw + 0 * lead;
tail-lead0-never @@ vr_static.c @@ p->learn_lead0 = !vr_busy_before(p); @@ p->learn_lead0 = 0 * vr_busy_before(p);
tail-mean-power @@ vr_static.c @@ f = vr_mul_div(dt - p->lag_ns, k, dt - k); @@ f = p->lag_ns + 0 * k;
tail-no-resolve @@ vr_static.c @@ f = vr_mul_div(dt - p->lag_ns, k, dt - k); @@ f = k;
tail-no-clamp @@ vr_static.c @@ k = dt / 2; @@ k = k;
floor-sixteenth @@ vr_static.c @@ m = p->learn_ns < p->idle_mem_ns ? p->learn_ns : p->idle_mem_ns; @@ m = p->idle_mem_ns / 16;
floor-by-count @@ vr_static.c @@ m = p->learn_ns < p->idle_mem_ns ? p->learn_ns : p->idle_mem_ns; @@ m = VR_LEARN_NS < p->idle_mem_ns ? VR_LEARN_NS : p->idle_mem_ns;
floor-no-forgetting @@ vr_static.c @@ p->idle_mem_ns = VR_LEARN_MEM_NS;\n	m = @@ p->idle_mem_ns = p->idle_mem_ns;\n	m =
floor-seed-no-memory @@ vr_static.c @@ p->idle_mem_ns = p->idle_known ? VR_LEARN_MEM_NS : 0; @@ p->idle_mem_ns = 0;
host-floor-ignored @@ vr_static.c @@ } else if (p->host_floor_uw) { @@ } else if (0 && p->host_floor_uw) {
host-floor-over-idle @@ vr_static.c @@ if (p->idle_known || (p->idle_prov && !p->host_floor_uw)) { @@ if (!p->host_floor_uw && (p->idle_known || p->idle_prov)) {
host-floor-under-prov @@ vr_static.c @@ if (p->idle_known || (p->idle_prov && !p->host_floor_uw)) { @@ if (p->idle_known || p->idle_prov) {
host-floor-provisional @@ vr_static.c @@ return p->learn_static && p->idle_known ? p->idle_uw : 0; @@ return p->learn_static && (p->idle_known || p->idle_prov) ? p->idle_uw : 0;
host-floor-of-param @@ vr_static.c @@ return p->learn_static && p->idle_known ? p->idle_uw : 0; @@ return p->idle_known || !p->learn_static ? p->idle_uw | p->p_static_uw : 0;
step-slow-reads-kept @@ vr_step.c @@ if (4 * vr_step_adjacent(s) > n) @@ if (4 * vr_step_adjacent(s) > 4 * n)
EOF
)

cp -r "$TOP"/kmod/vr_*.c "$TOP"/kmod/vr_*.h "$TOP"/kmod/user "$WORK/"
TESTS=$(cd "$HERE" && ls test_*.c)
killed=0
survived=0
while read -r line; do
	[ -z "$line" ] && continue
	name=${line%% @@ *}; line=${line#* @@ }
	file=${line%% @@ *}; line=${line#* @@ }
	from=${line%% @@ *}; to=${line#* @@ }
	case "$name" in *"$FILTER"*) ;; *) continue ;; esac
	m="$WORK/$name"
	mkdir -p "$m"
	cp -r "$WORK"/vr_*.c "$WORK"/vr_*.h "$WORK"/user "$m/"
	if ! FROM="$from" TO="$to" perl -0pi -e '
		my ($f, $t) = ($ENV{FROM}, $ENV{TO});
		$f =~ s/\\n/\n/g; $t =~ s/\\n/\n/g;
		$n += s/\Q$f\E/$t/;
		END { exit($n ? 0 : 3) }' "$m/$file"; then
		echo "not applied: $name (text not found in $file)"
		survived=$((survived + 1))
		continue
	fi
	verdict="SURVIVED"
	by=""
	for t in $TESTS; do
		b="$m/${t%.c}"
		if ! $CC $CFLAGS -I"$m" -I"$HERE" -I"$TOP/uapi" -o "$b" "$HERE/$t" \
			"$m"/vr_*.c -lm 2>"$m/cc.log"; then
			verdict="killed"; by="$by ${t%.c}(build)"; continue
		fi
		if ! timeout 120 "$b" >"$m/${t%.c}.log" 2>&1; then
			verdict="killed"
			by="$by ${t%.c}($(grep -c '^not ok' "$m/${t%.c}.log"))"
		fi
	done
	printf '%-26s %s%s\n' "$name" "$verdict" "${by:+ by$by}"
	if [ "$verdict" = killed ]; then
		killed=$((killed + 1))
	else
		survived=$((survived + 1))
	fi
done <<<"$MUTANTS"
echo "# mutants: $killed killed, $survived survived"
[ "$survived" -eq 0 ]
