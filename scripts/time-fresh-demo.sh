#!/bin/sh
# Times `make demo` on a fresh Debian 12 system, install included (README "Two commands";
# issue 47: 60 s or less). Needs root (chroot and mounts) and the network (deb.debian.org).
#
#   sh scripts/time-fresh-demo.sh [ROOT.tar]
#
# ROOT.tar is a pristine Debian 12 base system, made once with
#   debootstrap bookworm /work/fresh-root http://deb.debian.org/debian
#   tar -C /work/fresh-root -cf /work/fresh-root.tar .
# (default /work/fresh-root.tar). Each run unpacks a copy under /tmp, clones this tree's
# HEAD into it (with the host's git: cloning is not part of `make demo`), installs make
# (a fresh system has none; timed apart), then times `make demo`, and `make demo` again
# after `make clean` (the build and the render alone: the rest of the first figure is the
# install). The copy is removed at the end; the steps' logs stay beside it.
set -eu
tar=${1:-/work/fresh-root.tar}
tree=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" -eq 0 ] || { echo "time-fresh-demo: needs root (chroot)" >&2; exit 2; }
[ -r "$tar" ] || { echo "time-fresh-demo: $tar: no such base system (see the top of $0)" >&2; exit 2; }

root=$(mktemp -d /tmp/fresh-demo.XXXXXX)
cleanup() {
	for m in dev/pts dev sys proc; do
		mountpoint -q "$root/$m" && umount -l "$root/$m"
	done
	rm -rf "$root"
}
trap cleanup EXIT INT TERM

tar -C "$root" -xf "$tar"
cp /etc/resolv.conf "$root/etc/resolv.conf"
mount -t proc proc "$root/proc"
mount -t sysfs sys "$root/sys"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"
git clone -q "$tree" "$root/src/tidepool"
echo "time-fresh-demo: $(git -C "$tree" log -1 --format='%h %s' | cut -c1-72)"
echo "time-fresh-demo: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

# Seconds since the epoch with a fraction, for the steps' times.
now() { date +%s.%N; }
step() { # step NAME COMMAND: runs COMMAND in the fresh system, prints its time
	name=$1
	shift
	log=$root.$(echo "$name" | tr -c 'a-z\n' -).log
	t0=$(now)
	# Each line of output with the seconds since the step began (for the breakdown).
	{ chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
		DEBIAN_FRONTEND=noninteractive /bin/sh -c "cd /src/tidepool && $* 2>&1; s=\$?; times; echo status \$s"; } |
		perl -MTime::HiRes=time -ne "BEGIN { \$| = 1 } printf '%7.2f %s', time - $t0, \$_" >"$log"
	t1=$(now)
	tail -1 "$log" | grep -q ' status 0$' || { tail -20 "$log"; echo "time-fresh-demo: $name failed" >&2; exit 1; }
	# CPU time of the step's processes (the shell's `times`, second line: its children's
	# user and system time), a figure a loaded machine changes less than the elapsed time
	cpu=$(tail -2 "$log" | head -1 | awk '{ print $2, $3 }' | sed 's/m/ /g; s/s//g' |
		awk '{ printf "%.1f", 60 * $1 + $2 + 60 * $3 + $4 }')
	awk -v n="$name" -v a="$t0" -v b="$t1" -v c="$cpu" \
		'BEGIN { printf "%-36s %6.1f s (CPU %s s)\n", n, b - a, c }'
}

step "make itself (apt-get)" 'apt-get update -qq && apt-get install -y -qq --no-install-recommends make'
step "make demo (install, build, render)" 'make demo'
# Where the time went: apt's lists and downloads (until dpkg unpacks the first package),
# dpkg (unpacking and configuring), the build, the render.
awk '/install-deps: installing/ && !i { i = $1 } /Selecting previously unselected/ && !u { u = $1 }
	/^ *[0-9.]+ +CC / && !c { c = $1 } / render scenes/ { r = $1 } { e = $1 }
	END { printf "    apt-get update and download %6.1f s\n    dpkg unpack and configure   %6.1f s\n", u - i, c - u
	      printf "    build                       %6.1f s\n    render                      %6.1f s\n", r - c, e - r }' \
	"$log"
n=$(grep -c 'Selecting previously unselected' "$log")
echo "    $n packages installed"
step "make demo again (build, render)" 'make clean >/dev/null && make demo'
ls -l "$root/src/tidepool/out/pond.mp4" | awk '{ print "    out/pond.mp4:", $5, "bytes" }'
echo "time-fresh-demo: the steps' output is in $root.*.log"
