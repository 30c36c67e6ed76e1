#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/doc-check.py's own test (TAP): on a scratch copy of the tree,
# one error of each kind the checker looks for is put into a document,
# and the checker must name each (and fail), while the copy as it was
# gives no finding that the tree itself does not give.
#
# Usage: scripts/doc-check-test.sh
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }

# The tracked files (docs, Makefiles, the tools' sources), in a git
# repository of their own so that the checker lists them the same way.
git -C "$top" ls-files -z | (cd "$top" && xargs -0 tar -cf -) | tar -xf - -C "$tmp"
cp "$top/scripts/doc-check.py" "$tmp/scripts/"
git -C "$tmp" init -q .

python3 "$top/scripts/doc-check.py" > "$tmp/.tree.out" 2>&1
python3 "$tmp/scripts/doc-check.py" > "$tmp/.copy.out" 2>&1
if diff <(grep -v '^doc-check:' "$tmp/.tree.out") \
	<(grep -v '^doc-check:' "$tmp/.copy.out") > /dev/null; then
	ok "the copy gives the tree's own findings"
else
	notok "the copy gives the tree's own findings"
	diff "$tmp/.tree.out" "$tmp/.copy.out" | sed 's/^/# /'
fi

# One error of each kind, each in a line of its own.
cat >> "$tmp/README.md" <<'EOF'

Broken: [a link](Documentation/no-such-doc.rst), `make no-such-target`,
`userspace/lib/no_such_file.c`, `--no-such-option`, vmrapl-vmm(1).

```sh
make -C bench/sim no-such-sim-target
vmraplctl --no-such-ctl-option list
vmraplctl no-such-command
vmrapl-exporter -Z
./vrsim --only steady \
    --no-such-vrsim-option
```
EOF
cat >> "$tmp/Documentation/testing.rst" <<'EOF'

Broken
======

``selftests/rig/run.sh KVER --no-such-rig-option``, ``kmod/*.no-such-ext``
and `an undefined reference`_.

An underline too short
=====
EOF
sed -i 's/^\.BR \\-h ", " \\-\\-help$/.BR \\-Q ", " \\-\\-no\\-such\\-man\\-option\n.TP\n&/' \
	"$tmp/Documentation/man/vmraplctl.8"
sed -i '0,/^\.B make install$/s//.B make no-such-man-target/' \
	"$tmp/Documentation/man/vmrapl-exporter.8"

python3 "$tmp/scripts/doc-check.py" > "$tmp/.broken.out" 2>&1
rc=$?
if [[ $rc == 1 ]]; then
	ok "a broken document fails the check (exit 1)"
else
	notok "a broken document fails the check (exit $rc, not 1)"
fi
expect() { # description regex
	if grep -qE -- "$2" "$tmp/.broken.out"; then
		ok "$1"
	else
		notok "$1: no finding matching '$2'"
	fi
}
expect "Markdown link" '^README.md:[0-9]+: link: Documentation/no-such-doc.rst'
expect "man page reference" '^README.md:[0-9]+: link: vmrapl-vmm\(1\)'
expect "make target, inline" 'make: "make no-such-target": the top-level Makefile'
expect "make -C DIR target, block" 'make: "make -C bench/sim no-such-sim-target": bench/sim/Makefile'
expect "make target, man page" '^Documentation/man/vmrapl-exporter.8:[0-9]+: make: "make no-such-man-target"'
expect "path" '^README.md:[0-9]+: path: userspace/lib/no_such_file.c'
expect "glob" '^Documentation/testing.rst:[0-9]+: path: kmod/\*.no-such-ext'
expect "lone option" 'option: --no-such-option: no project tool'
expect "vmraplctl option" 'option: vmraplctl has no option --no-such-ctl-option'
expect "vmraplctl command" 'option: vmraplctl has no command "no-such-command"'
expect "exporter short option" 'option: vmrapl-exporter has no option -Z'
expect "vrsim option on a continued line" 'option: vrsim has no option --no-such-vrsim-option'
expect "run.sh option" 'option: run.sh has no option --no-such-rig-option'
expect "man page long option" '^Documentation/man/vmraplctl.8:[0-9]+: option: vmraplctl has no option --no-such-man-option'
expect "man page short option" '^Documentation/man/vmraplctl.8:[0-9]+: option: vmraplctl has no option -Q'
if python3 -c 'import docutils' 2>/dev/null || /usr/bin/python3 -c 'import docutils' 2>/dev/null; then
	expect "RST: unknown reference" '^Documentation/testing.rst:[0-9]+: rst: error: Unknown target name'
	expect "RST: short underline" '^Documentation/testing.rst:[0-9]+: rst: warning: Title underline too short'
else
	expect "RST without docutils: a finding" 'rst: docutils is not installed'
fi
sed 's/^/# /' "$tmp/.broken.out"
echo "1..$n"
[[ $failed == 0 ]]
