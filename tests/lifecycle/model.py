# SPDX-License-Identifier: LGPL-2.1-or-later
"""The reference model of what devwld promises over a lifecycle (tests/lifecycle/README.md).

No devwld code: the hierarchy is the cgroup-v1 device controller's (doc/DESIGN.md section 2,
as tests/oracle proves libdevwl against the kernel), restricted to what the driver writes:
exact character rules "c 1:MINOR ACCESS" under /containers, which denies by default. A
node is a map minor -> access; a child starts as a copy of its parent; an allow the parent
does not cover is refused (EPERM); a deny also takes the access from every descendant.

On top of it, devwld(8): CONTAINERS (nodes made on demand with the policy's
container_rules, removed with their last container), HOT-PLUG (the own-node rule, the leaf
NODE/ID, detach revoking what the attach added), RELOAD (the file again, then devwlctl's
changes, then the containers' nodes and attachments), STATE and RESTART (a planned restart
and a crash of the worker change nothing).
"""

ROOT = "/"
TOP = "/containers"
SHARED = "/containers/shared"

# The policy file's /containers (besides "deny a") and the container_rules: every rule is
# (verb, minor, access). 1:7 and 1:9 w are the parent's but not a container node's, so
# an attach of them works on a container's own node and is refused on a leaf under a
# shared node devwld made (its container_rules bound the leaf).
FILE_RULES = [(3, "rwm"), (5, "rw"), (7, "rw"), (8, "r"), (9, "rw"), ("b7:*", "rw")]

# A device is a key: an int for c 1:MINOR, "b7:N" for the loop device b 7:N, "b7:*" the
# policy's "b 7:* rw" (so that a loop device can be attached whatever its number). The
# loop files are named L1 and L2 in operations; which loop device each is bound to now
# is the host's (Model.loops, set by the driver from losetup), not devwld's.
LOOP_FILES = ["L1", "L2"]
WILD = "b7:*"


def is_block(key):
    return isinstance(key, str) and key.startswith("b7:")


def key_text(key):
    """The kernel's words for a key: "c 1:5", "b 7:3", "b 7:*"."""
    return "b 7:%s" % key[3:] if is_block(key) else "c 1:%d" % key
# A container's node also loses the wildcard "b 7:*" (an exact deny of it, as the v1
# controller takes an exception away): a loop device is granted to it by the attach alone,
# on its own node, whose parent /containers allows it (a leaf below a shared node is
# refused), and a detach or a replug has that grant to take back.
CONTAINER_RULES = [("deny", 7, "rw"), ("deny", 9, "w"), ("deny", "b7:*", "rw")]

# The selectors bindings use, each with the minors (major 1) it names: class mem as sysfs
# says on this host (the driver reads it before a run), and the CDI devices of the spec
# the driver writes (CDI_SPEC), one and both.
SELECTORS = {"subsystem:mem": [3, 5, 7, 8, 9, 11], "cdi:devwl.test/mem=zero": [5],
             "cdi:devwl.test/mem=*": [3, 5], "loop:L1": None, "loop:L2": None}
# What an attach by selector may name (one device each): the CDI devices one by one, and
# the loop files.
ATTACH_SELECTORS = ["cdi:devwl.test/mem=zero", "cdi:devwl.test/mem=null", "loop:L1",
                    "loop:L2"]
CDI_ONE = {"cdi:devwl.test/mem=zero": 5, "cdi:devwl.test/mem=null": 3}
CDI_SPEC = """{ "cdiVersion": "0.6.0", "kind": "devwl.test/mem",
  "devices": [
    { "name": "null", "containerEdits": { "deviceNodes": [
      { "path": "/dev/null", "type": "c", "major": 1, "minor": 3, "permissions": "rwm" } ] } },
    { "name": "zero", "containerEdits": { "deviceNodes": [
      { "path": "/dev/zero", "type": "c", "major": 1, "minor": 5, "permissions": "rwm" } ] } } ] }
"""


def parent_of(path):
    head = path.rsplit("/", 1)[0]
    return head or ROOT


def norm(acc):
    return "".join(c for c in "rwm" if c in acc)


class Attachment:
    def __init__(self, minor, access, path, added, selector=None):
        self.minor, self.access, self.path, self.added = minor, access, path, added
        self.selector = selector  # the text attach was given, followed by identity
        self.lapsed = False
        self.absent = False  # by selector: its device went, or its new numbers refused


class Container:
    def __init__(self, cid, node, mode, own):
        self.id, self.node, self.mode, self.own = cid, node, mode, own
        self.attached = []

    def find(self, minor=None, path=None):
        for a in self.attached:
            if (path is not None and a.path == path) or \
                    (minor is not None and a.minor == minor and not a.absent):
                return a
        return None


class Hierarchy:
    """Nodes below the allow-all root: path -> {minor: access}."""

    def __init__(self):
        self.nodes = {TOP: {m: a for m, a in FILE_RULES}}

    def access(self, path, minor):
        """What a process on path may do with the device: every exception matching it."""
        if path == ROOT:
            return "rwm"
        got = self.nodes[path].get(minor, "")
        if is_block(minor):
            got = norm(got + self.nodes[path].get(WILD, ""))
        return got

    def covers(self, path, minor, acc):
        """Does one exception of path allow all of acc (the kernel's match_exception, what
        an allow below it needs)?"""
        if path == ROOT:
            return True
        keys = [minor, WILD] if is_block(minor) else [minor]
        return any(set(acc) <= set(self.nodes[path].get(k, "")) for k in keys)

    def children(self, path):
        return [p for p in self.nodes if parent_of(p) == path]

    def allow(self, path, minor, acc):
        if path not in self.nodes:
            return "ENOENT"
        if not self.covers(parent_of(path), minor, acc):
            return "EPERM"
        self.nodes[path][minor] = norm(self.nodes[path].get(minor, "") + acc)
        return None

    def deny(self, path, minor, acc):
        if path not in self.nodes:
            return "ENOENT"
        for p in self.nodes:
            if p == path or p.startswith(path + "/"):
                left = norm("".join(c for c in self.nodes[p].get(minor, "") if c not in acc))
                if left:
                    self.nodes[p][minor] = left
                else:
                    self.nodes[p].pop(minor, None)
        return None

    def deny_all(self, path):
        """deny a: every exception goes, which the kernel refuses while there are
        children (below /containers the behavior is deny already)."""
        if path not in self.nodes:
            return "ENOENT"
        if self.children(path):
            return "EINVAL"
        self.nodes[path] = {}
        return None

    def bind(self, path, allow, selector, acc):
        """A selector binding written: every device it names, an allow refused whole
        (nothing written) when the parent refuses one of them."""
        if path not in self.nodes:
            return "ENOENT"
        if allow:
            up = parent_of(path)
            if any(not self.covers(up, m, acc) for m in SELECTORS[selector]):
                return "EPERM"
            for m in SELECTORS[selector]:
                self.allow(path, m, acc)
        else:
            for m in SELECTORS[selector]:
                self.deny(path, m, acc)
        return None

    def unbind(self, path, allow, selector, acc, others):
        """devwlctl unbind (follow_unbind): what an allow binding named is denied on the
        node (and so below it); then the node's other bindings (others, in order) are
        written again, each rule on its own, one the parent refuses skipped."""
        if allow:
            for m in SELECTORS[selector]:
                self.deny(path, m, acc)
        up = parent_of(path)
        for verb, sel, a in others:
            for m in SELECTORS[sel]:
                if verb == "deny":
                    self.deny(path, m, a)
                elif self.covers(up, m, a):
                    self.allow(path, m, a)

    def mkdir(self, path):
        if path in self.nodes:
            return "EEXIST"
        if parent_of(path) not in self.nodes:
            return "ENOENT"
        self.nodes[path] = dict(self.nodes[parent_of(path)])
        return None


# Known defects the model can be told to expect (--known), so that a run looks past them
# for others: each is what devwld does today instead of what devwld(8) promises.
KNOWN = {
    # A reload makes a node again for a devwlctl change, or as the ancestor of a leaf,
    # without the container_rules when no container is on that very node (only the leaf's
    # container is, below it): the shared node then grants what container_rules deny.
    # Fixed (policy.c keeps the nodes made as containers' nodes, "ruled"); kept to run
    # against older builds, as are the others.
    "reload-container-rules",
    # A reload that finds a container's own node made already (for a devwlctl change to
    # it) counts it as not made for the container: the own node is lost, the next attach
    # gets a leaf below it, and another container may join it. Fixed (apply_text keeps a
    # node made again on demand the container's); kept to run against older builds.
    "reload-own-node",
    # A reload replays devwlctl's changes before it makes the containers' nodes again: a
    # devwlctl mkdir below a node devwld made for containers finds no parent and is
    # dropped, though the container and its node are still there. Fixed (replay_edits
    # makes the parent again).
    "reload-drops-mkdir",
    # A reload that replays a devwlctl change to a leaf (NODE/ID, an attach made it) makes
    # the leaf again before the containers' nodes, and its missing ancestors bare: the
    # shared node above it loses its container_rules, and the other containers on it get
    # what they deny (policy.c replay_edits -> remake: the rules only for the path itself,
    # never for the ancestors it makes). Fixed.
    "reload-edit-bare-parent",
    # A reset forgets a devwlctl mkdir of /containers/ID that ID and another container
    # were started on, and makes the node again for them: the container it is named for
    # counts it as its own although its neighbour is on it too, so its next attach grants
    # on the shared node and reaches the neighbour (policy.c apply_text: created_node
    # from "made by this reload", not "no other container on it"). Fixed.
    "reset-own-shared",
    # A reload's replay of a devwlctl rmdir does not take the node's selector bindings
    # along (policy.c replay_edits; policy_change does for the rmdir itself): devwlctl
    # selectors and the state file keep a binding of a node that is gone, one more each
    # reload, until a refresh of the bindings (a uevent, the start of following them)
    # drops it. Expected: such bindings of a node removed with bindings are overlooked.
    # Fixed (exec_change, which a replay runs too).
    "reload-keeps-rmdir-binding",
}


class Model:
    def __init__(self, known=()):
        self.known = set(known)
        self.h = Hierarchy()
        self.ondemand = set()  # made by devwld for containers (ancestors included)
        self.crules = set()  # of those, the ones made as a container's node: container_rules
        self.containers = {}
        self.edits = []  # devwlctl's changes, in order: (verb, node, minor, access)
        # devwlctl's selector bindings, in order: (node, "allow"|"deny", selector,
        # access); a binding's change is in edits too, as ("bind-allow"|"bind-deny", node,
        # selector, access)
        self.bindings = []
        self.stale = set()  # nodes removed with bindings (reload-keeps-rmdir-binding)
        self.ruled_now = set()
        self.loops = {}  # loop file (L1, L2) -> the number of its loop device now, or None
        self.last = {}  # loop file -> the number it had last (what b 7:@L1 names)
        for i, f in enumerate(LOOP_FILES):
            self.set_loop(f, 900 + i)  # the generator's; the driver sets the host's

    def set_loop(self, f, number):
        """The host bound loop file f to b 7:number (the driver's losetup)."""
        self.loops[f] = number
        if number is not None:
            self.last[f] = number
        SELECTORS["loop:" + f] = ["b7:%d" % number] if number is not None else []

    def device(self, dev):
        """What attach's DEVICE names now: (key, selector or None), or an errno name."""
        if isinstance(dev, int):
            return dev, None
        if dev.startswith("b7:@"):  # b 7:N, N the number of a loop file's device (last)
            return "b7:%d" % self.last[dev[4:]], None
        if dev in CDI_ONE:
            return CDI_ONE[dev], dev
        if dev.startswith("loop:"):
            return (SELECTORS[dev] or [None])[0], dev
        return "EINVAL"

    # ---- helpers -------------------------------------------------------------------------
    def in_use(self, path):
        return any(c.node == path for c in self.containers.values())

    def ensure(self, h, path, made, rules, ruled=None):
        """Make path and its missing ancestors (copies); the node itself gets the
        container_rules when rules, an ancestor when it is in ruled (made for containers
        before a reload). Returns whether path was made; the nodes given the
        container_rules are added to ruled_now."""
        if path in h.nodes:
            return False
        parts = path.split("/")[1:]
        for i in range(1, len(parts) + 1):
            p = "/" + "/".join(parts[:i])
            if p not in h.nodes:
                h.mkdir(p)
                made.add(p)
                if (p == path and rules) or (p != path and ruled and p in ruled):
                    for verb, minor, acc in CONTAINER_RULES:
                        getattr(h, verb)(p, minor, acc)
                    self.ruled_now.add(p)
        return True

    def forget(self, path):
        """A node devwld made goes with its last container, and its ancestors it made."""
        while path != ROOT and path in self.ondemand:
            if self.h.children(path) or self.in_use(path):
                return
            del self.h.nodes[path]
            self.ondemand.discard(path)
            self.crules.discard(path)
            self.edits = [e for e in self.edits if not (e[1] == path or e[1].startswith(path + "/"))]
            self.bindings = [b for b in self.bindings if b[0] != path]
            path = parent_of(path)

    def effective(self, cid):
        c = self.containers[cid]
        return {m: self.h.access(c.node, m) for m in range(0, 256) if self.h.access(c.node, m)}

    # ---- operations: each returns None (done) or an errno name --------------------------
    def start(self, cid, path, mode):
        owner = [c for c in self.containers.values() if c.node == path and c.own]
        if owner:
            return "EBUSY"
        made = set()
        created = self.ensure(self.h, path, made, True)
        self.ondemand |= made
        if created:
            self.crules.add(path)
        self.containers[cid] = Container(cid, path, mode, created and path.rsplit("/", 1)[1] == cid)
        return None

    def exit(self, cid):
        c = self.containers.pop(cid)
        self.forget(c.node)
        return None

    def attach(self, cid, dev, acc, path):
        c = self.containers[cid]
        minor, selector = self.device(dev)
        if minor is None:
            return "ENOENT"  # the selector names no device now
        if c.find(minor=minor) or c.find(path=path):
            return "EEXIST"
        old = None
        if not c.own:
            leaf = (c.node if c.node != ROOT else "") + "/" + cid
            if leaf in self.h.nodes:
                return "EEXIST"
            made = set()
            self.ensure(self.h, leaf, made, True)
            self.ondemand |= made
            self.crules.add(leaf)
            old = c.node
            c.node, c.own = leaf, True
        before = self.h.access(c.node, minor)
        err = self.h.allow(c.node, minor, acc)
        if err:
            if old is not None:
                leaf, c.node, c.own = c.node, old, False
                self.forget(leaf)
            return err
        c.attached.append(Attachment(minor, acc, path, norm("".join(x for x in acc if x not in before)),
                                     selector))
        return None

    def detach(self, cid, what):
        """By path, by the selector text it was attached with, or by what the text names
        now (attach.c detach_device)."""
        c = self.containers[cid]
        if what.startswith("/"):
            a = c.find(path=what)
        else:
            a = next((x for x in c.attached if x.selector == what), None)
            if not a:
                got = self.device(what)
                a = c.find(minor=got[0]) if isinstance(got, tuple) and got[0] else None
        if not a:
            return "ENOENT"
        if a.added and not a.lapsed and not a.absent:
            self.h.deny(c.node, a.minor, a.added)
        c.attached.remove(a)
        return None

    def unplug(self, f):
        """Loop file f detached from its loop device (devwld(8) DEVICES BY IDENTITY,
        HOT-PLUG; front/uevents.c: the bindings first, then the attachments): each allow
        binding of the file revokes the device; each attachment by it loses its grant and
        node and waits."""
        sel = "loop:" + f
        old = SELECTORS[sel]
        self.set_loop(f, None)
        for node, verb, s, acc in self.bindings:
            if s == sel and verb == "allow":
                for k in old:
                    self.h.deny(node, k, acc)
        for c in self.containers.values():
            for a in c.attached:
                if a.selector != sel or a.absent:
                    continue
                if not a.lapsed and a.added:
                    self.h.deny(c.node, a.minor, a.added)
                a.added, a.lapsed, a.absent = "", False, True
        return None

    def plug(self, f, number):
        """Loop file f bound to b 7:number: every binding of the file writes it, in order
        (an allow the parent refuses skipped); every attachment by it waiting gets the new
        numbers granted on its node and its node made again, unless the grant is refused
        or the device is attached at another path of the container already (it waits
        on, with the numbers it had)."""
        sel = "loop:" + f
        self.set_loop(f, number)
        new = SELECTORS[sel][0]
        for node, verb, s, acc in self.bindings:
            if s == sel:
                if verb == "deny":
                    self.h.deny(node, new, acc)
                elif self.h.covers(parent_of(node), new, acc):
                    self.h.allow(node, new, acc)
        for c in self.containers.values():
            for a in c.attached:
                if a.selector != sel:
                    continue
                if any(o is not a and not o.absent and o.minor == new for o in c.attached):
                    continue
                a.minor = new
                before = self.h.access(c.node, new)
                if self.h.allow(c.node, new, a.access) or \
                        not set(a.access) <= set(self.h.access(c.node, new)):
                    continue
                a.absent = False
                a.added = norm("".join(x for x in a.access if x not in before))
        return None

    def replug(self, f, number):
        """f detached and bound to b 7:number at once: devwld may see both in one burst of
        uevents (the old grant revoked, then the new one granted) or one after the other;
        either way what an unplug and a plug do."""
        self.unplug(f)
        return self.plug(f, number)

    def change(self, verb, node, minor, acc):
        err = self.run_change(self.h, self.bindings, verb, node, minor, acc)
        if not err:
            self.edits.append((verb, node, minor, acc))
        return err

    def run_change(self, h, bindings, verb, node, minor, acc, replay=False):
        """One devwlctl change on h; a binding it makes is appended to bindings, and a
        node removed takes its bindings along (a reload's replay of the rmdir too)."""
        if verb in ("allow", "deny"):
            return getattr(h, verb)(node, minor, acc)
        if verb == "mkdir":
            return h.mkdir(node)
        if verb == "deny-all":
            return h.deny_all(node)
        if verb in ("unbind-allow", "unbind-deny"):
            if node not in h.nodes:
                return "ENOENT"
            want = (node, verb[7:], minor, acc)
            at = [i for i, b in enumerate(bindings) if b == want]
            if not at:
                return "ENOENT"
            del bindings[at[-1]]
            h.unbind(node, verb == "unbind-allow", minor, acc,
                     [(b[1], b[2], b[3]) for b in bindings if b[0] == node])
            return None
        if verb in ("bind-allow", "bind-deny"):
            err = h.bind(node, verb == "bind-allow", minor, acc)
            if not err:
                bindings.append((node, verb[5:], minor, acc))
            return err
        err = self.rmdir(h, node)
        if not err:
            if any(b[0] == node for b in bindings):
                self.stale.add(node)
            bindings[:] = [b for b in bindings if b[0] != node]
        return err

    def rmdir(self, h, node):
        if node not in h.nodes:
            return "ENOENT"
        if h.children(node) or (h is self.h and self.in_use(node)):
            return "EBUSY"
        del h.nodes[node]
        return None

    def reload(self, replay=True):
        """The file again, devwlctl's changes on it (none for a reset, which forgets them),
        every container's node (made again if missing, as it was made: a node made for
        containers with the container_rules), then the attachments' grants (one refused
        lapses)."""
        h = Hierarchy()
        made = set()
        kept = []
        bindings = []
        if not replay:
            self.edits = []
        self.ruled_now = set()
        promise = None if "reload-container-rules" in self.known else self.crules
        for verb, node, minor, acc in self.edits:
            def run():
                return self.run_change(h, bindings, verb, node, minor, acc, replay=True)

            err = run()
            # A change to a missing node: made again as devwld made it (a node made for
            # containers, or one below such a node that a later change still names).
            if (err == "ENOENT" and verb == "mkdir" and parent_of(node) in self.ondemand
                    and "reload-drops-mkdir" not in self.known):
                up = parent_of(node)
                self.ensure(h, up, made, up in self.crules, promise)
                err = run()
            if err == "ENOENT" and verb != "mkdir":
                if "reload-container-rules" in self.known:
                    rules = self.in_use(node)
                else:
                    rules = node in self.crules
                up = None if "reload-edit-bare-parent" in self.known else promise
                self.ensure(h, node, made, rules, up)
                err = run()
            if not err:
                kept.append((verb, node, minor, acc))
        for c in sorted(self.containers.values(), key=lambda c: len(c.node)):
            # Missing still: made for its containers now (a reset forgot the devwlctl mkdir
            # that made it before, say), with the container_rules, as at a start.
            created = self.ensure(h, c.node, made, True, promise)
            named = c.node.rsplit("/", 1)[1] == c.id
            if "reload-own-node" in self.known:
                c.own = created and named
            elif created and named and not c.own:
                # Made by this reload for it (a reset forgot the devwlctl mkdir that made
                # it before): its own now, unless another container is on it too.
                alone = all(o is c or o.node != c.node for o in self.containers.values())
                c.own = alone or "reset-own-shared" in self.known
        for c in self.containers.values():
            for a in c.attached:
                if a.absent:
                    continue  # nothing to grant until its device is back
                before = h.access(c.node, a.minor)
                if h.allow(c.node, a.minor, a.access):
                    a.lapsed = True
                    continue
                a.lapsed = False
                a.added = norm("".join(x for x in a.access if x not in before))
        self.h = h
        self.crules = self.ruled_now
        self.ondemand = made
        self.edits = kept
        self.bindings = bindings
        return None

