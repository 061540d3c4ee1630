"""Helpers shared by the benchmark scripts under bench/ (load, soak, ocr): logging, /proc
readings (RSS, CPU seconds, child processes), the machine line of a report, a failed install's note, a free
loopback port, percentiles, Prometheus text, and one `docreader serve` started and stopped for a run.

The scripts import it after putting bench/ on sys.path (it is not a package):

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import benchlib

Linux only (it reads /proc).
"""
import http.client
import json
import math
import os
import platform
import signal
import socket
import subprocess
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def brief(s, limit=200):
    s = " ".join(str(s or "").split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


class Failed(Exception):
    pass


# --------------------------------------------------------------------------- /proc


def proc_status_kib(pid, key):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return 0  # a zombie has no VmRSS line


def proc_stat(pid):
    with open(f"/proc/{pid}/stat") as f:
        s = f.read()
    return s[s.rindex(")") + 2:].split()  # v[0] is field 3 (state)


def proc_cpu_s(pid):
    """CPU seconds of pid, plus those of its children it has waited for."""
    try:
        v = proc_stat(pid)
    except OSError:
        return 0.0
    return (int(v[11]) + int(v[12]) + int(v[13]) + int(v[14])) / TICK


def children(pid, scan=True):
    """Live child processes of pid (the worker processes of a server). On kernels without
    CONFIG_PROC_CHILDREN, scan=True finds them through every process's parent; with
    scan=False the answer is then empty."""
    out = set()
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/children") as f:
                    out.update(int(x) for x in f.read().split())
            except OSError:
                pass
    except OSError:
        return []
    if not scan or out or os.path.exists(f"/proc/{pid}/task/{pid}/children"):
        return sorted(out)
    for name in os.listdir("/proc"):  # kernels without CONFIG_PROC_CHILDREN
        if name.isdigit():
            try:
                if int(proc_stat(int(name))[1]) == pid:
                    out.add(int(name))
            except (OSError, ValueError, IndexError):
                pass
    return sorted(out)


def ncpu():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def machine():
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = ""
    try:
        with open("/proc/meminfo") as f:
            mem = f"{int(f.readline().split()[1]) / 1024 / 1024:.1f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    return f"{ncpu()} CPUs, {model or platform.processor()}, {mem}, Linux {platform.release()}"


def cpu_stat():
    """Machine-wide CPU seconds from /proc/stat: (busy, idle, steal)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    v += [0] * (8 - len(v))
    user, nice, system, idle, iowait, irq, softirq, steal = v[:8]
    return ((user + nice + system + irq + softirq) / TICK, (idle + iowait) / TICK, steal / TICK)


def self_cpu(waited=False):
    """CPU seconds of this process, all threads; with waited=True, plus those of the
    children it has waited for."""
    t = os.times()
    if waited:
        return t.user + t.system + t.children_user + t.children_system
    return t.user + t.system


# --------------------------------------------------------------------------- report


def pct(values, p):
    """The p-th percentile (nearest rank) of values."""
    if not values:
        return None
    s = sorted(values)
    return s[max(0, min(len(s) - 1, math.ceil(p / 100 * len(s)) - 1))]


def metric(text, name):
    """The value of an unlabelled sample in Prometheus text, or None."""
    for line in (text or "").splitlines():
        if line.startswith(name + " "):
            try:
                return float(line.split()[1])
            except (ValueError, IndexError):
                return None
    return None


def install_note(what):
    """What run.sh wrote about a failed install of `what` (bench/lib.sh's note), if anything."""
    path = os.environ.get("DOCREADER_BENCH_INSTALL_NOTES")
    if not path or not os.path.exists(path):
        return ""
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith(what + ":"):
                return line.split(":", 1)[1].strip()
    return ""


# --------------------------------------------------------------------------- server


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """One `docreader serve` on a free loopback port with the given data dir and log file.

    probe_timeout: seconds per GET /readyz while waiting for the server (30 s in all);
    brief_limit: the length log_tail() cuts each log line to."""

    cpu_spent = 0.0  # CPU seconds of every server (and its workers) stopped so far

    def __init__(self, binary, data_dir, log_path, workers, probe_timeout=10, brief_limit=200):
        self.binary, self.workers = binary, workers
        self.data_dir, self.log_path = data_dir, log_path
        os.makedirs(self.data_dir, exist_ok=True)
        self.probe_timeout, self.brief_limit = probe_timeout, brief_limit
        self.proc = None
        self.seen_workers = set()
        self.cpu_at_stop = 0.0

    def start(self):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [self.binary, "serve", "--addr", f"127.0.0.1:{self.port}", "--data-dir", self.data_dir,
             "--workers", str(self.workers)],
            stdout=self.log, stderr=self.log, stdin=subprocess.DEVNULL)
        self.pid = self.proc.pid
        self.start_ticks = proc_stat(self.pid)[19]  # field 22: start time since boot
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                why = f"docreader serve exited ({self.proc.returncode}): {self.log_tail()}"
                self.stop()
                raise Failed(why)
            status, js = self.get("/readyz", self.probe_timeout)
            if status == 200:
                self.ready = js
                return self
            time.sleep(0.1)
        why = f"docreader serve did not become ready in 30 s: {self.log_tail()}"
        self.stop()
        raise Failed(why)

    def get(self, path, timeout=10):
        """(status, parsed JSON or text), or (None, None) when the request failed."""
        try:
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
            conn.request("GET", path)
            resp = conn.getresponse()
            body = resp.read()
            conn.close()
        except OSError:
            return None, None
        try:
            return resp.status, json.loads(body)
        except ValueError:
            return resp.status, body.decode(errors="replace")

    def log_tail(self, n=1):
        self.log.flush()
        with open(self.log_path, "rb") as f:
            lines = [x for x in f.read().decode(errors="replace").splitlines() if x.strip()]
        return " | ".join(brief(x, self.brief_limit) for x in lines[-n:])

    def same_process(self):
        """The process we started is still running (not exited, not replaced)."""
        if self.proc.poll() is not None:
            return False
        try:
            return proc_stat(self.pid)[19] == self.start_ticks
        except OSError:
            return False

    def worker_pids(self):
        pids = children(self.pid)
        self.seen_workers.update(pids)
        return pids

    def rss_kib(self):
        """(server VmRSS, workers' VmRSS summed, number of workers), in KiB."""
        server = proc_status_kib(self.pid, "VmRSS") or 0
        pids = self.worker_pids()
        return server, sum(proc_status_kib(p, "VmRSS") or 0 for p in pids), len(pids)

    def cpu_s(self):
        """CPU seconds of the server and its workers (live, and those it has reaped)."""
        return proc_cpu_s(self.pid) + sum(proc_cpu_s(p) for p in self.worker_pids())

    def stop(self):
        if not self.proc:
            return
        if self.proc.poll() is None:
            self.cpu_at_stop = self.cpu_s()
            Server.cpu_spent += self.cpu_at_stop
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        # Workers end when the server's pipe closes; make sure of it (only processes this
        # server started: its children seen during the run, still running our binary).
        time.sleep(0.2)
        for pid in self.seen_workers:
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    cmd = f.read().split(b"\0")
                if cmd and os.path.realpath(cmd[0].decode(errors="replace")) == os.path.realpath(self.binary) \
                        and b"worker" in cmd:
                    os.kill(pid, signal.SIGKILL)
            except (OSError, ValueError):
                pass
        self.log.close()
        self.proc = None
