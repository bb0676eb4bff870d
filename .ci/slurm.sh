#!/usr/bin/env bash
# A single-node Slurm of its own, for tests and CI: `slurm.sh up DIR` writes a slurm.conf
# and a munge key under DIR, starts munged, slurmctld and slurmd (as root) with every
# file of theirs in DIR, and waits until `sinfo` shows the node idle; `slurm.sh down DIR`
# stops them and removes DIR. Clients find this Slurm through SLURM_CONF=DIR/slurm.conf.
# The node is `localhost` with OVERCOMMIT (default 8) times the machine's CPUs, so a job
# may run more tasks than there are cores; the ports are SLURMCTLD_PORT and SLURMD_PORT.
set -euo pipefail

usage() { echo "usage: $0 up|down DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
command=$1
dir=$(realpath -m "$2")

stop() {  # stop the daemons whose pid files are given, together (each takes ~2 s)
    local pids=() pid
    for file in "$@"; do
        pid=$(cat "$file" 2>/dev/null) && kill "$pid" 2>/dev/null && pids+=("$pid")
    done
    for _ in $(seq 100); do
        for i in "${!pids[@]}"; do kill -0 "${pids[$i]}" 2>/dev/null || unset "pids[$i]"; done
        [ ${#pids[@]} -eq 0 ] && return 0
        sleep 0.1
    done
    kill -9 "${pids[@]}" 2>/dev/null || true
}

down() {
    [ -d "$dir" ] || return 0
    # Jobs first, so that no task outlives its Slurm: scancel returns before they end.
    export SLURM_CONF="$dir/slurm.conf"
    if scancel --quiet --user=root 2>/dev/null; then
        for _ in $(seq 100); do
            [ -z "$(squeue --noheader --format=%i 2>/dev/null)" ] && break
            sleep 0.1
        done
    fi
    stop "$dir/slurmd.pid" "$dir/slurmctld.pid" "$dir/munged.pid"
    rm -rf "$dir"
}

up() {
    [ "$(id -u)" -eq 0 ] || { echo "slurm.sh: must run as root" >&2; exit 1; }
    for daemon in munged slurmctld slurmd; do
        command -v "$daemon" >/dev/null || PATH=$PATH:/usr/sbin
        command -v "$daemon" >/dev/null || {
            echo "slurm.sh: $daemon is not installed (apt-get install slurm-wlm munge)" >&2
            exit 1; }
    done
    mkdir -p -m 700 "$dir"
    mkdir -p "$dir/spool" "$dir/state"
    trap 'echo "slurm.sh: logs in $dir:" >&2; tail -n 20 "$dir"/*.log >&2; down' ERR

    dd if=/dev/urandom of="$dir/munge.key" bs=1024 count=1 status=none
    chmod 400 "$dir/munge.key"
    munged --force --socket="$dir/munge.socket" --key-file="$dir/munge.key" \
        --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munged.seed"

    cat > "$dir/slurm.conf" <<CONF
ClusterName=dtfnb
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=${SLURMCTLD_PORT:-6817}
SlurmdPort=${SLURMD_PORT:-6818}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
# No cgroups: a container may lack them; the tasks' processes are tracked by parentage.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
# The node claims more CPUs than it has: config_overrides keeps slurmd from draining it.
SlurmdParameters=config_overrides
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$(( $(nproc) * ${OVERCOMMIT:-8} )) State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
    export SLURM_CONF="$dir/slurm.conf"
    slurmctld -i
    slurmd -N localhost
    for _ in $(seq 300); do
        [ "$(sinfo --noheader --nodes=localhost --format=%t 2>/dev/null)" = idle ] && return 0
        sleep 0.1
    done
    echo "slurm.sh: the node did not become idle within 30 s" >&2
    false
}

case $command in
    up) up ;;
    down) down ;;
    *) usage ;;
esac
