#!/usr/bin/env bash
# Runs a command against a private single-node Slurm cluster on this machine, then stops the cluster.
#
# Usage: tests/cli/slurm_cluster.sh COMMAND [ARGS...]
# Starts munged (own key and socket in a temp folder), slurmctld and slurmd (free ports, NodeAddr=127.0.0.1,
# generated slurm.conf, no systemd, no accounting), waits until `sinfo` shows the node idle, runs COMMAND with
# SLURM_CONF pointing at the cluster, and always stops the daemons (trap). Exits with COMMAND's status.
# Exit 77 (skip) when the Slurm or munge programs are missing, unless KILN_REQUIRE_SLURM=1 (then 1).
# Needs root (slurmd launches tasks as their user; SlurmUser=root). Never contacts any host but localhost.
set -euo pipefail

missing=()
for program in munged slurmctld slurmd sbatch squeue scancel sinfo; do
  command -v "${program}" >/dev/null 2>&1 || PATH="${PATH}:/usr/sbin:/sbin" command -v "${program}" >/dev/null 2>&1 ||
    missing+=("${program}")
done
if [[ ${#missing[@]} -gt 0 ]]; then
  echo "slurm_cluster.sh: missing ${missing[*]} (Debian packages slurm-wlm and munge)" >&2
  [[ "${KILN_REQUIRE_SLURM:-}" == "1" ]] && { echo "FAIL: KILN_REQUIRE_SLURM=1" >&2; exit 1; }
  echo "SKIP: no Slurm on this machine" >&2
  exit 77
fi
if [[ "$(id -u)" -ne 0 ]]; then
  echo "slurm_cluster.sh: a private cluster needs root (SlurmUser=root)" >&2
  [[ "${KILN_REQUIRE_SLURM:-}" == "1" ]] && exit 1
  echo "SKIP: not root" >&2
  exit 77
fi
export PATH="${PATH}:/usr/sbin:/sbin"

dir="$(mktemp -d /tmp/kiln-slurm.XXXXXX)"
chmod 0755 "${dir}"
pids=()
# Processes this cluster started (slurmstepd, the tasks): their environment names our slurm.conf.
cluster_processes() {
  local environ
  for environ in /proc/[0-9]*/environ; do
    grep -qsF "SLURM_CONF=${dir}/slurm.conf" "${environ}" 2>/dev/null || continue
    environ="${environ#/proc/}"
    [[ "${environ%%/*}" != "$$" ]] && echo "${environ%%/*}"
  done
}
stop_cluster() {
  local pid
  # Jobs still queued or running are cancelled first, so slurmd ends their steps before it stops.
  if [[ -n "${SLURM_CONF:-}" ]]; then
    scancel --quiet $(squeue -h -o '%A' 2>/dev/null) 2>/dev/null || true
    for _ in $(seq 50); do [[ -z "$(squeue -h -o '%A' 2>/dev/null)" ]] && break; sleep 0.2; done
  fi
  for pid in "${pids[@]}"; do kill "${pid}" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "${pid}" 2>/dev/null || break; sleep 0.1; done
    kill -9 "${pid}" 2>/dev/null || true
  done
  for pid in $(cluster_processes); do kill -9 "${pid}" 2>/dev/null || true; done
  if [[ -f "${dir}/munge/munged.pid" ]]; then kill "$(cat "${dir}/munge/munged.pid")" 2>/dev/null || true; fi
  [[ -n "${KILN_SLURM_KEEP:-}" ]] || rm -rf "${dir}"
}
trap stop_cluster EXIT

# A TCP port nobody listens on now (the kernel picks it).
free_port() {
  /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# munged refuses keys and folders others can read or write.
mkdir -m 0700 "${dir}/munge"
head -c 1024 /dev/urandom >"${dir}/munge/munge.key"
chmod 0400 "${dir}/munge/munge.key"
socket="${dir}/munge/munge.socket"
munged --force --key-file="${dir}/munge/munge.key" --socket="${socket}" --pid-file="${dir}/munge/munged.pid" \
  --log-file="${dir}/munge/munged.log" --seed-file="${dir}/munge/munged.seed"

host="$(hostname -s)"
cpus="$(nproc)"
memory_mb="$(awk '/MemTotal/ {print int($2 / 1024 * 0.9)}' /proc/meminfo)"
mkdir -p "${dir}/state" "${dir}/spool"
cat >"${dir}/slurm.conf" <<EOF
ClusterName=kiln-test
SlurmctldHost=${host}(127.0.0.1)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=${socket}
CredType=cred/munge
StateSaveLocation=${dir}/state
SlurmdSpoolDir=${dir}/spool
SlurmctldPidFile=${dir}/slurmctld.pid
SlurmdPidFile=${dir}/slurmd.pid
SlurmctldLogFile=${dir}/slurmctld.log
SlurmdLogFile=${dir}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1
MinJobAge=2
KillWait=2
MessageTimeout=5
NodeName=${host} NodeAddr=127.0.0.1 CPUs=${cpus} RealMemory=${memory_mb} State=UNKNOWN
PartitionName=debug Nodes=${host} Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="${dir}/slurm.conf"
slurmctld -D -f "${SLURM_CONF}" >"${dir}/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "${SLURM_CONF}" >"${dir}/slurmd.out" 2>&1 &
pids+=($!)

for i in $(seq 300); do
  state="$(sinfo -h -N -o '%t' 2>/dev/null | head -n 1 || true)"
  [[ "${state}" == "idle" ]] && break
  if [[ $i -eq 300 ]]; then
    echo "slurm_cluster.sh: the node never became idle (state '${state}'); logs:" >&2
    tail -n 20 "${dir}"/*.log "${dir}"/*.out >&2 || true
    exit 1
  fi
  sleep 0.1
done
echo "slurm_cluster.sh: cluster up in ${dir} (SLURM_CONF=${SLURM_CONF})" >&2

status=0
"$@" || status=$?
if [[ ${status} -ne 0 && ${status} -ne 77 ]]; then
  echo "slurm_cluster.sh: command failed (${status}); slurmctld log tail:" >&2
  tail -n 15 "${dir}/slurmctld.log" >&2 || true
fi
exit "${status}"
