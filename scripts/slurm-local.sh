#!/bin/sh
# slurm-local.sh start|stop|status - a single-node Slurm on this machine, from Debian
# packages and without systemd, for the test suite (scripts/farm-test.sh) and for trying
# `tidepool tasks --slurm` before using a real cluster.
#
#   start   installs slurm-wlm, munge and GNU parallel when missing (apt-get), writes a
#           one-node configuration under $TP_SLURM_DIR (default /tmp/tidepool-slurm),
#           starts munged (as the munge user), slurmctld -D and slurmd -D in the
#           background and waits until the node is idle. Prints the line to give the
#           Slurm commands the configuration: export SLURM_CONF=$TP_SLURM_DIR/slurm.conf
#   stop    stops the daemons this script started (by the process ids it recorded).
#   status  exit 0 if the node answers.
#
# Needs root (slurmd runs jobs as their user; munged needs /run/munge). The config uses
# ProctrackType=proctrack/linuxproc and TaskPlugin=task/none, so no cgroups or systemd
# are needed. Exit status 1 with the reason (and the daemons' last log lines) when Slurm
# does not come up.
set -eu

DIR=${TP_SLURM_DIR:-/tmp/tidepool-slurm}
CONF=$DIR/slurm.conf
export SLURM_CONF="$CONF"

die() {
	echo "slurm-local: $*" >&2
	for f in "$DIR"/slurmctld.log "$DIR"/slurmd.log /var/log/munge/munged.log; do
		[ -s "$f" ] && { echo "--- last lines of $f:" >&2; tail -n 15 "$f" >&2; }
	done
	exit 1
}

alive() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

install_pkgs() {
	missing=""
	for p in slurm-wlm munge parallel; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	echo "slurm-local: installing:$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq || die "apt-get update failed"
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null ||
		die "apt-get install$missing failed"
}

start_munge() {
	if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
		return 0 # a munged is already running (ours or the system's)
	fi
	id munge >/dev/null 2>&1 || die "no munge user (is the munge package installed?)"
	if [ ! -s /etc/munge/munge.key ]; then
		mungekey --create --keyfile=/etc/munge/munge.key 2>/dev/null ||
			dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 2>/dev/null
		chown munge:munge /etc/munge/munge.key
		chmod 0400 /etc/munge/munge.key
	fi
	mkdir -p /run/munge /var/lib/munge /var/log/munge
	chown munge:munge /run/munge /var/lib/munge /var/log/munge
	chmod 0755 /run/munge
	runuser -u munge -- /usr/sbin/munged --force || die "munged did not start"
	i=0
	until munge -n 2>/dev/null | unmunge >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -gt 50 ] && die "munged does not answer"
		sleep 0.2
	done
	# ours to stop later
	[ -s /run/munge/munged.pid ] && cp /run/munge/munged.pid "$DIR/munged.pid"
	return 0
}

write_conf() {
	host=$(hostname -s)
	cpus=$(nproc)
	mkdir -p "$DIR/state" "$DIR/spool"
	cat >"$CONF" <<CONF
# single-node Slurm for tidepool's tests (scripts/slurm-local.sh)
ClusterName=tidepool
SlurmctldHost=$host(127.0.0.1)
AuthType=auth/munge
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MinJobAge=600
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/slurmctld.log
SlurmdLogFile=$DIR/slurmd.log
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=tidepool Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
}

start() {
	[ "$(id -u)" -eq 0 ] || die "needs root (slurmd and munged); run as root or under sudo"
	install_pkgs
	mkdir -p "$DIR"
	if alive "$DIR/slurmctld.pid" && alive "$DIR/slurmd.pid" && sinfo -h >/dev/null 2>&1; then
		echo "export SLURM_CONF=$CONF"
		return 0
	fi
	write_conf
	start_munge
	# -D: stay in the foreground (no systemd); we keep their ids to stop them later.
	slurmctld -D -f "$CONF" >>"$DIR/slurmctld.out" 2>&1 &
	echo $! >"$DIR/slurmctld.pid"
	sleep 1
	slurmd -D -f "$CONF" >>"$DIR/slurmd.out" 2>&1 &
	echo $! >"$DIR/slurmd.pid"
	i=0
	while :; do
		alive "$DIR/slurmctld.pid" || die "slurmctld exited (see above)"
		alive "$DIR/slurmd.pid" || die "slurmd exited (see above)"
		state=$(sinfo -h -o %T 2>/dev/null | head -n 1 || true)
		case $state in
		idle*|mixed*|alloc*) break ;;
		down*|drain*) scontrol update nodename="$(hostname -s)" state=resume >/dev/null 2>&1 || true ;;
		esac
		i=$((i + 1))
		[ $i -gt 120 ] && die "the node is not idle after 60 s (state: ${state:-no answer})"
		sleep 0.5
	done
	echo "export SLURM_CONF=$CONF"
}

stop() {
	for d in slurmd slurmctld; do
		if alive "$DIR/$d.pid"; then
			kill "$(cat "$DIR/$d.pid")" 2>/dev/null || true
		fi
	done
	for d in slurmd slurmctld; do
		i=0
		while alive "$DIR/$d.pid" && [ $i -lt 50 ]; do
			i=$((i + 1))
			sleep 0.2
		done
		rm -f "$DIR/$d.pid"
	done
	if alive "$DIR/munged.pid"; then
		kill "$(cat "$DIR/munged.pid")" 2>/dev/null || true
		rm -f "$DIR/munged.pid"
	fi
}

case ${1:-} in
start) start ;;
stop) stop ;;
status) sinfo -h >/dev/null 2>&1 ;;
*) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
