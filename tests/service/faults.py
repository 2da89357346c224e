#!/usr/bin/env python3
"""Fault tests of the evaluation service (docs/service.md), each against its own redis-server on a free port, a
`ptxbench serve` and CPU workers (the compile and static stages):

  faults.py PTXBENCH ROOT SCENARIO

  kill-worker      kill -9 a worker mid-job: the job completes on another worker, one verdict is stored
  dead-letter      a job whose workers keep dying goes to the dead-letter stream after its attempts
  restart-redis    kill -9 Redis with jobs queued and one being judged: after the restart every job is answered
  restart-service  kill -9 the service under a running `ptxbench run --evaluator`: the run completes
  concurrent       200 submissions from 8 clients at once (20 sources, each sent 10 times): all answered, each
                   source judged once
  wedged-gpu       a GPU worker (a fake GPU) whose GPU stops answering after a stage timed out: the job is given
                   back, not failed, the worker reports itself wedged, and takes jobs again once the GPU answers
  bad-input        a wrong token, an oversized body, malformed JSON...: refused with the right status, and the
                   service survives
  slow-clients     80 connections from one address that send a header line a second: 8 held (the bound), the
                   rest answered 429 at once, another client served at once, the held ones closed at their
                   request's deadline
  no-worker        `ptxbench run --evaluator` on a Hopper task while no worker serves its queue: the run stops
                   after --evaluator-queue-wait with the judge's error, naming the queue, never a verdict

A scenario fails (exit 1) on the first broken expectation and never skips: a missing redis-server is a failure.
"""
import concurrent.futures
import http.client
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

TASK = "gemm-bf16-n4096-k4096-sm90a"
TOKEN = "test-token-0123456789abcdef"


def fail(message):
    print(f"FAIL: {message}", flush=True)
    raise SystemExit(1)


def check(condition, message):
    if not condition:
        fail(message)


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what, condition, timeout_s):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    fail(f"timed out after {timeout_s} s waiting for {what}")


def source(variant):
    """A small kernel and the GEMM's entry point that compile and pass the static checks (and fail the
    instruction stage: no wgmma): a distinct submission per variant."""
    return ("#include <ptxbench/abi.h>\n"
            f"__global__ void variant_{variant}(float* out) {{ out[threadIdx.x] = {variant}.0f; }}\n"
            'extern "C" int ptxbench_gemm_bf16(const __nv_bfloat16*, const __nv_bfloat16*, __nv_bfloat16*, int, '
            "int, int, cudaStream_t) { return 0; }\n")


class Redis:
    def __init__(self, folder):
        self.folder = folder
        self.port = free_port()
        self.process = None
        if not shutil.which("redis-server"):
            fail("redis-server is not installed (scripts/deps installs it)")

    def start(self):
        # The append-only file, synced before every reply: an accepted job survives a kill -9 of Redis.
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.folder,
             "--appendonly", "yes", "--appendfsync", "always", "--save", "", "--logfile", "redis.log"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for("Redis to answer", lambda: self.ping(), 20)

    def ping(self):
        try:
            return self.command("PING") == "PONG"
        except OSError:
            return False
        except RuntimeError as error:  # a Redis still reading its append-only file answers LOADING: not yet
            if str(error).startswith("LOADING"):
                return False
            raise

    def command(self, *args):
        """One command over RESP; the reply decoded (strings, integers, lists, None)."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as s:
            payload = f"*{len(args)}\r\n" + "".join(f"${len(str(a).encode())}\r\n{a}\r\n" for a in args)
            s.sendall(payload.encode())
            reader = s.makefile("rb")
            return self._read(reader)

    def _read(self, reader):
        line = reader.readline().rstrip(b"\r\n")
        kind, rest = line[:1], line[1:].decode()
        if kind == b"+":
            return rest
        if kind == b"-":
            raise RuntimeError(rest)
        if kind == b":":
            return int(rest)
        if kind == b"$":
            if int(rest) < 0:
                return None
            data = reader.read(int(rest) + 2)[:-2]
            return data.decode()
        if kind == b"*":
            return None if int(rest) < 0 else [self._read(reader) for _ in range(int(rest))]
        raise RuntimeError(f"unexpected reply {line!r}")

    def kill(self):
        self.process.kill()
        self.process.wait()


class Cluster:
    """Redis, the service and workers, all under one temporary folder; everything is killed at the end."""

    def __init__(self, ptxbench, root):
        self.ptxbench, self.root = ptxbench, root
        self.folder = tempfile.mkdtemp(prefix="ptxbench-service-")
        self.redis = Redis(self.folder)
        self.token_file = os.path.join(self.folder, "token")
        with open(self.token_file, "w") as f:
            f.write(TOKEN + "\n")
        self.service = None
        self.service_port = free_port()
        self.workers = {}
        self.logs = []

    def __enter__(self):
        self.redis.start()
        return self

    def __exit__(self, *error):
        for process in [self.service, *self.workers.values(), self.redis.process]:
            if process and process.poll() is None:
                process.kill()
                process.wait()
        if error[0] is not None or os.environ.get("PTXBENCH_KEEP_LOGS"):
            for path in self.logs:
                print(f"----- {os.path.basename(path)} -----")
                with open(path, errors="replace") as f:
                    print(f.read()[-6000:])
        shutil.rmtree(self.folder, ignore_errors=True)

    @property
    def url(self):
        return f"http://127.0.0.1:{self.service_port}"

    def _start(self, name, args, env=None):
        path = os.path.join(self.folder, f"{name}.log")
        self.logs.append(path)
        out = open(path, "a")
        return subprocess.Popen([self.ptxbench, "--root", self.root, *args], stdout=out, stderr=subprocess.STDOUT,
                                env={**os.environ, **(env or {})}, start_new_session=True)

    def start_service(self, max_body_mb=None, extra=()):
        args = ["--data", os.path.join(self.folder, "service-data"), "serve", "--listen",
                f"127.0.0.1:{self.service_port}", "--redis", f"redis://127.0.0.1:{self.redis.port}", "--token-file",
                self.token_file, *extra]
        if max_body_mb:
            args += ["--max-body-mb", str(max_body_mb)]
        self.service = self._start("service", args)
        wait_for("the service to answer", lambda: self.health() == 200, 30)

    def health(self):
        try:
            return request(self.url, "GET", "/v1/health", token=None)[0]
        except OSError:
            return None

    def start_worker(self, name, slow_compile_s=0, data=None, lease_s=3, max_attempts=3, gpu=None, env=None):
        env = dict(env or {})
        if slow_compile_s:
            # A compile that takes a while, so that the worker can be caught mid-job.
            nvcc = os.path.join(self.folder, f"slow-nvcc-{name}")
            with open(nvcc, "w") as f:
                f.write("#!/bin/sh\n"
                        f'[ "$1" = --version ] || sleep {slow_compile_s}\n'
                        f'exec {os.environ.get("PTXBENCH_NVCC", "/usr/local/cuda/bin/nvcc")} "$@"\n')
            os.chmod(nvcc, 0o755)
            env["PTXBENCH_NVCC"] = nvcc
            env["PTXBENCH_COMPILE_CACHE"] = ""  # its own cache: a hit in the tests' shared one would skip the wait
        data = data or os.path.join(self.folder, f"data-{name}")
        self.workers[name] = self._start(
            name, ["--data", data, "worker", *(["--gpu", str(gpu)] if gpu is not None else ["--cpu-only"]),
                   "--redis", f"redis://127.0.0.1:{self.redis.port}",
                   "--name", name, "--lease", str(lease_s), "--heartbeat", "0.5", "--max-attempts", str(max_attempts)],
            env)
        return self.workers[name]

    def kill_worker(self, name):
        os.killpg(self.workers[name].pid, signal.SIGKILL)  # the worker and every child it started
        self.workers[name].wait()

    def submit(self, body, token=TOKEN):
        return request(self.url, "POST", "/v1/jobs", body, token)

    def job(self, job_id):
        status, doc = request(self.url, "GET", f"/v1/jobs/{job_id}")
        check(status == 200, f"GET /v1/jobs/{job_id}: HTTP {status} {doc}")
        return doc

    def verdict(self, job_id, timeout_s=240):
        """Waits for the job's verdict (long polls, surviving a restarting service); returns the answer."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                status, doc = request(self.url, "GET", f"/v1/jobs/{job_id}/verdict?wait=10")
            except OSError:
                time.sleep(0.5)
                continue
            if status in (200, 409):
                return status, doc
            check(status in (202, 503), f"verdict of {job_id}: HTTP {status} {doc}")
        fail(f"no verdict for job {job_id} within {timeout_s} s")

    def stored_verdicts(self):
        """The job ids of every stored verdict, as the verdict stream records them."""
        entries = self.redis.command("XRANGE", "ptxbench:verdicts", "-", "+") or []
        return [dict(zip(fields[::2], fields[1::2]))["job"] for _, fields in entries]

    def pending(self, queue="cpu"):
        return self.redis.command("XPENDING", f"ptxbench:jobs:{queue}", "workers")[0]


def request(url, method, path, body=None, token=TOKEN, headers=None, timeout=60):
    data = body if isinstance(body, bytes) else (json.dumps(body).encode() if body is not None else None)
    req = urllib.request.Request(url + path, data=data, method=method)
    if token is not None:
        req.add_header("Authorization", f"Bearer {token}")
    if data is not None:
        req.add_header("Content-Type", "application/json")
    for name, value in (headers or {}).items():
        req.add_header(name, value)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as reply:
            return reply.status, json.loads(reply.read() or b"null")
    except urllib.error.HTTPError as error:
        text = error.read()
        try:
            return error.code, json.loads(text)
        except ValueError:
            fail(f"{method} {path}: HTTP {error.code} with a body that is not JSON: {text[:200]!r}")


def chunked(c, body):
    """A POST whose body comes in chunks, without a Content-Length."""
    connection = http.client.HTTPConnection("127.0.0.1", c.service_port, timeout=30)
    connection.putrequest("POST", "/v1/jobs")
    for name, value in (("Authorization", f"Bearer {TOKEN}"), ("Content-Type", "application/json"),
                        ("Transfer-Encoding", "chunked")):
        connection.putheader(name, value)
    connection.endheaders()
    connection.send(f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n")
    reply = connection.getresponse()
    return reply.status, json.loads(reply.read())


def job_body(variant, **extra):
    return {"task": TASK, "source": source(variant), "name": f"variant{variant}.cu", "cpu_only": True, **extra}


def expect_cpu_verdict(doc, what):
    check("verdict" in doc, f"{what}: no verdict in {doc}")
    stages = {s["name"]: s["status"] for s in doc["verdict"]["stages"]}
    check(stages.get("compile") == "passed" and stages.get("static") == "passed",
          f"{what}: expected the compile and static stages to pass, got {stages}")


# ----- the scenarios -----

def kill_worker(c):
    c.start_service()
    c.start_worker("slow", slow_compile_s=8)
    status, doc = c.submit(job_body(1))
    check(status == 202, f"submit: HTTP {status} {doc}")
    job_id = doc["id"]
    wait_for("the slow worker to take the job",
             lambda: c.job(job_id)["state"] == "running" and c.job(job_id)["worker"] == "slow", 30)
    time.sleep(1)  # mid-compile
    log("kill -9 of the worker judging the job")
    killed_at = time.monotonic()
    c.kill_worker("slow")
    c.start_worker("other")
    status, doc = c.verdict(job_id)
    log(f"the job completed on another worker {time.monotonic() - killed_at:.1f} s after the kill")
    check(status == 200, f"verdict: HTTP {status} {doc}")
    expect_cpu_verdict(doc, "the retried job")
    check(doc["worker"] == "other", f"the job was finished by {doc['worker']}, not the other worker")
    check(doc["attempts"] == 2, f"attempts {doc['attempts']}, expected 2")
    time.sleep(1.5)
    stored = c.stored_verdicts()
    check(stored == [job_id], f"stored verdicts {stored}: expected exactly one, for {job_id}")
    check(c.pending() == 0, "the job's stream entry is still pending")
    check(doc.get("duplicates", 0) == 0, f"duplicates {doc.get('duplicates')}")


def dead_letter(c):
    c.start_service()
    c.start_worker("slow1", slow_compile_s=30, max_attempts=2)
    status, doc = c.submit(job_body(2))
    job_id = doc["id"]
    wait_for("the first worker to take the job", lambda: c.job(job_id)["worker"] == "slow1", 30)
    c.kill_worker("slow1")
    c.start_worker("slow2", slow_compile_s=30, max_attempts=2)
    wait_for("the second worker to take the job", lambda: c.job(job_id)["worker"] == "slow2", 30)
    check(c.job(job_id)["attempts"] == 2, f"attempts {c.job(job_id)['attempts']}")
    c.kill_worker("slow2")
    c.start_worker("last", max_attempts=2)
    status, doc = c.verdict(job_id)
    check(status == 409 and doc["state"] == "dead", f"expected a dead job (409), got HTTP {status} {doc}")
    check("2 attempt" in doc.get("error", ""), f"the dead job's error: {doc}")
    dead = c.redis.command("XRANGE", "ptxbench:dead", "-", "+")
    check(len(dead) == 1 and dict(zip(dead[0][1][::2], dead[0][1][1::2]))["job"] == job_id,
          f"dead-letter stream: {dead}")
    # The same submission again is a new job, judged this time.
    status, doc = c.submit(job_body(2))
    check(status == 202 and doc["id"] != job_id and doc["created"], f"resubmission: HTTP {status} {doc}")
    status, answer = c.verdict(doc["id"])
    check(status == 200, f"the resubmitted job: HTTP {status} {answer}")
    expect_cpu_verdict(answer, "the resubmitted job")


def restart_redis(c):
    c.start_service()
    c.start_worker("w", slow_compile_s=2)
    ids = []
    for variant in range(6):
        status, doc = c.submit(job_body(100 + variant))
        check(status == 202, f"submit {variant}: HTTP {status} {doc}")
        ids.append(doc["id"])
    wait_for("the worker to be judging", lambda: any(c.job(i)["state"] == "running" for i in ids), 30)
    log("kill -9 of Redis with jobs queued and one being judged")
    c.redis.kill()
    time.sleep(1)
    status, doc = c.submit(job_body(999))
    check(status == 503, f"a submission while Redis is down: HTTP {status} {doc} (expected 503)")
    check(c.service.poll() is None, "the service died with Redis")
    time.sleep(2)
    c.redis.start()
    log("Redis is back")
    for i in ids:
        status, doc = c.verdict(i)
        check(status == 200, f"job {i} after the restart: HTTP {status} {doc}")
        expect_cpu_verdict(doc, f"job {i}")
    stored = c.stored_verdicts()
    check(sorted(stored) == sorted(ids), f"stored verdicts {len(stored)} for {len(ids)} jobs: {stored}")
    check(c.workers["w"].poll() is None, "the worker died with Redis")


def restart_service(c, solutions):
    c.start_service()
    shared = os.path.join(c.folder, "client-data")  # the client's compile cache serves the worker on this host
    c.start_worker("w", data=shared)
    run_log = os.path.join(c.folder, "run.log")
    c.logs.append(run_log)
    run = subprocess.Popen(
        [c.ptxbench, "--root", c.root, "--data", shared, "run", "--solutions", solutions, "--tasks", TASK,
         "--cpu-only", "--evaluator", c.url, "--evaluator-token-file", c.token_file, "--json"],
        stdout=subprocess.PIPE, stderr=open(run_log, "w"), text=True)
    wait_for("the run's first job", lambda: len(c.stored_verdicts()) >= 1, 120)
    log("kill -9 of the service under a running `ptxbench run --evaluator`")
    c.service.kill()
    c.service.wait()
    time.sleep(3)
    c.start_service()
    log("the service is back")
    out, _ = run.communicate(timeout=600)
    check(run.returncode == 0, f"ptxbench run --evaluator exited {run.returncode}: {out[-2000:]}")
    result = json.loads(out)
    check(len(result["evaluations"]) == 7, f"{len(result['evaluations'])} evaluations, expected 7")
    for e in result["evaluations"]:
        check(not e["expectation_mismatches"], f"{e['solution']}: {e['expectation_mismatches']}")
    # Jobs submitted to the old service and answered by the new one: every job has its one verdict.
    stored = c.stored_verdicts()
    check(len(stored) == len(set(stored)), f"a job stored twice: {stored}")
    # And a job left pending across a restart: submitted, the service killed, answered by the next one.
    status, doc = c.submit(job_body(8))
    check(status == 202, f"submit: HTTP {status} {doc}")
    c.service.kill()
    c.service.wait()
    c.start_service()
    status, answer = c.verdict(doc["id"])
    check(status == 200, f"the pending job after the restart: HTTP {status} {answer}")


def no_worker(c, root):
    c.start_service()
    c.start_worker("w")  # a CPU worker only: nothing takes the sm_90a queue
    solutions = os.path.join(c.folder, "solutions")
    os.makedirs(os.path.join(solutions, "reference"))
    shutil.copy(os.path.join(root, "solutions", "reference", "gemm_bf16_sm90a.cu"),
                os.path.join(solutions, "reference"))
    with open(os.path.join(solutions, "solutions.json"), "w") as f:
        json.dump([{"path": "reference/gemm_bf16_sm90a.cu", "tasks": TASK, "purpose": "a job no worker takes",
                    "expect": {"overall": "passed"}}], f)
    started = time.monotonic()
    run = subprocess.run(
        [c.ptxbench, "--root", c.root, "--data", os.path.join(c.folder, "client-data"), "run", "--solutions",
         solutions, "--tasks", TASK, "--evaluator", c.url, "--evaluator-token-file", c.token_file,
         "--evaluator-queue-wait", "4"],
        capture_output=True, text=True, timeout=300)
    took = time.monotonic() - started
    text = run.stdout + run.stderr
    check(run.returncode == 5, f"exit {run.returncode}, expected 5 (the judge's error): {text[-2000:]}")
    check("no worker" in text and "sm_90a" in text, f"the message does not say why: {text[-2000:]}")
    check(took < 120, f"the run took {took:.0f} s to give up after a 4-s queue wait")
    check(not c.stored_verdicts(), f"a verdict was stored for a job no worker took: {c.stored_verdicts()}")


def concurrent_submissions(c):
    c.start_service()
    for name in ("w1", "w2"):
        c.start_worker(name)
    clients, per_client, distinct = 8, 25, 20
    # Each source is submitted 10 times, by different clients.
    plan = [[(client * per_client + k) % distinct for k in range(per_client)] for client in range(clients)]

    def client(variants):
        ids = []
        for variant in variants:
            status, doc = c.submit(job_body(1000 + variant))
            check(status in (200, 202), f"submit: HTTP {status} {doc}")
            ids.append((variant, doc["id"]))
        answers = []
        for variant, job_id in ids:
            status, doc = c.verdict(job_id, timeout_s=600)
            check(status == 200, f"job {job_id}: HTTP {status} {doc}")
            expect_cpu_verdict(doc, f"job {job_id}")
            answers.append((variant, job_id, doc["verdict"]["submission"]))
        return answers

    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        results = [a for answers in pool.map(client, plan) for a in answers]
    log(f"{len(results)} submissions answered in {time.monotonic() - started:.1f} s")
    check(len(results) == clients * per_client, f"{len(results)} answers")
    by_variant = {}
    for variant, job_id, digest in results:
        by_variant.setdefault(variant, set()).add((job_id, digest))
    check(len(by_variant) == distinct, f"{len(by_variant)} distinct sources answered")
    for variant, jobs in by_variant.items():
        check(len(jobs) == 1, f"source {variant} was answered by {len(jobs)} different jobs: {jobs}")
    stored = c.stored_verdicts()
    check(len(stored) == distinct and len(set(stored)) == distinct,
          f"{len(stored)} verdicts stored ({len(set(stored))} jobs) for {distinct} distinct sources")
    for job_id in set(stored):
        doc = c.job(job_id)
        check(doc["attempts"] == 1 and doc.get("duplicates", 0) == 0, f"job {job_id} judged twice: {doc}")


def wedged_gpu(c):
    c.start_service()
    # A GPU host without a GPU: nvidia-smi lists an H200 until the flag file says the GPU is wedged, and the
    # runner hangs, so that the correct stage times out.
    fake = os.path.join(c.folder, "fake-gpu")
    os.makedirs(fake)
    wedged = os.path.join(c.folder, "wedged")
    with open(os.path.join(fake, "nvidia-smi"), "w") as f:
        f.write("#!/bin/sh\n"
                f'[ "$1" = -i ] && [ -e {wedged} ] && {{ echo "Unable to determine the device handle" >&2; exit 15; }}\n'
                'case "$*" in *index,name*) echo "0, NVIDIA H200, 9.0" ;; *) echo "NVIDIA H200" ;; esac\n')
    with open(os.path.join(fake, "runner"), "w") as f:
        f.write("#!/bin/sh\nexec sleep 600\n")
    for tool in ("nvidia-smi", "runner"):
        os.chmod(os.path.join(fake, tool), 0o755)
    c.start_worker("gpu0", gpu=0, lease_s=30, env={
        "PATH": fake + os.pathsep + os.environ["PATH"], "PTXBENCH_RUNNER": os.path.join(fake, "runner"),
        "PTXBENCH_SANDBOX": "off"})
    open(wedged, "w").close()
    status, doc = c.submit({"task": TASK, "source": source(5), "stages": ["correct"], "stage_time_limit_s": 2})
    check(status == 202, f"submit: HTTP {status} {doc}")
    job_id = doc["id"]

    def worker():
        status, doc = request(c.url, "GET", "/v1/workers")
        return next((w for w in doc["workers"] if w["name"] == "gpu0"), None)

    w = wait_for("the worker to report its GPU wedged", lambda: (w := worker()) and w["activity"] == "wedged" and w, 120)
    check("does not answer" in w.get("problem", ""), f"the wedged worker's report: {w}")
    job = c.job(job_id)
    check(job["state"] == "queued" and job["attempts"] == 1, f"the job was not given back: {job}")
    check(c.stored_verdicts() == [], "a verdict was stored for a stage the wedged GPU timed out")
    log(f"wedged: {w['problem'][:120]}")
    os.remove(wedged)
    status, doc = c.verdict(job_id, timeout_s=120)
    check(status == 200, f"after the GPU answers again: HTTP {status} {doc}")
    stages = {s["name"]: s["status"] for s in doc["verdict"]["stages"]}
    check(stages["correct"] == "timeout" and doc["attempts"] == 2,
          f"the second attempt (the GPU answers: the time-out is the solution's): {stages}, {doc['attempts']}")


def bad_input(c):
    c.start_service(max_body_mb=2)
    c.start_worker("w")
    cases = [
        ("no token", lambda: c.submit(job_body(3), token=None), 401),
        ("wrong token", lambda: c.submit(job_body(3), token="not-the-token-0123456789"), 401),
        ("wrong token on a read", lambda: request(c.url, "GET", "/v1/workers", token="x" * 30), 401),
        ("oversized body", lambda: c.submit(b'{"task": "' + b"x" * (3 << 20) + b'"}'), 413),
        ("source over 1 MiB", lambda: c.submit(job_body(3) | {"source": "//" + "x" * (1 << 20)}), 413),
        ("malformed JSON", lambda: c.submit(b'{"task": "' + TASK.encode() + b'", "source": '), 400),
        ("not an object", lambda: c.submit([1, 2]), 400),
        ("a key twice", lambda: c.submit(b'{"task": "a", "task": "b", "source": "x"}'), 400),
        ("unknown field", lambda: c.submit(job_body(3) | {"priority": 1}), 400),
        ("missing source", lambda: c.submit({"task": TASK}), 400),
        ("wrong type", lambda: c.submit(job_body(3) | {"cpu_only": "yes"}), 400),
        ("unknown task", lambda: c.submit(job_body(3) | {"task": "no-such-task"}), 422),
        ("unknown stage", lambda: c.submit(job_body(3) | {"stages": ["profile"]}), 422),
        ("time without correct", lambda: c.submit(job_body(3) | {"stages": ["time"]}), 422),
        ("chunked body", lambda: chunked(c, json.dumps(job_body(3)).encode()), 411),
        ("bad wait", lambda: request(c.url, "GET", "/v1/jobs/" + "0" * 32 + "/verdict?wait=never"), 400),
        ("unknown job", lambda: request(c.url, "GET", "/v1/jobs/" + "0" * 32), 404),
        ("not a job id", lambda: request(c.url, "GET", "/v1/jobs/../etc/passwd"), 404),
        ("unknown endpoint", lambda: request(c.url, "GET", "/v2/jobs"), 404),
    ]
    for name, call, expected in cases:
        status, doc = call()
        check(status == expected, f"{name}: HTTP {status}, expected {expected}: {doc}")
        check(isinstance(doc, dict) and isinstance(doc.get("error"), str) and doc["error"],
              f"{name}: no clear error in {doc}")
        log(f"{name}: {status} {doc['error'][:100]}")
    check(c.service.poll() is None, "the service died")
    # curl --data-binary sends application/x-www-form-urlencoded: the body is still the job, of any size
    # under the limit (httplib alone would parse it as a form and refuse one over 8 KB).
    padded = job_body(5) | {"source": source(5) + "// " + "x" * 14000 + "\n"}
    status, doc = request(c.url, "POST", "/v1/jobs", padded,
                          headers={"Content-Type": "application/x-www-form-urlencoded"})
    check(status == 202, f"a 14 KB job sent as curl sends it: HTTP {status} {doc}")
    status, doc = request(c.url, "POST", "/v1/jobs", b"--x\r\n\r\n{}\r\n--x--\r\n",
                          headers={"Content-Type": "multipart/form-data; boundary=x"})
    check(status == 415 and "JSON body" in doc.get("error", ""), f"a multipart form: HTTP {status} {doc}")
    status, doc = c.submit(job_body(3))
    check(status == 202, f"a good submission after the bad ones: HTTP {status} {doc}")
    status, answer = c.verdict(doc["id"])
    check(status == 200, f"its verdict: HTTP {status} {answer}")
    expect_cpu_verdict(answer, "the good submission")
    # The same again: the cached verdict, at once.
    status, again = c.submit(job_body(3))
    check(status == 200 and again.get("cached") and again["id"] == doc["id"], f"a cached answer: {status} {again}")
    # Cancelling: a done job cannot be; a queued one can, and then has no verdict.
    status, refused = request(c.url, "DELETE", f"/v1/jobs/{doc['id']}")
    check(status == 409, f"cancelling a done job: HTTP {status} {refused}")
    c.kill_worker("w")
    status, queued = c.submit(job_body(4))
    status, cancelled = request(c.url, "DELETE", f"/v1/jobs/{queued['id']}")
    check(status == 200 and cancelled["state"] == "cancelled", f"cancel: HTTP {status} {cancelled}")
    status, gone = c.verdict(queued["id"])
    check(status == 409 and gone["state"] == "cancelled", f"a cancelled job's verdict: HTTP {status} {gone}")


def slow_clients(c):
    """Slow clients cannot stall the service (bounded_http.h): a request's reading ends at its deadline, and one
    address holds at most so many connections; the rest are answered 429 at once."""
    c.start_service(extra=["--request-read-s", "8", "--max-peer-connections", "8"])
    stop = threading.Event()

    # The slow clients come from an address of their own (the loopback answers all of 127/8): the harness's own
    # requests from 127.0.0.1 (start_service's wait for health) may still hold a connection when the burst comes,
    # and under load one did, so that 7 were held.
    slow_peer = "127.0.0.3"

    def connect():  # the request's first line at once: a connection that sent nothing would be idle, not slow
        sock = socket.create_connection(("127.0.0.1", c.service_port), source_address=(slow_peer, 0))
        sock.sendall(b"GET /v1/health HTTP/1.1\r\nHost: x\r\n")
        return sock

    def dribble(sock):  # then one header line a second, never the blank line that ends the headers
        try:
            while not stop.is_set():
                time.sleep(1)
                sock.sendall(b"X-Slow: 1\r\n")
        except OSError:
            pass

    # More connections than the service has request threads (64), from one address, in a burst: the listen
    # queue holds them all (a queue of 5 dropped SYNs, so connections came seconds late and idled).
    start = time.monotonic()
    sockets = [connect() for _ in range(80)]
    connected = time.monotonic() - start
    check(connected < 2, f"80 connections took {connected:.1f} s to be made")
    threads = [threading.Thread(target=dribble, args=(s,), daemon=True) for s in sockets]
    for t in threads:
        t.start()
    # The refused ones have their answer within a second; the held ones nothing (their deadline is 8 s away).
    time.sleep(1)
    answered, _, _ = select.select(sockets, [], [], 0)
    refused = [(s, s.recv(4096)) for s in answered]
    held = [(s, None) for s in sockets if s not in answered]
    check(len(held) == 8, f"{len(held)} slow connections held, expected 8 (--max-peer-connections)")
    check(all(first.startswith(b"HTTP/1.1 429") for _, first in refused),
          f"the others answered 429: {[first[:40] for _, first in refused][:3]}")
    # Another client is served at once, while the slow ones hold theirs.
    start = time.monotonic()
    other = http.client.HTTPConnection("127.0.0.1", c.service_port, timeout=5, source_address=("127.0.0.2", 0))
    other.request("GET", "/v1/health")
    answer = other.getresponse()
    took = time.monotonic() - start
    check(answer.status == 200 and took < 2, f"health from another address: HTTP {answer.status} in {took:.1f} s")
    log(f"80 slow connections, made in {connected * 1000:.0f} ms: 8 held, 72 answered 429; another client "
        f"served in {took * 1000:.0f} ms")
    # The held ones end at their deadline (8 s from their first byte), though they still send.
    deadline = time.monotonic() + 12
    for s, _ in held:
        s.settimeout(max(0.1, deadline - time.monotonic()))
        try:
            while s.recv(4096):
                pass
        except socket.timeout:
            fail("a slow connection outlived its request's deadline")
        except OSError:
            pass  # reset: closed as well
    log(f"the held connections were closed {time.monotonic() - start:.1f} s after the check began")
    stop.set()
    for s in sockets:
        s.close()
    again = http.client.HTTPConnection("127.0.0.1", c.service_port, timeout=5, source_address=(slow_peer, 0))
    again.request("GET", "/v1/health")
    status = again.getresponse().status
    check(status == 200, f"health from the slow clients' address once they are gone: HTTP {status}")


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    ptxbench, root, scenario = sys.argv[1:]
    scenarios = {
        "kill-worker": kill_worker,
        "dead-letter": dead_letter,
        "restart-redis": restart_redis,
        "restart-service": lambda c: restart_service(c, os.path.join(root, "tests", "data", "solutions")),
        "concurrent": concurrent_submissions,
        "slow-clients": slow_clients,
        "wedged-gpu": wedged_gpu,
        "bad-input": bad_input,
        "no-worker": lambda c: no_worker(c, root),
    }
    if scenario not in scenarios:
        print(f"unknown scenario {scenario}; one of {', '.join(scenarios)}")
        return 2
    started = time.monotonic()
    with Cluster(ptxbench, root) as cluster:
        scenarios[scenario](cluster)
    print(f"{scenario}: passed in {time.monotonic() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
