"""The constant shell scripts the SSH executor runs on a load host (runs/loadhosts/remote.py),
and the one way to run them with arguments. Each argument is quoted by shlex.quote on the
worker: no shell there ever parses user text."""

from __future__ import annotations

import shlex

# The only command that starts sysbench on a load host. Its arguments are sysbench's argv,
# each element quoted by shlex.quote on the worker: this shell never parses user text.
RUN_WRAPPER = r"""
set -u
umask 077
export LC_ALL=C
command -v "$1" >/dev/null 2>&1 || { echo benchdash-missing; exit 127; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/benchdash.XXXXXXXXXX") || exit 125
writer=
trap '[ -n "$writer" ] && kill "$writer" 2>/dev/null; rm -rf "$dir"' EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 141' PIPE
trap 'exit 143' TERM
echo "benchdash-dir $dir"
# The worker uploads the config file (and a Lua script) over SFTP, then says go; if it
# goes away instead, stdin ends and the directory is removed.
read -r go || exit 125
[ "$go" = go ] || exit 125
# Each sysbench thread holds a connection, that is a file descriptor.
ulimit -S -n "$(ulimit -H -n)" 2>/dev/null
cd "$dir" || exit 125
# sysbench 1.0 reads its config file once, before it loads its script: the password goes
# to it through a FIFO, so no file holds it once sysbench has started, even should this
# wrapper be killed. The FIFO goes as soon as sysbench has read it.
cfg=$(cat ./sysbench.cfg) && rm -f ./sysbench.cfg && mkfifo -m 600 ./sysbench.cfg || exit 125
(printf '%s\n' "$cfg" >./sysbench.cfg; rm -f ./sysbench.cfg) >/dev/null 2>&1 &
writer=$!
unset cfg
# sysbench flushes its reports, but a Lua script's print() would wait for a full buffer.
command -v stdbuf >/dev/null 2>&1 && set -- stdbuf -oL "$@"
# A session of its own: the group is killed as one, by its id, even over a new connection
# after this one is gone. Its id comes first on stdout, before sysbench prints anything.
setsid sh -c 'echo $$ >pgid; echo "benchdash-pgid $$"; exec "$@"' sysbench "$@" </dev/null &
pid=$!
# The wrapper itself writes nothing more: once the connection is gone, a write (the shell
# reporting a killed job) would end it by SIGPIPE, before it removed the directory.
exec >/dev/null 2>&1
wait "$pid"
code=$?
exit $code
"""

# Stops the process group $1, only if its leader is still sysbench: a recycled process id
# never takes an innocent process down. Exit 3: there is no such sysbench.
KILL_SCRIPT = r"""
pgid=$1
alive() {
  [ "$(cat "/proc/$pgid/comm" 2>/dev/null)" = sysbench ] &&
    ! grep -q ') Z' "/proc/$pgid/stat" 2>/dev/null
}
alive || exit 3
for sig in TERM KILL; do
  kill -s "$sig" -- "-$pgid" 2>/dev/null || exit 0
  i=0
  while [ "$i" -lt 20 ]; do alive || exit 0; sleep 0.1; i=$((i + 1)); done
done
exit 0
"""

# What a load host is, one name=value per line; /sys/block rather than lsblk, which
# minimal systems lack.
FACTS_SCRIPT = r"""
export LC_ALL=C
fact() { printf '%s=%s\n' "$1" "$2"; }
fact hostname "$(uname -n)"
fact os "$( (. /etc/os-release && echo "$PRETTY_NAME") 2>/dev/null)"
fact kernel "$(uname -sr)"
fact machine "$(uname -m)"
fact cpu_model "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
fact cpu_cores "$(getconf _NPROCESSORS_ONLN 2>/dev/null)"
fact memory_kb "$(sed -n 's/^MemTotal:[[:space:]]*\([0-9]*\) kB$/\1/p' /proc/meminfo)"
fact nofile_soft "$(ulimit -S -n)"
fact nofile_hard "$(ulimit -H -n)"
fact loadavg "$(cut -d ' ' -f 1-3 /proc/loadavg)"
fact sysbench "$(sysbench --version 2>/dev/null)"
# sysbench works in its private directory there: fileio's files would go there too.
fact work_free_kb "$(df -Pk "${TMPDIR:-/tmp}" 2>/dev/null | awk 'NR == 2 {print $4}')"
for d in /sys/block/*; do
  n=${d##*/}
  case $n in loop*|ram*|zram*|dm-*|md*|sr*|nbd*|fd*) continue ;; esac
  fact disk "$n $(cat "$d/size" 2>/dev/null) $(cat "$d/queue/rotational" 2>/dev/null)"
done
"""


# At each contact for sysbench: the private directories of this user's earlier runs whose
# sysbench is gone, left by a wrapper killed with its connection (SIGKILL cannot be
# trapped). A directory without a pgid file yet is being staged, unless it is an hour old.
SWEEP_DIRS_SCRIPT = r"""
for dir in "${TMPDIR:-/tmp}"/benchdash.??????????; do
  [ -d "$dir" ] && [ -O "$dir" ] || continue
  if [ -f "$dir/pgid" ]; then
    # Still starting (sh, stdbuf) or running: its wrapper removes it when it ends.
    pgid=$(cat "$dir/pgid" 2>/dev/null)
    [ -n "$pgid" ] && [ -e "/proc/$pgid" ] &&
      ! grep -q ') Z' "/proc/$pgid/stat" 2>/dev/null && continue
  elif [ -z "$(find "$dir" -maxdepth 0 -mmin +60 2>/dev/null)" ]; then
    continue
  fi
  rm -rf -- "$dir" && echo "$dir"
done
exit 0
"""


# Removes the private directory $1 of a sysbench whose worker died (the wrapper removes it
# itself when sysbench ends, unless the wrapper was killed too). Only a directory the
# wrapper makes: benchdash.XXXXXXXXXX in the temporary directory. Exit 3: none there.
REMOVE_DIR_SCRIPT = r"""
dir=$1
case ${dir##*/} in benchdash.??????????) ;; *) exit 2 ;; esac
[ "${dir%/*}" = "${TMPDIR:-/tmp}" ] || exit 2
[ -d "$dir" ] || exit 3
rm -rf -- "$dir"
"""


def remote_command(script: str, *args: str) -> str:
    """A shell command running a constant script with arguments, each one quoted."""
    return " ".join(["sh", "-c", shlex.quote(script), "benchdash", *map(shlex.quote, args)])
