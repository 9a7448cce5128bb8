#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for tests and for trying the sbatch scripts:
#   scripts/slurm/local-cluster.sh up     installs slurm-wlm + munge if missing, starts munged, slurmctld, slurmd
#   scripts/slurm/local-cluster.sh env    prints the exports a shell needs to talk to it (SLURM_CONF)
#   scripts/slurm/local-cluster.sh down   stops the daemons it started
# Everything lives in $SPADE_SLURM_STATE (default /tmp/spade-slurm); /etc is not touched.
# Configuration that works on Debian's slurm-wlm 22.05 without cgroups or systemd: proctrack/linuxproc,
# task/none, select/cons_tres, cgroup/v1 (this version refuses `disabled`).
set -euo pipefail
state="${SPADE_SLURM_STATE:-/tmp/spade-slurm}"
conf="$state/slurm.conf"

up() {
  if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null
  fi
  mkdir -p "$state"/{spool,ctld,log,munge}
  local host cpus mem
  host="$(hostname -s)"
  cpus="$(nproc)"
  mem="$(awk '/MemTotal/ {print int($2 / 1024 * 0.8)}' /proc/meminfo)"
  cat > "$conf" <<CONF
ClusterName=spade
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$state/munge/munge.socket
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/spool
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/log/slurmctld.log
SlurmdLogFile=$state/log/slurmd.log
SlurmctldPort=16817
SlurmdPort=16818
JobCompType=jobcomp/none
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
  echo "CgroupPlugin=cgroup/v1" > "$state/cgroup.conf"
  # munge: its own key and socket, run as the munge user (it refuses root).
  chown munge:munge "$state/munge"
  chmod 0711 "$state/munge"
  if [[ ! -f "$state/munge/munge.key" ]]; then
    dd if=/dev/urandom of="$state/munge/munge.key" bs=1024 count=1 status=none
    chown munge:munge "$state/munge/munge.key"
    chmod 0400 "$state/munge/munge.key"
  fi
  if [[ ! -S "$state/munge/munge.socket" ]]; then
    runuser -u munge -- munged --key-file="$state/munge/munge.key" --socket="$state/munge/munge.socket" \
      --pid-file="$state/munge/munged.pid" --log-file="$state/munge/munged.log" --seed-file="$state/munge/munged.seed"
  fi
  export SLURM_CONF="$conf"
  [[ -f "$state/slurmctld.pid" ]] && kill -0 "$(cat "$state/slurmctld.pid")" 2>/dev/null || slurmctld -f "$conf"
  [[ -f "$state/slurmd.pid" ]] && kill -0 "$(cat "$state/slurmd.pid")" 2>/dev/null || slurmd -f "$conf"
  for _ in $(seq 1 60); do
    if sinfo -h -o '%T' 2>/dev/null | grep -qE 'idle|mixed|allocated'; then
      echo "slurm up: export SLURM_CONF=$conf" >&2
      return 0
    fi
    scontrol update nodename="$host" state=resume >/dev/null 2>&1 || true
    sleep 1
  done
  echo "error: slurm did not come up; logs in $state/log" >&2
  return 1
}

down() {
  export SLURM_CONF="$conf"
  scancel --user=root >/dev/null 2>&1 || true
  for p in slurmd slurmctld; do
    [[ -f "$state/$p.pid" ]] && kill "$(cat "$state/$p.pid")" 2>/dev/null || true
  done
  [[ -f "$state/munge/munged.pid" ]] && kill "$(cat "$state/munge/munged.pid")" 2>/dev/null || true
  sleep 1
  rm -f "$state"/*.pid
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  env) echo "export SLURM_CONF=$conf" ;;
  *) echo "usage: $0 up|down|env" >&2; exit 2 ;;
esac
