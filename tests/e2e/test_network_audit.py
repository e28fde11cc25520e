"""Nothing leaves the machine: `pagewise index` and `pagewise ask` run in a network namespace with
only loopback, and strace records every connect()/sendto()/sendmsg() of every process they start
(the app, the llama.cpp worker, anything a library spawns). Any address that is not loopback fails
the test, even though the namespace would have refused it: an attempt is already a leak in waiting
(PyMuPDF 2.0's onnxruntime looked up a telemetry host ~1.5 s after `import pymupdf`; issue 15)."""
from __future__ import annotations

import ipaddress
import json
import os
import re
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from tests.support.cli import app_argv
from tests.support.strict import unavailable

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "resources" / "samples" / "common-paper-mnda.pdf"
TRACED = "connect,sendto,sendmsg"

# strace prints socket addresses as e.g. {sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr("10.0.0.1")}
# and {sa_family=AF_INET6, sin6_port=htons(443), sin6_flowinfo=..., inet_pton(AF_INET6, "2001:db8::1", ...)}
_INET = re.compile(r'sa_family=AF_INET, sin_port=htons\((\d+)\), sin_addr=inet_addr\("([^"]+)"\)')
_INET6 = re.compile(r'sa_family=AF_INET6, sin6_port=htons\((\d+)\).*?inet_pton\(AF_INET6, "([^"]+)"')


def outside_addresses(strace_log: str) -> list[str]:
    """Every IPv4/IPv6 peer in the log that is not loopback, as 'address:port (pid)' lines."""
    found = []
    for line in strace_log.splitlines():
        pid = line.split(" ", 1)[0]
        for port, addr in _INET.findall(line) + _INET6.findall(line):
            ip = ipaddress.ip_address(addr)
            mapped = getattr(ip, "ipv4_mapped", None)
            if not (ip.is_loopback or (mapped is not None and mapped.is_loopback)):
                found.append(f"{addr}:{port} (pid {pid})")
    return found


def loopback_count(strace_log: str) -> int:
    return sum(1 for line in strace_log.splitlines() for _, addr in _INET.findall(line) + _INET6.findall(line)
               if ipaddress.ip_address(addr).is_loopback)


def test_audit_parser_tells_loopback_from_outside():
    log = "\n".join([
        '101 connect(8, {sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr("10.255.255.53")}, 16) = 0',
        '101 connect(9, {sa_family=AF_INET, sin_port=htons(5000), sin_addr=inet_addr("127.0.0.1")}, 16) = 0',
        '102 connect(3, {sa_family=AF_INET6, sin6_port=htons(443), sin6_flowinfo=htonl(0), '
        'inet_pton(AF_INET6, "2001:db8::1", &sin6_addr), sin6_scope_id=0}, 28) = -1 ENETUNREACH',
        '102 connect(3, {sa_family=AF_INET6, sin6_port=htons(80), sin6_flowinfo=htonl(0), '
        'inet_pton(AF_INET6, "::1", &sin6_addr), sin6_scope_id=0}, 28) = 0',
        '103 connect(4, {sa_family=AF_UNIX, sun_path="/var/run/nscd/socket"}, 110) = -1 ENOENT',
    ])
    assert outside_addresses(log) == ["10.255.255.53:53 (pid 101)", "2001:db8::1:443 (pid 102)"]
    assert loopback_count(log) == 2


def _namespace_prefix() -> list[str]:
    """`unshare -n` (root) or `unshare -rn` (a user namespace), whichever this machine allows."""
    for flags in (["-n"], ["-rn"]):
        probe = subprocess.run(["unshare", *flags, "sh", "-c", "ip link set lo up"], capture_output=True, text=True)
        if probe.returncode == 0:
            return ["unshare", *flags]
    pytest.skip(f"cannot make a network namespace here (unshare -n / -rn: {probe.stderr.strip()})")


@pytest.mark.slow
def test_index_and_ask_open_no_outside_connection(tmp_path):
    missing = [tool for tool in ("strace", "unshare", "ip") if shutil.which(tool) is None]
    if missing:
        unavailable(f"needs {', '.join(missing)} (scripts/setup.sh --test)")
    prefix = _namespace_prefix()
    home, trace = tmp_path / "home", tmp_path / "trace"
    # OMP_WAIT_POLICY=PASSIVE: llama.cpp's OpenMP threads sleep instead of spinning on sched_yield,
    # each call of which is a ptrace stop (a traced ask read 1 prompt token/s without it)
    env = {**os.environ, "PAGEWISE_HOME": str(home), "QT_QPA_PLATFORM": "offscreen", "OMP_WAIT_POLICY": "PASSIVE"}
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        env.pop(var, None)

    def traced(name: str, *args: str) -> subprocess.CompletedProcess:
        # lo is down in a new namespace: bring it up, then strace the command and all its children
        # (not --seccomp-bpf: faster, but a child forked before strace attaches gets ENOSYS from exec)
        script = 'ip link set lo up && exec strace -f -qq -e trace=%s -o "$0" "$@"' % TRACED
        proc = subprocess.Popen([*prefix, "sh", "-c", script, str(trace) + f".{name}",
                                 *app_argv(*args)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT, start_new_session=True)
        try:
            out, err = proc.communicate(timeout=900)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)     # strace, the app and its worker with it
            proc.communicate()
            raise
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)

    index = traced("index", "index", str(SAMPLE), "--json")
    assert index.returncode == 0, index.stderr[-2000:]
    ask = traced("ask", "ask", str(SAMPLE), "-q", "Who are the parties?", "--mode", "retrieval", "--json")
    assert ask.returncode == 0, ask.stderr[-2000:]
    answer = json.loads(ask.stdout)
    assert answer["answer"] and answer["citations"], answer

    logs = {p.name: p.read_text(errors="replace") for p in sorted(tmp_path.glob("trace.*"))}
    assert set(logs) == {"trace.index", "trace.ask"}
    # the audit sees the worker: the app talks to it over loopback, so a blind trace would fail here
    assert loopback_count(logs["trace.ask"]) > 0, "strace saw no loopback traffic: the audit is not tracing"
    leaks = {name: outside_addresses(text) for name, text in logs.items()}
    assert not any(leaks.values()), f"non-loopback connections: {leaks}"
