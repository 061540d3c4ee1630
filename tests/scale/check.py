#!/usr/bin/env python3
"""Many replicas (issue #22): docreader replicas sharing a real Postgres and a real S3 server
(SeaweedFS), behind nginx round robin. Started by tests/scale/run.sh, which finds the tools.

Standard library only. Each check prints one line; the first failure raises and the run
exits non-zero, with the logs of what it started. Everything runs on loopback ports in one
temp dir, removed afterwards (kept after a failure, or with SCALE_KEEP=1).
"""

import argparse
import hashlib
import hmac
import http.client
import http.server
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import uuid

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
KEYS = {"a": "scale-key-tenant-a-0123456789", "b": "scale-key-tenant-b-0123456789"}
BUCKET = "docreader"
S3_KEY, S3_SECRET = "scaletest", "scaletest-secret-0123456789"
PG_PASSWORD = "scale-secret"


def say(what):
    print(f"scale: {what}", flush=True)


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def port_pair_free(p):
    """A port, and the one 10000 above it (SeaweedFS's gRPC ports), both free."""
    for q in (p, p + 10000):
        s = socket.socket()
        try:
            s.bind(("127.0.0.1", q))
        except OSError:
            return False
        finally:
            s.close()
    return True


TAKEN = set()


def free_port():
    while True:
        p = random.randint(20000, 45000)
        if p not in TAKEN and p + 10000 not in TAKEN and port_pair_free(p):
            TAKEN.update((p, p + 10000))
            return p


class Answer:
    def __init__(self, status, headers, body):
        self.status, self.headers, self.body = status, headers, body

    def json(self):
        return json.loads(self.body)

    def code(self):
        try:
            return self.json()["error"]["code"]
        except Exception:
            return None


def request(port, method, path, body=None, headers=None, tenant="a", timeout=120):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    h = dict(headers or {})
    if tenant:
        h["Authorization"] = f"Bearer {KEYS[tenant]}"
    if isinstance(body, (dict, list)):
        body = json.dumps(body).encode()
        h.setdefault("Content-Type", "application/json")
    try:
        conn.request(method, path, body=body, headers=h)
        r = conn.getresponse()
        data = r.read()
        return Answer(r.status, {k.lower(): v for k, v in r.getheaders()}, data)
    finally:
        conn.close()


def multipart(name, data):
    boundary = uuid.uuid4().hex
    head = (
        f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n"
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode()
    return head + data + f"\r\n--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


def upload(port, name, data, tenant="a"):
    body, ctype = multipart(name, data)
    return request(port, "POST", "/upload", body=body, headers={"Content-Type": ctype}, tenant=tenant)


def upload_ok(port, name, data, tenant="a"):
    r = upload(port, name, data, tenant)
    expect(r.status == 200, f"upload {name} on :{port}: {r.status} {r.body[:300]!r}")
    return r.json()["files"][0]


def read(port, file_id, tenant="a", **opts):
    return request(port, "POST", "/read", body={"file_id": file_id, **opts}, tenant=tenant)


def fixture(rel):
    with open(os.path.join(ROOT, "fixtures", rel), "rb") as f:
        return f.read()


def wait_for(what, fn, seconds):
    end = time.time() + seconds
    last = None
    while time.time() < end:
        try:
            last = fn()
            if last:
                return last
        except (OSError, http.client.HTTPException) as e:
            last = e
        time.sleep(0.2)
    raise AssertionError(f"{what}: not within {seconds} s (last: {last!r})")


def as_postgres(cmd):
    """Postgres refuses to run as root: as root, run its tools as the `postgres` user."""
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


class Postgres:
    def __init__(self, work, bindir):
        self.dir = os.path.join(work, "pg")
        self.bindir = bindir
        self.port = free_port()
        os.makedirs(self.dir)
        pw = os.path.join(work, "pgpass")
        with open(pw, "w") as f:
            f.write(PG_PASSWORD + "\n")
        if os.geteuid() == 0:
            shutil.chown(self.dir, "postgres", "postgres")
            shutil.chown(pw, "postgres", "postgres")
        subprocess.run(as_postgres([f"{bindir}/initdb", "-D", self.dir, "-U", "docreader",
                                    f"--pwfile={pw}", "--auth-host=scram-sha-256",
                                    "--auth-local=trust", "-E", "UTF8", "--locale=C"]),
                       check=True, stdout=subprocess.DEVNULL)
        # TLS as managed Postgres serves it (issue #45 item 12): a CA of its own, a server
        # certificate for localhost signed by it, and TCP clients refused without TLS.
        self.ca = os.path.join(work, "pg-ca.pem")
        other_ca = os.path.join(work, "pg-other-ca.pem")
        ssl = lambda *a: subprocess.run(["openssl", *a], check=True, capture_output=True)
        ssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=docreader test CA",
            "-keyout", os.path.join(work, "pg-ca.key"), "-out", self.ca)
        ssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=another CA",
            "-keyout", os.path.join(work, "pg-other-ca.key"), "-out", other_ca)
        self.other_ca = other_ca
        key, csr, crt = (os.path.join(self.dir, n) for n in ("server.key", "server.csr", "server.crt"))
        ssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-keyout", key, "-out", csr)
        ext = os.path.join(work, "pg-ext.cnf")
        with open(ext, "w") as f:
            f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
        ssl("x509", "-req", "-in", csr, "-CA", self.ca, "-CAkey", os.path.join(work, "pg-ca.key"),
            "-CAcreateserial", "-days", "2", "-extfile", ext, "-out", crt)
        os.chmod(key, 0o600)
        with open(os.path.join(self.dir, "pg_hba.conf"), "w") as f:
            f.write("local all all trust\n"
                    "hostssl all all 127.0.0.1/32 scram-sha-256\n"
                    "hostnossl all all 0.0.0.0/0 reject\n")
        if os.geteuid() == 0:
            for n in (key, crt, csr, os.path.join(self.dir, "pg_hba.conf")):
                shutil.chown(n, "postgres", "postgres")
        self.url = f"postgres://docreader:{PG_PASSWORD}@localhost:{self.port}/postgres?sslmode=require"

    def start(self):
        opts = (f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c max_connections=200 "
                "-c ssl=on -c ssl_cert_file=server.crt -c ssl_key_file=server.key")
        subprocess.run(as_postgres([f"{self.bindir}/pg_ctl", "-D", self.dir, "-l",
                                    os.path.join(self.dir, "log"), "-o", opts, "-w", "start"]),
                       check=True, stdout=subprocess.DEVNULL)

    def stop(self):
        subprocess.run(as_postgres([f"{self.bindir}/pg_ctl", "-D", self.dir, "-m", "fast",
                                    "-w", "stop"]), stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)


class Seaweed:
    """SeaweedFS's real `weed server` with its S3 gateway, credentials required."""

    def __init__(self, work, weed):
        self.weed = weed
        self.dir = os.path.join(work, "weed")
        os.makedirs(self.dir)
        self.master, self.volume, self.filer, self.s3 = (free_port() for _ in range(4))
        self.config = os.path.join(work, "s3.json")
        with open(self.config, "w") as f:
            json.dump({"identities": [{
                "name": "docreader",
                "credentials": [{"accessKey": S3_KEY, "secretKey": S3_SECRET}],
                "actions": ["Admin", "Read", "Write", "List", "Tagging"]}]}, f)
        self.log = open(os.path.join(work, "weed.log"), "wb")
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen([
            self.weed, "server", f"-dir={self.dir}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
            f"-master.port={self.master}", f"-volume.port={self.volume}",
            f"-filer.port={self.filer}", "-s3", f"-s3.port={self.s3}",
            f"-s3.config={self.config}", "-master.volumeSizeLimitMB=64",
        ], stdout=self.log, stderr=subprocess.STDOUT)

        def s3_answers():
            c = http.client.HTTPConnection("127.0.0.1", self.s3, timeout=2)
            c.request("GET", "/")
            return c.getresponse().status in (200, 403)
        wait_for("SeaweedFS's S3 port", s3_answers, 60)
        # The bucket, as an operator makes it (the filer's folder for it).
        def bucket():
            c = http.client.HTTPConnection("127.0.0.1", self.filer, timeout=5)
            c.request("POST", f"/buckets/{BUCKET}/")
            return c.getresponse().status in (200, 201)
        wait_for("the bucket", bucket, 30)

    def stop(self):
        if self.proc:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    def objects(self, prefix, sha):
        """The bucket's objects for these bytes, listed through the filer."""
        c = http.client.HTTPConnection("127.0.0.1", self.filer, timeout=10)
        c.request("GET", f"/buckets/{BUCKET}/{prefix}/blobs/{sha[:2]}/?limit=1000",
                  headers={"Accept": "application/json"})
        r = c.getresponse()
        body = r.read()
        if r.status == 404:
            return []
        entries = json.loads(body).get("Entries") or []
        return [e["FullPath"] for e in entries if e["FullPath"].endswith(sha)]


class Replica:
    def __init__(self, n, work, binary, env):
        self.n, self.binary, self.env = n, binary, env
        self.port = free_port()
        self.dir = os.path.join(work, f"replica{n}")
        self.logpath = os.path.join(work, f"replica{n}.log")
        self.proc = None

    def start(self, wait=True):
        log = open(self.logpath, "ab")
        self.proc = subprocess.Popen([self.binary, "serve", "--addr", f"127.0.0.1:{self.port}",
                                      "--data-dir", self.dir], env=self.env, stdout=log,
                                     stderr=subprocess.STDOUT)
        if wait:
            self.wait_ready()

    def wait_ready(self):
        def ready():
            expect(self.proc.poll() is None, f"replica {self.n} exited: {self.tail()}")
            return request(self.port, "GET", "/readyz", tenant=None, timeout=5).status == 200
        wait_for(f"replica {self.n} ready", ready, 60)

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    def tail(self, n=15):
        with open(self.logpath, "rb") as f:
            return b"\n".join(f.read().splitlines()[-n:]).decode(errors="replace")


class Nginx:
    def __init__(self, work, ports):
        self.prefix = os.path.join(work, "gateway")
        os.makedirs(os.path.join(self.prefix, "logs"))
        self.port = free_port()
        with open(os.path.join(ROOT, "docker", "nginx-replicas.conf")) as f:
            conf = f.read()
        for i, p in enumerate(ports, start=1):
            marker = f"server 127.0.0.1:{8080 + i} "
            expect(marker in conf, f"docker/nginx-replicas.conf lost its replica {i} line")
            conf = conf.replace(marker, f"server 127.0.0.1:{p} ")
        expect("listen 127.0.0.1:8000;" in conf, "docker/nginx-replicas.conf lost its listen line")
        conf = conf.replace("listen 127.0.0.1:8000;", f"listen 127.0.0.1:{self.port};")
        self.conf = os.path.join(work, "nginx.conf")
        with open(self.conf, "w") as f:
            f.write(conf)

    def start(self):
        subprocess.run(["nginx", "-p", self.prefix, "-c", self.conf, "-e",
                        os.path.join(self.prefix, "logs", "error.log")], check=True)

    def stop(self):
        subprocess.run(["nginx", "-p", self.prefix, "-c", self.conf, "-s", "stop"],
                       stderr=subprocess.DEVNULL)


# --- the checks --------------------------------------------------------------------------


def check_bad_operator_input(binary, work, pg, weed, base_env):
    """An unreachable database or bucket at start: the replica exits with one line naming it."""
    def start_fails(env, expected):
        d = tempfile.mkdtemp(dir=work)
        p = subprocess.run([binary, "serve", "--addr", f"127.0.0.1:{free_port()}", "--data-dir", d],
                           env=env, capture_output=True, timeout=60)
        out = p.stderr.decode(errors="replace").strip().splitlines()
        expect(p.returncode != 0, f"started with {expected!r} missing")
        last = out[-1] if out else ""
        expect(expected in last, f"start error does not name it: {out[-3:]}")
        expect(PG_PASSWORD not in p.stderr.decode(errors="replace"), "the password was printed")
        return last

    closed = free_port()
    env = dict(base_env, DOCREADER_DATABASE_URL=f"postgres://docreader:{PG_PASSWORD}@127.0.0.1:{closed}/postgres")
    line1 = start_fails(env, f"127.0.0.1:{closed}")
    env = dict(base_env, DOCREADER_BLOB_STORE="s3://no-such-bucket/x")
    line2 = start_fails(env, "no-such-bucket")
    env = dict(base_env, AWS_SECRET_ACCESS_KEY="wrong-secret")
    line3 = start_fails(env, "cannot reach the blob store")
    say(f"bad operator input fails at start in one line: «{line1[:90]}…», «{line2[:90]}», "
        f"wrong S3 secret: «{line3[:70]}…»")


def check_postgres_tls(binary, work, pg, base_env):
    """Managed Postgres (issue #45 item 12): the server takes TLS connections only; a replica
    with `sslmode=verify-full` and the server's CA (`sslrootcert`) starts and reads; with
    another CA it refuses to start in one line; `sslmode=disable` is refused by the server."""
    base = pg.url.split("?")[0]

    def run(query):
        d = tempfile.mkdtemp(dir=work)
        port = free_port()
        env = dict(base_env, DOCREADER_DATABASE_URL=f"{base}?{query}")
        p = subprocess.Popen([binary, "serve", "--addr", f"127.0.0.1:{port}", "--data-dir", d],
                             env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        return p, port

    p, port = run(f"sslmode=verify-full&sslrootcert={pg.ca}")
    try:
        wait_for("a verify-full replica ready", lambda: p.poll() is None and
                 request(port, "GET", "/readyz", tenant=None, timeout=5).status == 200, 60)
        rec = upload_ok(port, "three.pdf", fixture("pdf/three_pages.pdf"))
        r = read(port, rec["file_id"])
        expect(r.status == 200, f"read over verify-full: {r.status}")
    finally:
        p.terminate()
        p.wait(30)
    lines = []
    for query in (f"sslmode=verify-full&sslrootcert={pg.other_ca}", "sslmode=disable"):
        p, _ = run(query)
        try:
            _, err = p.communicate(timeout=90)
        except subprocess.TimeoutExpired:
            p.kill()
            raise
        out = err.decode(errors="replace").strip().splitlines()
        expect(p.returncode != 0, f"a replica started with {query}")
        expect(PG_PASSWORD not in err.decode(errors="replace"), "the password was printed")
        lines.append(out[-1] if out else "")
    say("Postgres over TLS: verify-full with sslrootcert reads; another CA refused at start "
        f"(«{lines[0][:100]}»); sslmode=disable refused by the server («{lines[1][:80]}»)")


def check_cross_replica(r1, r2, r3):
    pdf = fixture("pdf/three_pages.pdf")
    rec = upload_ok(r1.port, "three.pdf", pdf)
    texts = []
    for r in (r1, r2, r3):
        a = read(r.port, rec["file_id"])
        expect(a.status == 200, f"read on replica {r.n}: {a.status} {a.body[:300]!r}")
        texts.append(a.json()["text"])
    expect(texts[0] == texts[1] == texts[2] and len(texts[0]) > 20, "replicas read different text")
    b = read(r2.port, rec["file_id"], tenant="b")
    expect(b.status == 404 and b.code() == "not_found", f"tenant b read a's file: {b.status}")
    listed = request(r3.port, "GET", "/files").json()["files"]
    expect(any(f["file_id"] == rec["file_id"] for f in listed), "the upload is not listed on replica 3")
    say(f"upload on replica 1, read on 2 and 3: the same {len(texts[0])} characters; another "
        "tenant gets not_found on another replica; listed everywhere")
    return rec


def check_dedup_and_delete(r1, r2, r3, weed, prefix):
    data = f"dedup across replicas {uuid.uuid4()}\n".encode() * 50
    a = upload_ok(r1.port, "same.txt", data)
    b = upload_ok(r2.port, "same.txt", data)
    expect(a["sha256"] == b["sha256"] and a["file_id"] != b["file_id"], "dedup ids")
    sha = a["sha256"]
    expect(len(weed.objects(prefix, sha)) == 1, f"bucket holds {weed.objects(prefix, sha)}")
    d = request(r3.port, "DELETE", f"/files/{a['file_id']}")
    expect(d.status in (200, 204), f"delete: {d.status} {d.body!r}")
    expect(len(weed.objects(prefix, sha)) == 1, "bytes removed while another upload holds them")
    got = read(r3.port, b["file_id"])
    expect(got.status == 200 and "dedup across replicas" in got.json()["text"],
           f"the other upload on replica 3 (from the bucket): {got.status}")
    d = request(r1.port, "DELETE", f"/files/{b['file_id']}")
    expect(d.status in (200, 204), f"delete: {d.status}")
    expect(weed.objects(prefix, sha) == [], "the bytes stayed in the bucket after the last delete")
    gone = read(r2.port, b["file_id"])
    expect(gone.status == 404, f"deleted file read: {gone.status}")
    say("the same bytes uploaded on two replicas: one object in the bucket; kept while an "
        "upload refers to it, removed with the last")


def check_delete_upload_race(r1, r2, r3, weed, prefix, rounds=25):
    """A delete of the last upload of some bytes on one replica, racing an upload of the same
    bytes on another: the new upload stays readable from a replica that must fetch it."""
    lost = []
    for i in range(rounds):
        data = f"race {i} {uuid.uuid4()}\n".encode() * 20
        first = upload_ok(r1.port, "race.txt", data)
        out = {}

        def delete():
            out["delete"] = request(r2.port, "DELETE", f"/files/{first['file_id']}")

        def again():
            out["upload"] = upload(r3.port, "race.txt", data)
        ts = [threading.Thread(target=delete), threading.Thread(target=again)]
        random.shuffle(ts)
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        expect(out["delete"].status in (200, 204), f"delete: {out['delete'].status}")
        expect(out["upload"].status == 200, f"upload: {out['upload'].status} {out['upload'].body!r}")
        second = out["upload"].json()["files"][0]
        # Replica 2 never held these bytes: it reads them from the bucket.
        got = read(r2.port, second["file_id"])
        if got.status != 200 or len(weed.objects(prefix, second["sha256"])) != 1:
            lost.append((i, got.status, got.body[:200]))
        request(r3.port, "DELETE", f"/files/{second['file_id']}")
    expect(not lost, f"uploads lost to a racing delete: {lost}")
    say(f"{rounds} rounds of a delete racing an upload of the same bytes on another replica: "
        "every new upload readable from a third replica, its bytes in the bucket")


def check_search_and_memory(r1, r2):
    rec = upload_ok(r1.port, "headings.pdf", fixture("pdf/headings.pdf"))
    text = read(r1.port, rec["file_id"]).json()["text"]
    word = max((w for w in text.split() if w.isalpha()), key=len)

    def found():
        r = request(r2.port, "POST", "/search", body={"query": word})
        expect(r.status == 200, f"search: {r.status} {r.body[:300]!r}")
        return any(h["file_id"] == rec["file_id"] for h in r.json()["hits"])
    wait_for(f"search for {word!r} on replica 2", found, 15)
    # How much of the file the index holds (Postgres's coverage table): one read, whole.
    hit = next(h for h in request(r2.port, "POST", "/search", body={"query": word}).json()["hits"]
               if h["file_id"] == rec["file_id"])
    pages = read(r1.port, rec["file_id"]).json().get("total_pages")
    expect(hit["coverage"] == {"indexed_units": hit["coverage"]["indexed_units"], "total_units": pages,
                               "whole": True} and hit["coverage"]["indexed_units"] >= 1,
           f"a hit's coverage on Postgres: {hit}")
    other = request(r2.port, "POST", "/search", body={"query": word}, tenant="b").json()["hits"]
    expect(not any(h["file_id"] == rec["file_id"] for h in other), "tenant b found a's file")
    img = upload_ok(r1.port, "scan.pdf", fixture("pdf/scan_page.pdf"))
    first = read(r1.port, img["file_id"])
    expect(first.status == 200, f"OCR read: {first.status} {first.body[:300]!r}")
    again = read(r2.port, img["file_id"])
    env = again.json()
    expect(env["text"] == first.json()["text"], "OCR text differs between replicas")
    expect((env.get("ocr_pages_from_memory") or 0) >= 1,
           f"replica 2 recognised again what replica 1 remembered: {again.body[:400]!r}")
    say(f"a read on replica 1 is found by search on replica 2 ({word!r}, Postgres full text; "
        "not by another tenant); OCR done on replica 1 comes from document memory on replica 2")


def sse(port, path, last=None):
    """The events of a stream, read to its end: [(id, event, data)]."""
    h = {"Accept": "text/event-stream"}
    if last:
        h["Last-Event-ID"] = last
    a = request(port, "GET", path, headers=h, timeout=300)
    expect(a.status == 200, f"{path}: {a.status} {a.body[:200]!r}")
    out = []
    for block in a.body.decode().split("\n\n"):
        f = {}
        for line in block.splitlines():
            k, _, v = line.partition(": ")
            f[k] = f.get(k, "") + v
        if "event" in f:
            out.append((f.get("id"), f["event"], f.get("data", "")))
    return out


def check_jobs_across_replicas(r1, r2, r3):
    fid = upload_ok(r1.port, "thirty.pdf", fixture("pdf/thirty_pages.pdf"))["file_id"]
    a = read(r1.port, fid, **{"async": True, "ocr": "force", "pages": "3-6"})
    expect(a.status == 202, f"async read: {a.status} {a.body[:200]!r}")
    jid = a.json()["job_id"]
    evs = sse(r2.port, f"/jobs/{jid}/events")
    expect(evs and evs[-1][1] == "envelope", f"events on replica 2 end with {evs[-1:]}")
    progress = [e for e in evs if e[1] == "progress"]
    expect(progress, "no progress events")
    env = json.loads(evs[-1][2])
    got = request(r3.port, "GET", f"/jobs/{jid}").json()
    expect(got["state"] == "done" and got["envelope"]["text"] == env["text"], f"job on replica 3: {got['state']}")
    rest = sse(r3.port, f"/jobs/{jid}/events", last=progress[0][0])
    expect(len(rest) == len(evs) - 1 and rest[-1][1] == "envelope", "resume from Last-Event-ID on replica 3")
    other = request(r2.port, "GET", f"/jobs/{jid}", tenant="b")
    expect(other.status == 404, f"tenant b sees a's job: {other.status}")
    # Cancelled from another replica than the one that queued it (and the one running it).
    long = read(r3.port, fid, **{"async": True, "ocr": "force", "pages": "1-30"}).json()["job_id"]
    wait_for("the long job to run", lambda: request(r1.port, "GET", f"/jobs/{long}").json()["state"] == "running", 30)
    c = request(r2.port, "DELETE", f"/jobs/{long}")
    expect(c.status == 200 and c.json()["state"] == "cancelled", f"cancel: {c.status} {c.body[:200]!r}")
    time.sleep(4)  # a heartbeat later the runner has stopped; the job stays cancelled
    expect(request(r1.port, "GET", f"/jobs/{long}").json()["state"] == "cancelled", "a cancelled job came back")
    say(f"a job queued on replica 1: {len(progress)} progress events and its envelope streamed "
        "from replica 2, done on replica 3, resumed there from Last-Event-ID; not another "
        "tenant's; a running job cancelled from another replica stays cancelled")


def job_log(replicas):
    """From the replicas' JSON logs: job → fences it was started under (with the replica),
    and job → how many times its end was recorded."""
    started, ended = {}, {}
    for r in replicas:
        with open(r.logpath, "rb") as f:
            for line in f:
                try:
                    ev = json.loads(line)
                except ValueError:
                    continue
                job = ev.get("job")
                if ev.get("message") == "job ended":
                    ended[job] = ended.get(job, 0) + 1
                elif ev.get("message") == "job started":
                    started.setdefault(job, []).append((ev.get("fence"), r.n))
    # In the order the job was started (its fence grows with every claim), not in the
    # order of the replicas whose logs were read: a job first run on replica 3 and taken
    # over by replica 1 is [(1, 3), (2, 1)].
    for runs in started.values():
        runs.sort(key=lambda run: run[0] if run[0] is not None else -1)
    return started, ended


def check_job_takeover(replicas):
    """The replica running a job is SIGKILLed: another takes the job over once its lease
    (20 s) has run out, under a new fence, and the job ends done, recorded once."""
    port = replicas[0].port
    fid = upload_ok(port, "thirty.pdf", fixture("pdf/thirty_pages.pdf"))["file_id"]
    jid = read(port, fid, **{"async": True, "ocr": "force", "pages": "7-12"}).json()["job_id"]

    def runner():
        started, _ = job_log(replicas)
        return started.get(jid, [None])[0]
    fence, n = wait_for("the job to start", runner, 30)
    victim = next(r for r in replicas if r.n == n)
    time.sleep(1.5)
    victim.kill()
    t0 = time.time()
    victim.start()

    def ended():
        a = request(port if victim.port != port else replicas[1].port, "GET", f"/jobs/{jid}")
        return a.json() if a.json()["state"] in ("done", "failed") else None
    j = wait_for("the job to end on another replica", ended, 120)
    took = time.time() - t0
    started, ends = job_log(replicas)
    expect(j["state"] == "done", f"taken-over job: {j['state']} {j.get('error')}")
    fences = [f for f, _ in started[jid]]
    expect(len(fences) >= 2 and fences == sorted(set(fences)), f"job started under {started[jid]}")
    expect(ends.get(jid) == 1, f"job end recorded {ends.get(jid)} times")
    say(f"the replica running a job SIGKILLed mid-read: the job was started again under fence "
        f"{fences[-1]} on replica {started[jid][-1][1]} after its lease ran out and ended done "
        f"{took:.0f} s later, recorded once")


def check_burst(r1, weed, prefix, n=32):
    """32 uploads and then 32 deletes at once on one replica: each holds a lock on its
    bytes in Postgres while its statements run; none may wait out the pool (503)."""
    bodies = [f"burst {i} {uuid.uuid4()}\n".encode() * 40 for i in range(n)]
    out = [None] * n

    def up(i):
        out[i] = upload(r1.port, f"burst{i}.txt", bodies[i])
    ts = [threading.Thread(target=up, args=(i,)) for i in range(n)]
    t0 = time.time()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    took = time.time() - t0
    bad = [(i, a.status, a.body[:120]) for i, a in enumerate(out) if a.status != 200]
    expect(not bad, f"uploads in a burst of {n}: {bad[:5]}")
    recs = [a.json()["files"][0] for a in out]
    gone = [None] * n

    def rm(i):
        gone[i] = request(r1.port, "DELETE", f"/files/{recs[i]['file_id']}")
    ts = [threading.Thread(target=rm, args=(i,)) for i in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    bad = [(i, d.status, d.body[:120]) for i, d in enumerate(gone) if d.status not in (200, 204)]
    expect(not bad, f"deletes in a burst of {n}: {bad[:5]}")
    left = [r["sha256"] for r in recs if weed.objects(prefix, r["sha256"])]
    expect(not left, f"bytes left in the bucket after their deletes: {len(left)}")
    say(f"{n} uploads at once on one replica (Postgres pool of 16): all stored in {took:.1f} s; "
        f"{n} deletes at once: all done, the bucket emptied of them")


def check_sigterm_hands_back(replicas):
    """A replica stopped with SIGTERM mid-job hands its running job back to the queue:
    another replica runs it at once, not 20 s later when its lease would run out."""
    port = replicas[0].port
    fid = upload_ok(port, "thirty.pdf", fixture("pdf/thirty_pages.pdf"))["file_id"]
    jid = read(port, fid, **{"async": True, "ocr": "force", "pages": "13-20"}).json()["job_id"]

    def runner():
        started, _ = job_log(replicas)
        return started.get(jid, [None])[0]
    fence, n = wait_for("the job to start", runner, 30)
    victim = next(r for r in replicas if r.n == n)
    other = next(r for r in replicas if r.n != n)
    time.sleep(1.0)
    t0 = time.time()
    victim.stop()
    stopped = time.time() - t0
    expect(victim.proc.returncode == 0, f"replica {n} exited {victim.proc.returncode} on SIGTERM")

    def again():
        started, _ = job_log(replicas)
        runs = started.get(jid, [])
        return runs if len(runs) >= 2 else None
    runs = wait_for("another replica to take the job", again, 15)
    taken = time.time() - t0
    expect(runs[-1][1] != n and runs[-1][0] > fence, f"job runs: {runs}")
    victim.start()

    def ended():
        a = request(other.port, "GET", f"/jobs/{jid}").json()
        return a if a["state"] in ("done", "failed") else None
    j = wait_for("the handed-back job to end", ended, 120)
    _, ends = job_log(replicas)
    expect(j["state"] == "done" and ends.get(jid) == 1,
           f"handed-back job: {j['state']} {j.get('error')}, ended {ends.get(jid)} times")
    expect(taken < 10, f"the job was taken again only after {taken:.1f} s (its lease, not a hand-back)")
    say(f"SIGTERM to the replica running a job: it stopped in {stopped:.1f} s and handed the job "
        f"back; replica {runs[-1][1]} took it {taken:.1f} s after the signal (fence {runs[-1][0]}) "
        "and it ended done, recorded once")


class Hooks:
    """A receiver of job callbacks on loopback: what it was sent."""

    def __init__(self):
        got = self.got = []

        class H(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                n = int(self.headers.get("Content-Length", "0"))
                got.append((self.path, self.headers, self.rfile.read(n)))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *a):
                pass
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()


def check_callbacks(r1, r2, r3, hooks):
    """A job with a callback_url queued on one replica calls back once when it ends,
    signed with the tenant's secret, which every replica gives alike."""
    fid = upload_ok(r1.port, "three.pdf", fixture("pdf/three_pages.pdf"))["file_id"]
    a = read(r1.port, fid, **{"async": True,
                               "callback_url": f"http://127.0.0.1:{hooks.port}/done?job=1"})
    expect(a.status == 202, f"async read with a callback: {a.status} {a.body[:200]!r}")
    jid = a.json()["job_id"]

    def delivered():
        j = request(r2.port, "GET", f"/jobs/{jid}").json()
        return j if (j.get("callback") or {}).get("state") == "delivered" else None
    j = wait_for("the callback to be delivered", delivered, 60)
    secrets = {request(r.port, "GET", "/callbacks/secret").json()["secret"] for r in (r1, r2, r3)}
    expect(len(secrets) == 1, "replicas give different callback secrets")
    secret = secrets.pop()
    mine = [g for g in hooks.got if json.loads(g[2])["job_id"] == jid]
    expect(len(mine) == 1, f"callbacks for the job: {len(mine)}")
    path, headers, body = mine[0]
    want = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    expect(headers.get("X-Docreader-Signature") == want, "the callback's signature does not verify")
    expect(path == "/done?job=1" and json.loads(body)["state"] == "done", f"callback {path} {body[:200]!r}")
    other = request(r3.port, "GET", "/callbacks/secret", tenant="b").json()["secret"]
    expect(other != secret, "two tenants share a callback secret")
    say(f"a job queued on replica 1 called back once when done ({j['callback']['attempts']} "
        "attempt), signed with tenant a's secret, the same from all three replicas "
        "(Python's hmac verifies it); tenant b's secret differs")


def check_kills(replicas, gateway, weed, prefix, ops=100, every=10.0):
    """Mixed uploads and reads through nginx while one replica is SIGKILLed every 10 s and
    restarted: every upload answered 200 is readable afterwards from every replica, every
    failure is a typed error or the killed replica's own connection, nothing else is 5xx."""
    seed = [upload_ok(gateway, f"seed{i}.pdf", fixture("pdf/three_pages.pdf"))["file_id"]
            for i in range(3)]
    scan = upload_ok(gateway, "thirty.pdf", fixture("pdf/thirty_pages.pdf"))["file_id"]
    lock = threading.Lock()
    stored, outcomes, bad, jobs = [], {}, [], []
    stop = threading.Event()
    counter = iter(range(ops))

    def note(kind):
        with lock:
            outcomes[kind] = outcomes.get(kind, 0) + 1

    def client():
        while True:
            with lock:
                i = next(counter, None)
            if i is None:
                return
            try:
                if i % 4 == 1:
                    # A read job: two pages of OCR, seconds long, so kills land on some.
                    page = 1 + (i // 4) % 29
                    r = read(gateway, scan, **{"async": True, "ocr": "force",
                                               "pages": f"{page}-{page + 1}"})
                    if r.status == 202:
                        with lock:
                            jobs.append(r.json()["job_id"])
                        note("202 job")
                        time.sleep(0.25)
                        continue
                elif i % 2 == 0:
                    data = f"kill test upload {i} {uuid.uuid4()}\n".encode() * 30
                    r = upload(gateway, f"k{i}.txt", data)
                    if r.status == 200:
                        with lock:
                            stored.append((r.json()["files"][0]["file_id"], data))
                else:
                    with lock:
                        pool = seed + [s[0] for s in stored]
                    r = read(gateway, random.choice(pool))
            except (OSError, http.client.HTTPException) as e:
                bad.append(f"op {i}: the gateway failed: {e!r}")
                continue
            if r.status == 200:
                note("ok")
            elif r.status == 502:
                note("502 (killed replica's connection)")
            elif r.code():
                note(f"{r.status} {r.code()}")
                if r.status >= 500 and r.code() != "unavailable":
                    bad.append(f"op {i}: {r.status} {r.body[:200]!r}")
            else:
                bad.append(f"op {i}: {r.status} without a typed error: {r.body[:200]!r}")
            time.sleep(0.25)

    kills = []

    def killer():
        n = 0
        while not stop.wait(every):
            victim = replicas[n % len(replicas)]
            n += 1
            victim.kill()
            kills.append(victim.n)
            time.sleep(1)
            victim.start(wait=False)
            try:
                victim.wait_ready()
            except AssertionError as e:
                bad.append(str(e))

    k = threading.Thread(target=killer)
    clients = [threading.Thread(target=client) for _ in range(4)]
    started = time.time()
    k.start()
    for c in clients:
        c.start()
    for c in clients:
        c.join()
    # At least two kills happen, however fast the operations went.
    while len(kills) < 2:
        time.sleep(0.5)
    stop.set()
    k.join()
    took = time.time() - started
    for r in replicas:
        if r.proc.poll() is not None:
            r.start()
    expect(not bad, f"failures: {bad[:5]}")
    missing = []
    for fid, data in stored:
        for r in replicas:
            a = read(r.port, fid)
            if a.status != 200 or a.json()["text"].strip() != data.decode().strip():
                missing.append((fid, r.n, a.status))
    expect(not missing, f"stored uploads not readable everywhere: {missing[:5]}")
    # Every job ends, on whichever replica: a killed runner's job is taken over when its
    # lease (20 s) runs out.
    ends = {}
    for jid in jobs:
        def ended():
            a = request(gateway, "GET", f"/jobs/{jid}")
            if a.status == 200 and a.json()["state"] in ("done", "failed", "cancelled"):
                return a.json()
            return None
        j = wait_for(f"job {jid} to end", ended, 120)
        expect(j["state"] == "done" or (j["state"] == "failed" and j["error"].get("code")),
               f"job {jid}: {j['state']} {j.get('error')}")
        if j["state"] == "done":
            expect("--- Page" in j["envelope"]["text"], f"job {jid}: {j['envelope']['text'][:100]!r}")
        ends[j["state"]] = ends.get(j["state"], 0) + 1
    # No job's result recorded twice: each job has one "job ended" line in all the logs,
    # and any job started twice was started again under a new fence.
    started, ended_lines = job_log(replicas)
    expect(all(j in started for j in jobs), "a job with no 'job started' line in the logs")
    twice = {j: n for j, n in ended_lines.items() if n > 1}
    expect(not twice, f"jobs whose result was recorded twice: {twice}")
    expect(all(ended_lines.get(j) == 1 for j in jobs), "a job with no 'job ended' line")
    for j, fences in started.items():
        expect(len(set(fences)) == len(fences), f"job {j} started twice under one fence: {fences}")
    taken_over = sum(1 for f in started.values() if len(f) > 1)
    expect(outcomes.get("ok", 0) >= ops // 2, f"too few successes: {outcomes}")
    say(f"{ops} uploads, reads and read jobs through nginx in {took:.0f} s with {len(kills)} "
        f"SIGKILLs (replicas {kills}): {outcomes}; all {len(stored)} stored uploads readable "
        f"from every replica afterwards; all {len(jobs)} jobs ended ({ends}), {taken_over} "
        "taken over from a killed replica, none recorded twice")


def check_database_outage(r1, pg):
    pg.stop()
    try:
        r = request(r1.port, "GET", "/files")
        expect(r.status == 503 and r.code() == "unavailable", f"with Postgres stopped: {r.status} {r.body!r}")
        expect(r.headers.get("retry-after"), "no Retry-After")
        ready = request(r1.port, "GET", "/readyz", tenant=None)
        expect(ready.status == 503, f"/readyz with Postgres stopped: {ready.status}")
    finally:
        pg.start()
    t0 = time.time()
    wait_for("recovery after Postgres returned",
             lambda: request(r1.port, "GET", "/files").status == 200, 30)
    say(f"Postgres stopped: 503 unavailable with Retry-After, /readyz 503; restarted: the "
        f"replica answers again by itself after {time.time() - t0:.1f} s")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--weed", required=True)
    ap.add_argument("--pg-bindir", required=True)
    ap.add_argument("--ops", type=int, default=100)
    ap.add_argument("--only", help="comma-separated checks to run (default: all): start, tls, "
                    "cross, dedup, race, search, jobs, takeover, burst, term, callbacks, kills, outage")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="docreader-scale-")
    os.chmod(work, 0o755)
    started, ok = [], False
    replicas = []
    try:
        pg = Postgres(work, args.pg_bindir)
        pg.start()
        started.append(pg)
        weed = Seaweed(work, args.weed)
        weed.start()
        started.append(weed)
        prefix = "scale"
        env = dict(os.environ,
                   DOCREADER_DATABASE_URL=pg.url,
                   DOCREADER_BLOB_STORE=f"s3://{BUCKET}/{prefix}",
                   AWS_ENDPOINT_URL=f"http://127.0.0.1:{weed.s3}",
                   AWS_ACCESS_KEY_ID=S3_KEY, AWS_SECRET_ACCESS_KEY=S3_SECRET,
                   AWS_REGION="us-east-1",
                   DOCREADER_API_KEYS=",".join(f"{k}:{t}" for t, k in KEYS.items()),
                   DOCREADER_LOG_FORMAT="json",
                   DOCREADER_CALLBACK_ALLOWLIST="127.0.0.1",
                   DOCREADER_URL_ALLOW_ADDRESSES="127.0.0.0/8")
        say(f"Postgres {pg.port}, SeaweedFS S3 {weed.s3} (bucket {BUCKET}, credentials required)")
        only = set(args.only.split(",")) if args.only else None

        def want(name):
            return only is None or name in only
        if want("start"):
            check_bad_operator_input(args.bin, work, pg, weed, env)
        if want("tls"):
            check_postgres_tls(args.bin, work, pg, env)
        replicas = [Replica(n, work, args.bin, env) for n in (1, 2, 3)]
        # Three replicas starting at once migrate the empty database once.
        for r in replicas:
            r.start(wait=False)
        for r in replicas:
            r.wait_ready()
        say("three replicas started at once on an empty database (migrations applied once)")
        gw = Nginx(work, [r.port for r in replicas])
        gw.start()
        started.append(gw)
        r1, r2, r3 = replicas
        hooks = Hooks()
        checks = [
            ("cross", lambda: check_cross_replica(r1, r2, r3)),
            ("dedup", lambda: check_dedup_and_delete(r1, r2, r3, weed, prefix)),
            ("race", lambda: check_delete_upload_race(r1, r2, r3, weed, prefix)),
            ("search", lambda: check_search_and_memory(r1, r2)),
            ("jobs", lambda: check_jobs_across_replicas(r1, r2, r3)),
            ("takeover", lambda: check_job_takeover(replicas)),
            ("burst", lambda: check_burst(r1, weed, prefix)),
            ("term", lambda: check_sigterm_hands_back(replicas)),
            ("callbacks", lambda: check_callbacks(r1, r2, r3, hooks)),
            ("kills", lambda: check_kills(replicas, gw.port, weed, prefix, ops=args.ops)),
            ("outage", lambda: check_database_outage(r1, pg)),
        ]
        for name, run in checks:
            if want(name):
                run()
        ok = True
        say("all checks passed")
    finally:
        for r in replicas:
            r.stop()
        for s in reversed(started):
            s.stop()
        if not ok:
            for r in replicas:
                print(f"--- replica {r.n} log (last lines) ---\n{r.tail()}")
            for name in ("weed.log", "pg/log", "gateway/logs/error.log"):
                p = os.path.join(work, name)
                if os.path.exists(p):
                    with open(p, "rb") as f:
                        tail = f.read().splitlines()[-10:]
                    print(f"--- {name} ---\n" + b"\n".join(tail).decode(errors="replace"))
        if ok and os.environ.get("SCALE_KEEP") != "1":
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"scale: work dir kept: {work}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
