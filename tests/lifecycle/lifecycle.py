#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""tests/lifecycle: random lifecycles of devwld against real workloads and a model.

    lifecycle.py --build DIR --agent AGENT [--seeds N | --seed S] [--ops N] [--budget SECS]
                 [--minimize SECS] [--verbose] [--keep]

Each seed is a sequence of operations (containers started on a shared node or a node of
their own, in kernel or authoritative mode, by devwl-run --connect or as runc containers,
and gone; attach and detach, by number and by
selector, cdi: and loop:; devwlctl allow, deny, mkdir, rmdir; selector bindings,
subsystem:, cdi: and loop:, and unbind; a loop file bound again under another number;
a new process in a live workload; reload; reset; planned restart; SIGKILL of the worker)
applied to a fresh devwld and to the model (model.py). After every operation each live
workload opens every device of the universe, and every path attached to it, for reading
and for writing: the kernel's answers must be the model's. devwlctl containers, containers --devices and list
and selectors must agree with the model too, attached nodes exist in the workload while
detached ones are gone, and after a restart or a crash the state file holds exactly the
model's state. A divergence is reported with the seed, the operation prefix and a
minimised reproducer (operations dropped while a replay from scratch still diverges),
and the run exits 1. Exit 77 where it cannot run (not root, no seccomp listener).
"""

import argparse
import json
import os
import random
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model as M  # noqa: E402

# runc, where it is installed: a share of the containers are runc's (Daemon.start_runc()).
RUNC = shutil.which("runc")

# The universe: every workload's /dev holds these nodes, made before devwl-run starts.
UNIVERSE = [("null", 3), ("zero", 5), ("full", 7), ("random", 8), ("urandom", 9)]
MINORS = [m for _, m in UNIVERSE]
ACCESSES = ["r", "rw", "w"]

POLICY = """{ "version": 1,
  "nodes": [ { "path": "/containers", "rules": ["deny a", %s] } ],
  "containers": { "container_rules": [%s] } }
""" % (
    ", ".join('"allow %s %s"' % (M.key_text(m), a) for m, a in M.FILE_RULES),
    ", ".join('"%s %s %s"' % (v, M.key_text(m), a) for v, m, a in M.CONTAINER_RULES),
)


class Divergence(Exception):
    pass


class Skip(Exception):
    pass


class Disturbed(Exception):
    """Another process took a loop file of the run away (a test that detaches loop devices
    by number: one it gave up may be ours by then): no verdict on devwld."""


def ename(text):
    m = re.search(r"\b(E[A-Z0-9]{2,})\b", text)
    return m.group(1) if m else "error"


# ---- operations ------------------------------------------------------------------------
# An operation is a tuple; its text (describe) is what reports print and --replay reads.


def dev_text(dev):
    """attach's DEVICE: c 1:N, b 7:@L1 (the number of L1's loop device when it runs), or a
    selector."""
    if isinstance(dev, int):
        return "c 1:%d" % dev
    if dev.startswith("b7:@"):
        return "b 7:" + dev[3:]
    return dev


def describe(op):
    k = op[0]
    if k == "start":
        return " ".join(op)
    if k == "attach":
        return "attach %s %s %s --access %s" % (op[1], dev_text(op[2]), op[4], op[3])
    if k in ("exit", "detach", "replug", "unplug", "plug", "exec"):
        return " ".join(op)
    if k in ("unbind-allow", "unbind-deny"):
        return "unbind %s %s %s %s" % (op[1], k[7:], op[2], op[3])
    if k in ("allow", "deny"):
        return "%s %s c 1:%d %s" % op
    if k in ("mkdir", "rmdir"):
        return "%s %s" % op
    if k == "deny-all":
        return "deny %s a" % op[1]
    if k in ("bind-allow", "bind-deny"):
        return "%s %s %s %s" % (k[5:], op[1], op[2], op[3])
    return k


def parse(line):
    w = line.split()
    if w[0] == "start":
        return tuple(w[:5])
    if w[0] == "attach" and w[2] == "c":
        return ("attach", w[1], int(w[3].split(":")[1]), w[6], w[4])
    if w[0] == "attach" and w[2] == "b":
        return ("attach", w[1], "b7:" + w[3].split(":", 1)[1], w[6], w[4])
    if w[0] == "attach":
        return ("attach", w[1], w[2], w[5], w[3])
    if w[0] in ("exit", "replug", "unplug", "plug", "exec"):
        return (w[0], w[1])
    if w[0] == "unbind":
        return ("unbind-" + w[2], w[1], w[3], w[4])
    if w[0] == "detach":
        return ("detach", w[1], w[2])
    if w[0] in ("allow", "deny") and w[2] in M.SELECTORS:
        return ("bind-" + w[0], w[1], w[2], w[3])
    if w[0] == "deny" and w[2] == "a":
        return ("deny-all", w[1])
    if w[0] in ("allow", "deny"):
        return (w[0], w[1], int(w[3].split(":")[1]), w[4])
    if w[0] in ("mkdir", "rmdir"):
        return (w[0], w[1])
    return (w[0],)


def node_path(kind, cid):
    """shared, own, or the node of container ID (of-ID: joining it, refused if its own)."""
    if kind.startswith("of-"):
        return "%s/%s" % (M.TOP, kind[3:])
    return M.SHARED if kind == "shared" else "%s/%s" % (M.TOP, cid)


def applicable(m, op):
    """Can op run on model m? (A minimised sequence may lack a container's start.)"""
    k = op[0]
    if k == "start":
        return op[1] not in m.containers
    if k in ("exit", "attach", "detach", "exec"):
        return op[1] in m.containers
    if k in ("replug", "unplug"):
        return m.loops[op[1]] is not None
    if k == "plug":
        return m.loops[op[1]] is None
    return True


def generate(rng, m, serial):
    """One operation for the model's state (deterministic for the seed)."""
    live = sorted(m.containers)
    atts = [(c, a.path) for c in live for a in m.containers[c].attached]
    nodes = sorted(p for p in m.h.nodes if p != M.TOP)
    choices = []
    if len(live) < 4:
        choices += ["start"] * 12
    if live:
        choices += ["exit"] * 5 + ["attach"] * 18 + ["attach-sel"] * 12 + ["exec"] * 3
    if atts:
        choices += ["detach"] * 10
    choices += ["allow"] * 9 + ["deny"] * 7 + ["mkdir"] * 4 + ["rmdir"] * 3
    choices += ["bind"] * 6 + ["deny-all"] * 2
    choices += ["reload"] * 5 + ["reset"] * 1 + ["restart"] * 4 + ["crash"] * 3
    choices += ["unbind"] * 4 + ["replug"] * 5 + ["unplug"] * 3
    k = rng.choice(choices)
    if k == "start":
        kinds = ["shared", "own"] * 5 + ["of-" + c for c in live]
        op = ("start", "c%d" % serial, rng.choice(kinds), rng.choice(["kernel", "authoritative"]))
        # One in five a runc container: the real runtime's path (its OCI state through
        # listenerPath, its cgroup, its /dev), the rest devwl-run's, which are cheap.
        return op + ("runc",) if RUNC and rng.random() < 0.2 else op
    if k == "exit":
        return ("exit", rng.choice(live))
    if k == "attach":
        minor = rng.choice(MINORS)
        path = "/dev/a%d" % minor if rng.random() < 0.8 else "/dev/b%d" % rng.choice(MINORS)
        return ("attach", rng.choice(live), minor, rng.choice(["r", "rw", "rw", "w"]), path)
    if k == "attach-sel":
        # By selector (followed by identity), or a loop file's device by its number now
        # (not followed).
        r = rng.random()
        dev = rng.choice(M.ATTACH_SELECTORS) if r < 0.7 else "b7:@" + rng.choice(M.LOOP_FILES)
        path = "/dev/s%d" % rng.randrange(4)
        return ("attach", rng.choice(live), dev, rng.choice(["r", "rw", "rw", "w"]), path)
    if k == "exec":
        return ("exec", rng.choice(live))
    if k in ("replug", "unplug"):
        # A file unplugged is plugged again instead.
        f = rng.choice(M.LOOP_FILES)
        return (k if m.loops[f] is not None else "plug", f)
    if k == "detach":
        if rng.random() < 0.1:
            return ("detach", rng.choice(live), "/dev/none")
        cid, path = rng.choice(atts)
        sel = [a.selector for a in m.containers[cid].attached if a.path == path][0]
        if sel and rng.random() < 0.5:
            return ("detach", cid, sel)
        return ("detach", cid, path)
    if k == "unbind":
        if m.bindings and rng.random() < 0.85:
            node, verb, sel, acc = rng.choice(m.bindings)
        else:
            node, verb, sel, acc = (rng.choice(nodes + [M.TOP]), rng.choice(["allow", "deny"]),
                                    rng.choice(sorted(M.SELECTORS)), rng.choice(ACCESSES))
        return ("unbind-" + verb, node, sel, acc)
    candidates = [M.SHARED, M.TOP + "/x", M.TOP + "/x/y", M.SHARED + "/x",
                  "%s/c%d" % (M.TOP, serial), M.TOP + "/z1"]
    r = rng.random()
    node = M.TOP if r < 0.3 else rng.choice(nodes) if nodes and r < 0.9 else rng.choice(candidates)
    if k in ("allow", "deny"):
        # 1:11 (kmsg) is of the selector's class and no workload's universe: allowed on
        # /containers, it lets an allow binding below it through.
        minor = 11 if node == M.TOP and k == "allow" and rng.random() < 0.3 else rng.choice(MINORS)
        return (k, node, minor, rng.choice(ACCESSES))
    if k == "bind":
        if node == M.TOP and rng.random() < 0.7:
            node = rng.choice(nodes + candidates) if nodes else rng.choice(candidates)
        return ("bind-" + rng.choice(["allow", "allow", "deny"]), node,
                rng.choice(sorted(M.SELECTORS)), rng.choice(ACCESSES))
    if k == "deny-all":
        return ("deny-all", rng.choice(nodes + candidates[-1:]))
    if k == "mkdir":
        return ("mkdir", rng.choice(candidates))
    if k == "rmdir":
        return ("rmdir", rng.choice(nodes + candidates[:2] + candidates[-1:]))
    return (k,)


def model_apply(m, op):
    k = op[0]
    if k == "start":
        return m.start(op[1], node_path(op[2], op[1]), op[3])
    if k == "exit":
        return m.exit(op[1])
    if k == "attach":
        return m.attach(op[1], op[2], op[3], op[4])
    if k == "detach":
        return m.detach(op[1], op[2])
    if k in ("allow", "deny"):
        return m.change(k, op[1], op[2], op[3])
    if k in ("mkdir", "rmdir", "deny-all"):
        return m.change(k, op[1], None, None)
    if k in ("bind-allow", "bind-deny", "unbind-allow", "unbind-deny"):
        return m.change(k, op[1], op[2], op[3])
    if k in ("replug", "plug"):  # generating: a new number (the driver's are real)
        return getattr(m, k)(op[1], max(m.last.values()) + 1)
    if k == "unplug":
        return m.unplug(op[1])
    if k == "reload":
        return m.reload()
    if k == "reset":
        return m.reload(replay=False)
    return None  # restart, crash, exec: everything stays


# ---- the real side ---------------------------------------------------------------------


class Workload:
    def __init__(self, cid, proc, sock):
        self.id, self.proc, self.sock = cid, proc, sock
        self.buf = b""
        self.pid = None  # the agent's, once asked
        self.root_pid = proc.pid  # a process in its mount namespace (/proc/PID/root)
        self.runc = False
        self.gone_paths = set()  # detached: must not exist

    def line(self, timeout):
        self.sock.settimeout(timeout)
        while b"\n" not in self.buf:
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                raise Divergence("workload %s: no answer in %d s (a call never answered?)"
                                 % (self.id, timeout))
            if not chunk:
                raise Divergence("workload %s: gone (exit %s)" % (self.id, self.proc.poll()))
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode()

    def ask(self, text, timeout=20):
        self.sock.sendall(text.encode() + b"\n")
        return self.line(timeout)


class Daemon:
    def __init__(self, args, tmp):
        self.args, self.t = args, tmp
        self.devwld = os.path.join(args.build, "supervisor", "devwld")
        self.devwlctl = os.path.join(args.build, "tools", "devwlctl")
        self.run = os.path.join(args.build, "tools", "devwl-run")
        self.workloads = {}
        self.log = open(os.path.join(tmp, "devwld.log"), "ab")
        with open(os.path.join(tmp, "policy.json"), "w") as f:
            f.write(POLICY)
        self.loops = {}  # loop file -> its loop device's number, None while unplugged
        for f in M.LOOP_FILES:
            with open(self.path(f), "wb") as out:
                out.truncate(1 << 20)
            self.loops[f] = self.losetup(f)
        self.last = dict(self.loops)  # the number each had last (b 7:@L1)
        os.mkdir(self.path("cdi"), 0o755)
        with open(self.path("cdi/devwl-test.json"), "w") as f:
            f.write(M.CDI_SPEC)
        self.proc = subprocess.Popen(
            [self.devwld, "--listen", self.path("listen.sock"), "--control",
             self.path("control.sock"), "--policy", self.path("policy.json"),
             "--cdi-dir", self.path("cdi"), "--no-audit"], stdout=self.log, stderr=self.log, start_new_session=True)
        for _ in range(1200):
            if os.path.exists(self.path("listen.sock")) and os.path.exists(self.path("control.sock")):
                return
            if self.proc.poll() is not None:
                raise Divergence("devwld exited at start: %s" % self.tail())
            time.sleep(0.05)
        raise Divergence("devwld not ready after 60 s")

    def path(self, name):
        return os.path.join(self.t, name)

    def real(self, text):
        """An operation's words as devwld gets them: loop:L1 is the file L1 here."""
        return text.replace("loop:L", "loop:%s/L" % self.t)

    def ours(self, text):
        return text.replace("%s/" % self.t, "")

    def losetup(self, f, number=None):
        """Bind loop file f to a loop device (/dev/loopNUMBER, or the first free one);
        its number."""
        argv = ["losetup", "--show"] + (["/dev/loop%d" % number] if number is not None
                                        else ["-f"]) + [self.path(f)]
        p = subprocess.run(argv, capture_output=True, text=True)
        if p.returncode:
            raise Skip("losetup %s: %s" % (f, p.stderr.strip()))
        return int(re.search(r"(\d+)$", p.stdout.strip()).group(1))

    def disturbed(self):
        """Why the host no longer binds the loop files as the run did, or None."""
        for f, number in self.loops.items():
            if number is None:
                continue
            try:
                with open("/sys/block/loop%d/loop/backing_file" % number) as b:
                    back = b.read().strip()
            except OSError:
                back = None
            if back != self.path(f):
                return "loop file %s no longer on /dev/loop%d (%s) by the driver's doing" % (
                    f, number, back or "detached")
        return None

    def detach_ours(self, number):
        """losetup -d of loop device NUMBER while a file of this run backs it: a number
        given up is anyone's (another test's loop device by now)."""
        try:
            with open("/sys/block/loop%d/loop/backing_file" % number) as b:
                back = b.read().strip()
        except OSError:
            return
        if back.startswith(self.t + "/"):
            subprocess.run(["losetup", "-d", "/dev/loop%d" % number], capture_output=True)

    def replug(self, f):
        """losetup -d of f's loop device, then f bound again to another number (the first
        free one, taken before the old one is free): the number it has now."""
        old = self.loops[f]
        for _ in range(20):
            free = subprocess.run(["losetup", "-f"], capture_output=True, text=True).stdout.strip()
            number = int(re.search(r"(\d+)$", free).group(1))
            if old is not None:
                self.detach_ours(old)
            try:
                self.loops[f] = self.last[f] = self.losetup(f, number)
                return self.loops[f]
            except Skip:
                old = None  # someone else took it: the next free one
                p = subprocess.run(["losetup", "--show", "-f", self.path(f)],
                                   capture_output=True, text=True)
                if p.returncode == 0:
                    self.loops[f] = int(re.search(r"(\d+)$", p.stdout.strip()).group(1))
                    self.last[f] = self.loops[f]
                    return self.loops[f]
        raise Divergence("replug %s: no loop device" % f)

    def unplug(self, f):
        self.detach_ours(self.loops[f])
        self.loops[f] = None

    def plug(self, f):
        self.loops[f] = self.last[f] = self.losetup(f)
        return self.loops[f]

    def tail(self, n=30):
        try:
            with open(self.path("devwld.log"), errors="replace") as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return ""

    def ctl(self, *argv, timeout=60):
        p = subprocess.run([self.devwlctl, "--socket", self.path("control.sock")] + list(argv),
                           capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr

    def batch(self, commands, timeout=60):
        """Listing commands on one connection to the control socket (devwlctl(1), BATCH
        PROTOCOL): per command (None, its lines) or (the error line, None)."""
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(timeout)
        try:
            s.connect(self.path("control.sock"))
            s.sendall("".join(c + "\n" for c in commands).encode())
            s.shutdown(socket.SHUT_WR)
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        except OSError as e:
            raise Divergence("the control socket: %s" % e)
        finally:
            s.close()
        lines = data.decode(errors="replace").split("\n")
        answers, cur = [], []
        for line in lines:
            if len(answers) == len(commands):
                break
            if not cur and line.startswith("error "):
                answers.append((line, None))
            elif line == ".":
                answers.append((None, cur))
                cur = []
            else:
                cur.append(line)
        if len(answers) != len(commands):
            raise Divergence("control socket: %d answers to %d commands" % (len(answers), len(commands)))
        return answers

    def containers(self):
        rc, out, err = self.ctl("containers")
        if rc:
            raise Divergence("devwlctl containers: %s" % err.strip())
        got = {}
        for line in out.splitlines():
            w = line.split()
            if len(w) >= 5:
                got[w[0]] = (w[1], w[4])
        return got

    def stat_of(self, key):
        rc, out, _ = self.ctl("stats")
        for line in out.splitlines():
            w = line.split()
            if rc == 0 and len(w) == 2 and w[0] == key:
                return w[1]
        return None

    def start(self, cid, node, mode):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        nodes = ",".join("%s:1:%d" % (n, m) for n, m in UNIVERSE)
        fd = theirs.fileno()
        argv = [self.args.agent, "setup", nodes, "--", self.run, "--connect",
                self.path("listen.sock"), "--id", cid, "--node", node, "--mode=" + mode, "--",
                self.args.agent, "serve", str(fd)]
        err = open(self.path(cid + ".err"), "wb")
        proc = subprocess.Popen(argv, pass_fds=[fd], stdin=subprocess.DEVNULL, stdout=err,
                                stderr=err)
        theirs.close()
        return self.served(Workload(cid, proc, ours))

    def served(self, w):
        """Wait for w's agent to say ready and devwld to list it: None, or EBUSY when
        devwld refused it."""
        cid = w.id
        self.workloads[cid] = w
        try:
            ready = w.line(60)
        except Divergence as e:
            # Refused (another container's own node): not served, its calls fail ENOSYS
            # and it never gets as far as saying ready; devwld does not list it.
            del self.workloads[cid]
            if w.proc.wait(timeout=20) != 0 and cid not in self.containers():
                self.runc_delete(w)
                return "EBUSY"
            raise Divergence("%s: %s" % (e, open(self.path(cid + ".err"), errors="replace").read()))
        if ready != "ready":
            raise Divergence("workload %s said %r" % (cid, ready))
        if w.runc:
            w.pid = w.root_pid = self.runc_pid(cid)
        # Served: its loader's opens were answered (authoritative), or devwld answered
        # devwl-run (kernel). Listed once its connection is taken on.
        refused = re.compile(r"container %s: node \S+ is container \S+'s own: refused" % re.escape(cid))
        for _ in range(400):
            if cid in self.containers():
                return None
            if refused.search(self.tail(200)):
                return self.refused(w)
            time.sleep(0.025)
        raise Divergence("container %s never listed by devwlctl containers" % cid)

    def start_runc(self, cid, node, mode):
        """A runc container on node: its bundle's seccomp profile notifies devwld at
        listenerPath with node (unless the template gives it) and mode as metadata, as the
        OCI guide's does; runc runs
        the agent, whose socket it hands over as fd 3 (--preserve-fds). /usr and the
        agent's directory are bound read-only into an empty root."""
        bundle = self.path("bundle-" + cid)
        rootfs = os.path.join(bundle, "rootfs")
        os.makedirs(rootfs)
        for link, to in (("bin", "usr/bin"), ("lib", "usr/lib"), ("lib64", "usr/lib64"),
                         ("sbin", "usr/sbin")):
            os.symlink(to, os.path.join(rootfs, link))
        subprocess.run([RUNC, "spec", "--bundle", bundle], check=True)
        with open(os.path.join(bundle, "config.json")) as f:
            spec = json.load(f)
        agent_dir = os.path.dirname(self.args.agent)
        spec["root"] = {"path": rootfs, "readonly": True}
        spec["process"]["terminal"] = False
        spec["process"]["args"] = [self.args.agent, "serve", "3"]
        spec["mounts"] += [{"destination": d, "type": "bind", "source": d,
                            "options": ["rbind", "ro"]} for d in ("/usr", agent_dir)]
        # runc's /dev holds the universe already: its default nodes, mode 0666. (Named in
        # linux.devices instead they would lose runc's cgroup rule, and runc's own open of
        # /dev/null, before devwld has the container, would fail.)
        linux = spec["linux"]
        linux["cgroupsPath"] = "/devwl-lifecycle-%s-%s" % (os.path.basename(self.t), cid)
        linux["seccomp"] = {
            "defaultAction": "SCMP_ACT_ALLOW", "listenerPath": self.path("listen.sock"),
            # A node of its own comes from devwld's default template, /containers/{id}: the
            # runc container names none, as most containers do not.
            "listenerMetadata": ("mode=%s" % mode if node == "%s/%s" % (M.TOP, cid)
                                 else "node=%s mode=%s" % (node, mode)),
            "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"],
            "syscalls": [{"names": ["mknod", "mknodat", "open", "openat", "openat2", "creat",
                                    "open_by_handle_at"], "action": "SCMP_ACT_NOTIFY"}]}
        with open(os.path.join(bundle, "config.json"), "w") as f:
            json.dump(spec, f)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        fd = theirs.fileno()
        err = open(self.path(cid + ".err"), "wb")
        proc = subprocess.Popen(
            [RUNC, "--root", self.path("runc"), "run", "--preserve-fds", "1", "--bundle", bundle,
             cid], preexec_fn=lambda: os.dup2(fd, 3), pass_fds=[3], stdin=subprocess.DEVNULL,
            stdout=err, stderr=err)
        theirs.close()
        w = Workload(cid, proc, ours)
        w.runc = True
        return self.served(w)

    def runc_pid(self, cid):
        p = subprocess.run([RUNC, "--root", self.path("runc"), "state", cid],
                           capture_output=True, text=True, timeout=30)
        if p.returncode:
            raise Divergence("runc state %s: %s" % (cid, p.stderr.strip()))
        return int(json.loads(p.stdout)["pid"])

    def runc_delete(self, w):
        """A runc container is gone once runc deletes it (its cgroup with it)."""
        if w.runc:
            subprocess.run([RUNC, "--root", self.path("runc"), "delete", "-f", w.id],
                           capture_output=True, timeout=60)

    def refused(self, w):
        """A kernel-mode workload devwld refused runs all the same (devwl-run cannot tell a
        refusal from the close that says it was taken on); its device cgroup, never
        programmed, must refuse every device."""
        paths = ["/dev/%s" % n for n, _ in UNIVERSE]
        answer = w.ask("probe " + " ".join(paths)).split()
        del self.workloads[w.id]
        w.sock.sendall(b"exit\n")
        w.proc.wait(timeout=20)
        w.sock.close()
        self.runc_delete(w)
        opened = [answer[i] for i in range(0, len(answer), 3)
                  if answer[i + 1] == "ok" or answer[i + 2] == "ok"]
        if opened:
            raise Divergence("container %s, refused by devwld, opens %s" % (w.id, " ".join(opened)))
        return "EBUSY"

    def exit(self, cid):
        w = self.workloads.pop(cid)
        try:
            w.sock.sendall(b"exit\n")
        except OSError:
            pass
        try:
            w.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            w.proc.kill()
            w.proc.wait()
            raise Divergence("workload %s did not exit" % cid)
        w.sock.close()
        self.runc_delete(w)
        for _ in range(400):
            if cid not in self.containers():
                return
            time.sleep(0.025)
        raise Divergence("container %s still listed 10 s after its process exited" % cid)

    def restart(self):
        g = self.stat_of("generation")
        rc, _, err = self.ctl("restart")
        if rc:
            raise Divergence("devwlctl restart: %s" % err.strip())
        if self.stat_of("generation") == g:
            raise Divergence("devwlctl restart returned with generation still %s" % g)

    def crash(self):
        g = self.stat_of("generation")
        pid = int(self.stat_of("pid"))
        os.kill(pid, signal.SIGKILL)
        for _ in range(1200):
            now = self.stat_of("generation")
            if now is not None and now != g:
                return
            time.sleep(0.01)
        raise Divergence("no new worker 12 s after SIGKILL of %d" % pid)

    def close(self):
        for w in list(self.workloads.values()):
            try:
                w.proc.kill()
                w.proc.wait(timeout=10)
            except Exception:
                pass
            w.sock.close()
            try:
                self.runc_delete(w)  # -f: killed first
            except Exception:
                pass
        self.workloads = {}
        for f, number in self.loops.items():
            if number is not None:
                self.detach_ours(number)
        self.loops = {}
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.log.close()


def real_apply(d, op):
    """op on devwld; returns None or an errno name."""
    k = op[0]
    if k == "start":
        if len(op) > 4:
            return d.start_runc(op[1], node_path(op[2], op[1]), op[3])
        return d.start(op[1], node_path(op[2], op[1]), op[3])
    if k == "exit":
        d.exit(op[1])
        return None
    if k == "restart":
        d.restart()
        return None
    if k == "crash":
        d.crash()
        return None
    if k == "exec":
        return None  # what it shows is checked after the step (check_exec)
    if k == "attach":
        dev = op[2]
        if isinstance(dev, str) and dev.startswith("b7:@"):
            dev = "b 7:%d" % d.last[dev[4:]]
        argv = ["attach", op[1], d.real(dev_text(dev)), op[4], "--access", op[3]]
    elif k == "detach":
        argv = ["detach", op[1], d.real(op[2])]
    elif k in ("unbind-allow", "unbind-deny"):
        argv = ["unbind", op[1], k[7:], d.real(op[2]), op[3]]
    elif k in ("allow", "deny"):
        argv = [k, op[1], "c 1:%d %s" % (op[2], op[3])]
    elif k in ("mkdir", "rmdir"):
        argv = [k, op[1]]
    elif k == "deny-all":
        argv = ["deny", op[1], "a"]
    elif k in ("bind-allow", "bind-deny"):
        argv = [k[5:], op[1], "%s %s" % (d.real(op[2]), op[3])]
    else:
        argv = [k]
    rc, out, err = d.ctl(*argv)
    return ename(err) if rc else None


def rule_key(text):
    """The model's key and access of a rule "c 1:N ACC" / "b 7:N|* ACC", or None."""
    g = re.fullmatch(r"(c 1|b 7):(\d+|\*) ([rwm]+)", text.strip())
    if not g or (g.group(1) == "c 1" and g.group(2) == "*"):
        return None
    key = int(g.group(2)) if g.group(1) == "c 1" else "b7:" + g.group(2)
    return key, M.norm(g.group(3))


def parse_list(text):
    got = {}
    for line in text.splitlines():
        r = rule_key(line)
        if not r:
            got.setdefault("other", []).append(line.strip())
            continue
        got[r[0]] = r[1]
    return got


def verdict(answer, key, allowed, m):
    """Does an open's answer agree with what the node allows? A loop device no file of
    the run is bound to (an attachment by number after a replug) opens ENXIO where it
    is allowed."""
    if not allowed:
        return answer == "EPERM"
    ours = {"b7:%d" % n for n in m.loops.values() if n is not None}
    return answer == "ok" or (M.is_block(key) and key not in ours and answer == "ENXIO")


def compare_probe(what, c, m, paths, key_of, answer):
    if len(answer) != 3 * len(paths):
        raise Divergence("container %s: %s answered %r" % (c.id, what, answer))
    for i, p in enumerate(paths):
        acc = m.h.access(c.node, key_of[p])
        rd, wr = answer[3 * i + 1], answer[3 * i + 2]
        if not verdict(rd, key_of[p], "r" in acc, m) or not verdict(wr, key_of[p], "w" in acc, m):
            return (p, rd, wr, acc)
    return None


def probe_set(c):
    """The paths a workload of c probes and the device each is: the universe, and every
    attached device that is there (not waiting for its device)."""
    paths = ["/dev/%s" % n for n, _ in UNIVERSE] + [a.path for a in c.attached if not a.absent]
    key_of = {"/dev/%s" % n: mi for n, mi in UNIVERSE}
    for a in c.attached:
        key_of[a.path] = a.minor
    return paths, key_of


def cgroup_procs(pid):
    """The cgroup.procs files of pid's device cgroups (v1 devices, and cgroup2), as this
    process sees the hierarchies."""
    mounts = {}
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, right = line.split(" - ", 1)
            fs = right.split()
            if fs[0] == "cgroup2":
                mounts["0"] = left.split()[4]
            elif fs[0] == "cgroup" and "devices" in fs[2].split(","):
                mounts["devices"] = left.split()[4]
    out = []
    with open("/proc/%d/cgroup" % pid) as f:
        for line in f:
            hid, ctrls, path = line.rstrip("\n").split(":", 2)
            key = "0" if hid == "0" else "devices" if "devices" in ctrls.split(",") else None
            if key in mounts:
                out.append(os.path.join(mounts[key], path.lstrip("/"), "cgroup.procs"))
    return out


def check_exec(args, d, m, cid):
    """exec: a new process in the live workload must open what the workload opens. One
    started by the workload (fork and exec: its seccomp filter, cgroup and namespaces),
    and one that joins its mount namespace and device cgroups from outside (as runc exec
    does, but with no seccomp filter: the kernel alone decides, and a root runtime's
    workload has its device cgroup programmed in either mode, devwld(8) KERNEL MODE)."""
    c = m.containers[cid]
    w = d.workloads[cid]
    paths, key_of = probe_set(c)
    bad = compare_probe("exec probe", c, m, paths, key_of, w.ask("exec probe " + " ".join(paths)).split())
    how = "a process it started"
    if not bad:
        if w.pid is None:
            w.pid = int(w.ask("pid"))
        procs = cgroup_procs(w.pid)

        def join():
            for f in procs:
                with open(f, "w") as out:
                    out.write("0")
        p = subprocess.run(["nsenter", "-t", str(w.pid), "-m", "--", args.agent, "once"] + paths,
                           capture_output=True, text=True, preexec_fn=join, timeout=30)
        if p.returncode:
            raise Divergence("container %s: nsenter into it: %s" % (cid, p.stderr.strip()))
        how = "a process that joined its namespace and cgroups (%s)" % ", ".join(procs)
        bad = compare_probe("nsenter probe", c, m, paths, key_of, p.stdout.split())
    if bad:
        p, rd, wr, acc = bad
        raise Divergence("container %s (%s, node %s): %s: %s (%s) opens read %s write %s;"
                         " the model's access %r" % (cid, c.mode, c.node, how, p,
                                                     M.key_text(key_of[p]), rd, wr, acc))


def check(args, d, m, seen_nodes):
    """Every comparison after a step; raises Divergence saying what each side said."""
    # The kernel first: what each workload can open (the ground truth), then what devwld
    # says.
    for c in m.containers.values():
        w = d.workloads[c.id]
        paths, minor_of = probe_set(c)
        for a in c.attached:
            where = "/proc/%d/root%s" % (w.root_pid, a.path)
            if a.absent:
                # Waiting for its device (or refused its new numbers): no node there.
                if os.path.lexists(where):
                    raise Divergence("container %s: %s (%s, waiting) still exists in the workload"
                                     % (c.id, a.path, a.selector))
                continue
            st = None
            try:
                st = os.stat(where)
            except OSError as e:
                raise Divergence("container %s: attached %s missing in the workload: %s"
                                 % (c.id, a.path, e.strerror))
            blk = M.is_block(a.minor)
            want = (7, int(a.minor[3:])) if blk else (1, a.minor)
            if (not (stat.S_ISBLK if blk else stat.S_ISCHR)(st.st_mode)
                    or (os.major(st.st_rdev), os.minor(st.st_rdev)) != want):
                raise Divergence("container %s: %s is not %s (%s)"
                                 % (c.id, a.path, M.key_text(a.minor), a.selector or "by number"))
        for p in sorted(w.gone_paths - {a.path for a in c.attached}):
            if os.path.lexists("/proc/%d/root%s" % (w.root_pid, p)):
                raise Divergence("container %s: detached %s still exists in the workload" % (c.id, p))
        answer = w.ask("probe " + " ".join(paths)).split()
        bad = compare_probe("probe", c, m, paths, minor_of, answer)
        if bad:
            p, rd, wr, acc = bad
            rc, out, _ = d.ctl("list", c.node)
            raise Divergence(
                "container %s (%s, node %s): %s (%s): the kernel opens read %s write %s;"
                " the model's access %r; devwlctl list %s: %s"
                % (c.id, c.mode, c.node, p, M.key_text(minor_of[p]), rd, wr, acc,
                   c.node, out.strip().replace("\n", "|") if rc == 0 else "(error)"))
    # devwlctl containers: the same containers, each on the model's node, in its mode.
    got = d.containers()
    want = {c.id: (c.node, c.mode) for c in m.containers.values()}
    if set(got) != set(want):
        raise Divergence("devwlctl containers lists %s, the model %s" % (sorted(got), sorted(want)))
    for cid, (node, mode) in want.items():
        gnode, gmode = got[cid]
        if gnode != node:
            raise Divergence("container %s: devwld says node %s, the model %s" % (cid, gnode, node))
        # A root runtime's workload has its device cgroup programmed in either mode
        # (devwld(8) KERNEL MODE): only a kernel-mode one that is not is wrong, or one
        # programmed in the other version than this view of the host has.
        if mode == "kernel" and gmode != args.kernel_mode:
            raise Divergence("container %s: devwld says mode %s, asked %s (%s here)"
                             % (cid, gmode, mode, args.kernel_mode))
    # devwlctl containers --devices: the attachments, lapsed ones marked.
    rc, out, err = d.ctl("containers", "--devices")
    gatt = set()
    for line in d.ours(out).splitlines():
        w = line.split()
        if len(w) >= 5:
            # ID TYPE NUMBERS ACCESS PATH [(lapsed)] [(waiting)] OPEN-BY [SELECTOR]
            rest = w[5:]
            flags = []
            while rest and rest[0].startswith("("):
                flags.append(rest.pop(0))
            sel = " ".join(rest[1:]) or None
            gatt.add((w[0], w[1] + " " + w[2], w[3], w[4], "(lapsed)" in flags,
                      "(waiting)" in flags, sel))
    watt = {(c.id, "- -" if a.absent else M.key_text(a.minor), a.access, a.path, a.lapsed,
             a.absent, a.selector)
            for c in m.containers.values() for a in c.attached}
    if gatt != watt:
        raise Divergence("devwlctl containers --devices: devwld %s, the model %s"
                         % (sorted(gatt), sorted(watt)))
    # devwlctl selectors (the model's bindings, in order, each naming what the selector
    # names on this host) and the lists, on one connection: a devwlctl per node costs
    # seconds a step once a long sequence has made many nodes.
    seen_nodes |= set(m.h.nodes)
    paths = sorted(seen_nodes)
    answers = d.batch(["selectors"] + ["list " + p for p in paths])
    err, out = answers[0]
    if err:
        raise Divergence("devwlctl selectors: %s" % err)
    gsel = []
    for line in out:
        g = re.fullmatch(r"(\S+) (allow|deny) (.*?) \[(\w+)\]: (.*)", d.ours(line).strip())
        if not g:
            raise Divergence("devwlctl selectors: cannot read %r" % line)
        if "reload-keeps-rmdir-binding" in m.known and g.group(1) in m.stale:
            continue
        gsel.append(g.groups())
    wsel = [(node, verb, "%s %s" % (sel, acc), "devwlctl",
             ", ".join("%s %s" % (M.key_text(mi), acc) for mi in M.SELECTORS[sel]) or "-")
            for node, verb, sel, acc in m.bindings
            if not ("reload-keeps-rmdir-binding" in m.known and node in m.stale)]
    if gsel != wsel:
        raise Divergence("devwlctl selectors: devwld %s, the model %s"
                         % (["%s %s %s [%s]" % g[:4] for g in gsel],
                            ["%s %s %s [%s]" % w[:4] for w in wsel]))
    # devwlctl list of every node the model has, and none of those it has not.
    if args.no_lists:
        return
    for path, (err, out) in zip(paths, answers[1:]):
        if path not in m.h.nodes:
            if not err:
                raise Divergence("node %s: devwld lists %r, the model has no such node"
                                 % (path, "|".join(out)))
            continue
        if err:
            raise Divergence("node %s: devwld: %s; the model: %s" % (path, err, m.h.nodes[path]))
        gl = parse_list("\n".join(out))
        if gl != m.h.nodes[path]:
            raise Divergence("node %s: devwld lists %s, the model %s" % (path, gl, m.h.nodes[path]))


def rules_of(node, nodes):
    """A hierarchy node of the state file (a policy document: a copy of its parent, then
    its rules) as minor -> access."""
    up = M.parent_of(node["path"])
    got = dict(nodes.get(up, {})) if up != M.ROOT else {"other": ["allow a"]}
    for r in node.get("rules", []):
        verb, _, rule = r.partition(" ")
        g = rule_key(rule) if verb in ("allow", "deny") else None
        if r == "deny a":
            got = {}
        elif g and verb == "allow":
            minor = g[0]
            got[minor] = M.norm(got.get(minor, "") + g[1])
        elif g:
            minor = g[0]
            left = M.norm("".join(c for c in got.get(minor, "") if c not in g[1]))
            if left:
                got[minor] = left
            else:
                got.pop(minor, None)
        else:
            got.setdefault("other", []).append(r)
    return got


def check_state(d, m):
    """After a planned restart or a crash: the state file the new worker wrote before it
    served (read back from the one the old worker left) holds exactly the model's state:
    its nodes and nothing more (a node removed is not resurrected), the nodes made on
    demand, the bindings, every container with every attachment."""
    import json
    try:
        with open(d.path("state.json")) as f:
            st = json.load(f)
    except (OSError, ValueError) as e:
        raise Divergence("the state file after a restart: %s" % e)
    nodes = {}
    for n in st["hierarchy"]["nodes"]:
        nodes[n["path"]] = rules_of(n, nodes)
    nodes.pop(M.ROOT, None)
    if set(nodes) != set(m.h.nodes):
        raise Divergence("state file: nodes %s, the model %s" % (sorted(nodes), sorted(m.h.nodes)))
    for path, rules in sorted(nodes.items()):
        if rules != m.h.nodes[path]:
            raise Divergence("state file: node %s holds %s, the model %s" % (path, rules, m.h.nodes[path]))
    if set(st.get("ondemand", [])) != m.ondemand:
        raise Divergence("state file: made on demand %s, the model %s"
                         % (sorted(st.get("ondemand", [])), sorted(m.ondemand)))
    look_past = m.stale if "reload-keeps-rmdir-binding" in m.known else set()
    gb = [(b["node"], "allow" if b["allow"] else "deny", d.ours(b["selector"]))
          for b in st.get("bindings", []) if b["node"] not in look_past]
    wb = [(node, verb, "%s %s" % (sel, acc)) for node, verb, sel, acc in m.bindings
          if node not in look_past]
    if gb != wb:
        raise Divergence("state file: bindings %s, the model %s" % (gb, wb))
    gc = {c["id"]: (c["node"], sorted(("%s %d:%d" % (a["type"], a["major"], a["minor"]),
                                       a["path"], bool(a.get("lapsed")), bool(a.get("absent")),
                                       d.ours(a.get("selector", "-")))
                                      for a in c.get("attached", [])))
          for c in st.get("containers", [])}
    wc = {c.id: (c.node, sorted((M.key_text(a.minor), a.path, a.lapsed, a.absent,
                                 a.selector or "-") for a in c.attached))
          for c in m.containers.values()}
    if gc != wc:
        raise Divergence("state file: containers %s, the model %s" % (gc, wc))


def run_ops(args, ops, verbose=False):
    """ops on a fresh devwld and a fresh model: None, or (index, what) of the first
    divergence."""
    tmp = tempfile.mkdtemp(prefix="devwl-life.")
    os.chmod(tmp, 0o755)
    m = M.Model(args.known_set)
    d = None
    i = -1
    try:
        d = Daemon(args, tmp)
        for f, number in d.loops.items():
            m.set_loop(f, number)
        seen = set()
        for i, op in enumerate(ops):
            if not applicable(m, op):
                continue
            if op[0] in ("replug", "plug"):
                # The host first: the model is told the number the file has now.
                got = None
                want = getattr(m, op[0])(op[1], getattr(d, op[0])(op[1]))
            elif op[0] == "unplug":
                d.unplug(op[1])
                got = want = m.unplug(op[1])
            else:
                if op[0] == "detach" and op[1] in d.workloads:
                    c = m.containers[op[1]]
                    d.workloads[op[1]].gone_paths |= {a.path for a in c.attached
                                                      if op[2] in (a.path, a.selector)}
                want = model_apply(m, op)
                got = real_apply(d, op)
            if verbose:
                print("  %3d %-50s model %-7s devwld %s" % (i, describe(op), want or "ok", got or "ok"))
            if (want is None) != (got is None) or (want and got != want and got != "error"):
                raise Divergence("%s: devwld answered %s, the model %s" % (describe(op), got or "ok", want or "ok"))
            if op[0] == "start" and want:
                continue
            if op[0] in ("replug", "unplug", "plug"):
                # devwld follows the uevents as they come: settled within seconds.
                until = time.time() + 15
                while True:
                    try:
                        check(args, d, m, seen)
                        break
                    except Divergence:
                        if time.time() > until:
                            raise
                        time.sleep(0.2)
            else:
                check(args, d, m, seen)
            if op[0] == "exec":
                check_exec(args, d, m, op[1])
            if op[0] in ("restart", "crash"):
                check_state(d, m)
        return None
    except Divergence as e:
        why = d.disturbed() if d else None
        if why:
            raise Disturbed("after op %d: %s (instead: %s)" % (i, why, e))
        return (i, str(e))
    finally:
        if d:
            d.close()
        if args.keep:
            print("kept %s" % tmp, file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def gen_ops(args, seed, n):
    rng = random.Random(seed)
    m = M.Model(args.known_set)
    ops = []
    serial = 1
    while len(ops) < n:
        op = generate(rng, m, serial)
        if op[0] == "start":
            serial += 1
        model_apply(m, op)
        ops.append(op)
    return ops


def kind(what):
    """What a divergence is about, without its names and numbers: a minimised sequence
    must diverge the same way, not find another divergence on the way."""
    what = re.sub(r"\bc\d+\b", "C", what)
    what = re.sub(r"/\S*", "P", what)
    return " ".join(re.sub(r"\d+", "N", what).split()[:5])


def quiet_run(args, ops):
    """run_ops, a disturbed run (Disturbed) counting as no divergence."""
    try:
        return run_ops(args, ops)
    except Disturbed:
        return None


def minimise(args, ops, deadline, what):
    """Drop operations (halves, then chunks, then single ones) while a replay from scratch
    still diverges the same way."""
    want = kind(what)
    chunk = max(1, len(ops) // 2)
    while chunk >= 1 and time.time() < deadline:
        i = len(ops) - chunk
        while i >= 0 and time.time() < deadline:
            trial = ops[:i] + ops[i + chunk:]
            r = quiet_run(args, trial) if trial else None
            if r and kind(r[1]) == want:
                ops = trial
            i -= chunk
        chunk //= 2
    return applicable_only(ops)


def applicable_only(ops):
    """The operations that still apply once others were dropped (an exit whose start went)."""
    m = M.Model()
    kept = []
    for op in ops:
        if applicable(m, op):
            model_apply(m, op)
            kept.append(op)
    return kept


def report(args, seed, ops, where, what):
    prefix = ops[:where + 1]
    print("DIVERGENCE seed %s after op %d: %s" % (seed, where, what))
    print("reproduce: lifecycle.py --seed %s --ops %d" % (seed, where + 1))
    print("operation prefix:")
    for i, op in enumerate(prefix):
        print("  %3d %s" % (i, describe(op)))
    if args.minimize <= 0:
        return
    again = quiet_run(args, prefix)
    if not again:
        print("minimised: the prefix did not diverge again (timing?); not minimised")
        return
    small = minimise(args, prefix, time.time() + args.minimize, what)
    final = quiet_run(args, small)
    print("minimised reproducer (%d ops; lifecycle.py --replay FILE):" % len(small))
    for op in small:
        print("  " + describe(op))
    print("  -> %s" % (final[1] if final else "(did not diverge on the last replay)"))
    sys.stdout.flush()


def mem_class():
    """The minors of class mem on this host, as sysfs says (what subsystem:mem names)."""
    minors = []
    for name in os.listdir("/sys/class/mem"):
        try:
            with open("/sys/class/mem/%s/dev" % name) as f:
                major, minor = (int(x) for x in f.read().split(":"))
        except (OSError, ValueError):
            continue
        if major == 1:
            minors.append(minor)
    return sorted(minors)


def kernel_mode():
    """What a kernel-mode container is programmed as here: kernel-v1 where the v1 devices
    controller is mounted (a hybrid host), kernel-v2 where cgroup2 alone is
    (tests/v2only.sh)."""
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fs = line.split(" - ", 1)[1].split()
            if fs[0] == "cgroup" and "devices" in fs[2].split(","):
                return "kernel-v1"
    return "kernel-v2"


def can_run(args):
    if os.geteuid() != 0:
        raise Skip("needs root (mount namespaces, mknod, devwld's seccomp listeners)")
    for f in (os.path.join(args.build, "supervisor", "devwld"), args.agent):
        if not os.access(f, os.X_OK):
            raise Skip("%s not built" % f)
    if not os.path.exists("/proc/self/ns/mnt"):
        raise Skip("no mount namespaces")
    for tool in ("losetup", "nsenter"):
        if not shutil.which(tool):
            raise Skip("no %s (loop files, exec into a workload)" % tool)
    if subprocess.run(["losetup", "-f"], capture_output=True).returncode:
        raise Skip("no free loop device (losetup -f)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--agent", required=True)
    ap.add_argument("--seeds", type=int, default=0, help="seeds 1..N (default: until --budget)")
    ap.add_argument("--seed", type=int, help="this seed only")
    ap.add_argument("--ops", type=int, default=40)
    ap.add_argument("--budget", type=float, default=0, help="stop starting seeds after SECS")
    ap.add_argument("--minimize", type=float, default=300, help="seconds for minimising (0: none)")
    ap.add_argument("--replay", help="run the operations of FILE, one per line")
    ap.add_argument("--all", action="store_true", help="go on after a divergence")
    ap.add_argument("--known", default="", help="comma separated defects the model expects"
                    " (model.py KNOWN), to look past them")
    ap.add_argument("--no-lists", action="store_true",
                    help="compare no devwlctl list (what the kernel does only)")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directories")
    args = ap.parse_args()
    args.known_set = {k for k in args.known.split(",") if k}
    args.agent = os.path.abspath(args.agent)  # run in a workload's mount namespace too
    M.SELECTORS["subsystem:mem"] = mem_class()
    args.kernel_mode = kernel_mode()
    if args.known_set - M.KNOWN:
        ap.error("--known: expected some of %s" % ", ".join(sorted(M.KNOWN)))
    try:
        can_run(args)
    except Skip as e:
        print("SKIP: %s" % e)
        return 77
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    if args.replay:
        with open(args.replay) as f:
            ops = [parse(line.strip()) for line in f if line.strip() and not line.startswith("#")]
        try:
            r = run_ops(args, ops, verbose=True)
        except Disturbed as e:
            print("SKIP: disturbed %s" % e)
            return 77
        print("diverged after op %d: %s" % r if r else "no divergence")
        return 1 if r else 0
    seeds = [args.seed] if args.seed is not None else None
    print("# kernel-mode containers are %s here; subsystem:mem is c 1:%s"
          % (args.kernel_mode, ",".join(map(str, M.SELECTORS["subsystem:mem"]))))
    t0 = time.time()
    failed = 0
    disturbed = 0
    n = 0
    seed = 0
    while True:
        if seeds is not None:
            if n >= len(seeds):
                break
            seed = seeds[n]
        else:
            seed += 1
            if args.seeds and seed > args.seeds:
                break
            if not args.seeds and args.budget and time.time() - t0 > args.budget:
                break
            if not args.seeds and not args.budget and seed > 1:
                break
        n += 1
        ops = gen_ops(args, seed, args.ops)
        s0 = time.time()
        try:
            r = run_ops(args, ops, verbose=args.verbose)
        except Disturbed as e:
            disturbed += 1
            print("seed %d: %d ops, %.1f s, disturbed %s" % (seed, len(ops), time.time() - s0, e))
            sys.stdout.flush()
            continue
        print("seed %d: %d ops, %.1f s, %s" % (seed, len(ops), time.time() - s0,
                                                 "DIVERGED" if r else "agreed"))
        sys.stdout.flush()
        if r:
            failed += 1
            report(args, seed, ops, r[0], r[1])
            if not args.all:
                break
    print("%d seeds, %d diverged, %d disturbed, %.0f s" % (n, failed, disturbed, time.time() - t0))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
