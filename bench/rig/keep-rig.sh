#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# For a run of the simulator part of "make bench" alone (no rig): the new
# simulator RESULTS.md and JSON, with the rig sections and the "rig"
# object of an earlier bench/RESULTS.md and bench/results.json kept as
# they were (collect.sh made them; they say which rig run they are from).
# The summary at the top (bench/summary.py) is written again for the
# result.
#
# Usage: keep-rig.sh OLD_MD OLD_JSON SIM_MD SIM_JSON OUT_MD OUT_JSON
set -euo pipefail
old_md=${1:?usage: keep-rig.sh OLD_MD OLD_JSON SIM_MD SIM_JSON OUT_MD OUT_JSON}
old_json=${2:?}
sim_md=${3:?}
sim_json=${4:?}
out_md=${5:?}
out_json=${6:?}
python3 - "$old_md" "$old_json" "$sim_md" "$sim_json" "$out_md" "$out_json" <<'PY'
import json, sys

old_md, old_json, sim_md, sim_json, out_md, out_json = sys.argv[1:]
old = open(old_md).read()
# The rig sections start with the instruction-count one when there is one.
starts = [i for i in (old.find('## Context-switch cost in instructions (rig)'),
                      old.find('## Context-switch overhead (rig)')) if i >= 0]
if not starts:
    sys.exit('keep-rig: no rig sections in %s' % old_md)
rig = old[min(starts):]
note = ('The rig sections below were not rerun with this simulator run: they'
        ' are kept from the previous bench/RESULTS.md, as bench/rig/collect.sh'
        ' wrote them (their kernel, machine and rig verdicts are theirs).\n\n')
text = open(sim_md).read().rstrip('\n') + '\n\n' + note + rig
open(out_md, 'w').write(text)
# The simulator's JSON as it wrote it (one line per workload), the rig
# object appended before its last brace.
sim = open(sim_json).read().rstrip()
json.loads(sim)
o = json.load(open(old_json))
if 'rig' in o:
    rig = json.dumps(o['rig'], indent=2).replace('\n', '\n  ')
    sim = sim[:-1].rstrip() + (',\n  "rig_kept_from_previous_run": true,'
                               '\n  "rig": %s\n}' % rig)
json.loads(sim)
with open(out_json, 'w') as f:
    f.write(sim + '\n')
print('keep-rig: wrote %s and %s' % (out_md, out_json))
PY
# The summary at the top of OUT_MD (bench/summary.py), with the kept rig
# sections' targets.
python3 "$(cd "$(dirname "$0")/.." && pwd)/summary.py" "$out_md"
