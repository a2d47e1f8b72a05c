/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libdevwl: device allow lists with the exact semantics of the Linux cgroup-v1
 * devices controller, enforced from userspace with seccomp user notification.
 *
 * Conventions (all functions):
 *  - return >= 0 on success and a negative errno value on failure;
 *  - output parameters come last and are named ret_*; they are written only on success,
 *    except ret_err (struct devwl_error), written only on failure, and the ret_event of
 *    devwl_notify_handle(), written once a notification was received (see there);
 *  - strings returned through ret_* are heap allocated; the caller frees them
 *    with free();
 *  - the library never logs to stderr and never exits; see devwl_set_log();
 *  - structs the caller allocates for the library to fill end in reserved space, which
 *    the library zeroes: they grow inside it (see struct devwl_error);
 *  - a policy and the nodes in it are not thread-safe: serialise access to one
 *    policy yourself (devwld and devwl-run use one thread).
 */
#ifndef DEVWL_H
#define DEVWL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DEVWL_VERSION_MAJOR 0
#define DEVWL_VERSION_MINOR 8
#define DEVWL_VERSION_MICRO 0

/* True when the headers are at least version a.b.c (unlike liburing's inverted check). */
#define DEVWL_VERSION_AT_LEAST(a, b, c)                                                            \
	(DEVWL_VERSION_MAJOR > (a) ||                                                              \
	 (DEVWL_VERSION_MAJOR == (a) &&                                                            \
	  (DEVWL_VERSION_MINOR > (b) ||                                                            \
	   (DEVWL_VERSION_MINOR == (b) && DEVWL_VERSION_MICRO >= (c)))))

/* The version of the library actually loaded, e.g. "0.6.0". Never NULL. */
const char *devwl_version(void);

/* ---------------------------------------------------------------------------------- */
/* Rules: "TYPE MAJOR:MINOR ACCESS", as the device cgroup parses and prints them.      */

/* Device types and access bits, with the values of the kernel's DEVCG_DEV_* / DEVCG_ACC_*. */
#define DEVWL_DEV_BLOCK 1
#define DEVWL_DEV_CHAR	2
#define DEVWL_DEV_ALL	4
#define DEVWL_ACC_MKNOD 1
#define DEVWL_ACC_READ	2
#define DEVWL_ACC_WRITE 4
#define DEVWL_ACC_MASK	(DEVWL_ACC_MKNOD | DEVWL_ACC_READ | DEVWL_ACC_WRITE)
/* A major or minor of "*"; the kernel stores "*" as this value, so the two are the same. */
#define DEVWL_ANY UINT32_MAX
/* Longest write the kernel accepts for one rule (PAGE_SIZE); longer is E2BIG. */
#define DEVWL_RULE_WRITE_MAX 4096
/* Enough for any formatted rule including the NUL: "c 4294967295:4294967295 rwm". */
#define DEVWL_RULE_STR_MAX 32

/* Which file a rule is written to: devices.allow or devices.deny. */
enum devwl_file {
	DEVWL_FILE_ALLOW = 1,
	DEVWL_FILE_DENY = 2,
};

/* A node's default: everything allowed but its exceptions, or nothing allowed but them. */
enum devwl_behavior {
	DEVWL_BEHAVIOR_ALLOW = 1,
	DEVWL_BEHAVIOR_DENY = 2,
};

/* The kernel's rule, a value kept in arrays (devwl_devname_resolve()): it never grows. */
struct devwl_rule {
	uint8_t type;	/* DEVWL_DEV_BLOCK, _CHAR, or _ALL for the "a" rule */
	uint8_t access; /* DEVWL_ACC_* bits; 0 only where the kernel accepts it too */
	uint32_t major; /* or DEVWL_ANY */
	uint32_t minor; /* or DEVWL_ANY */
};

/*
 * What went wrong, for a human: filled on failure by the functions that take one.
 *
 * This struct and struct devwl_event are allocated by the caller, often on the stack of
 * a loop, and written whole by the library. They grow as liburing's io_uring_params and
 * io_uring_probe do: a reserved tail the library zeroes, from which a new member is taken.
 * A new member means "not known" when 0, so a program built against older headers keeps
 * the size it allocated and never sees it, and one built against newer headers, run on an
 * older library, reads 0. A size-versioned struct (the caller sets .size, as for the
 * kernel's clone_args or open_how) can grow without bound, but then every function must
 * honour .size and every caller set it, or get an error where it wanted an answer: a
 * price for outputs that need not grow far. libseccomp sidesteps the question by
 * allocating such structs itself (seccomp_notify_alloc), a call and a free per use.
 * sizeof of both structs stays the same until the SONAME changes (doc/HACKING.md).
 */
struct devwl_error {
	int code;	      /* the negative errno also returned */
	size_t offset;	      /* byte offset into the input where the problem was found */
	char msg[512];	      /* NUL-terminated description naming the bad input */
	uint64_t reserved[4]; /* zero; later members come from here */
};

/*
 * Parse one rule exactly as a write of buf[0..len) to devices.allow/deny is parsed
 * (whitespace stripped, only the first rule of several lines counts, NUL ends it).
 * Errors: -EINVAL malformed, -E2BIG len > DEVWL_RULE_WRITE_MAX.
 * ret_err may be NULL.
 */
int devwl_rule_parse(const char *buf, size_t len, struct devwl_rule *ret_rule,
		     struct devwl_error *ret_err);

/*
 * Format a rule as devices.list prints it ("c 1:3 rwm", "a *:* rwm"), NUL-terminated.
 * Returns the length written. Errors: -EINVAL bad rule, -ENOSPC size too small.
 */
int devwl_rule_format(const struct devwl_rule *rule, char *buf, size_t size);

/* ---------------------------------------------------------------------------------- */
/* Device names ("/dev/fuse rwm", "char-pts rw", "block-loop r") resolved into rules. */

/* Longest name devwl_devname_resolve() takes; longer than any kernel rule, but bounded. */
#define DEVWL_DEVNAME_MAX 4096

/*
 * Is text[0..len) (leading whitespace skipped) a device name rather than a rule in the
 * kernel's grammar? True when it starts with '/', "char-" or "block-": the kernel
 * refuses all of those, so a rule it accepts is never taken for a name.
 */
bool devwl_devname_is_name(const char *text, size_t len);

/*
 * Resolve "NAME [ACCESS]" (ACCESS: r, w, m in any order; default rwm, as systemd's
 * DeviceAllow=) into kernel rules: a path gives one rule for the node it names (symlinks
 * followed), char-NAME/block-NAME one rule "TYPE MAJOR:* ACCESS" per major whose name in
 * proc_devices matches NAME (an fnmatch(3) pattern, as systemd takes it), in the order
 * listed. proc_devices is the text of /proc/devices, or NULL to read the real one.
 * On success *ret_rules (the caller frees it with free()) holds *ret_n >= 1 rules.
 * Errors: -EINVAL malformed, or the path is not a device node; -E2BIG longer than
 * DEVWL_DEVNAME_MAX; -ENOENT no such path, or no major of that name; -ENOMEM; others
 * from stat(2) or reading /proc/devices. ret_err may be NULL; it names the name that did
 * not resolve.
 */
int devwl_devname_resolve(const char *text, size_t len, const char *proc_devices,
			  struct devwl_rule **ret_rules, size_t *ret_n,
			  struct devwl_error *ret_err);

/* ---------------------------------------------------------------------------------- */
/* Policies: a tree of nodes named by paths ("/", "/k8s/ns/pod").                      */

struct devwl_policy;
struct devwl_node;

/* A new policy holding only "/", which starts as the kernel's root cgroup: allow all.
 * Returns NULL when out of memory. */
struct devwl_policy *devwl_policy_new(void);

/* Free a policy and all its nodes. Accepts NULL. */
void devwl_policy_free(struct devwl_policy *policy);

/*
 * Create a node; it starts as a copy of its parent (behavior, exceptions, mknod waiver).
 * Errors: -EINVAL bad path, -EEXIST exists, -ENOENT parent missing, -ENOMEM.
 */
int devwl_policy_mkdir(struct devwl_policy *policy, const char *path);

/*
 * Remove a node. Errors: -EINVAL bad path, -ENOENT missing, -EBUSY it has children, is
 * referenced (devwl_node_ref) or is the root.
 */
int devwl_policy_rmdir(struct devwl_policy *policy, const char *path);

/* The node at path, or NULL. Cost does not grow with the number of nodes. */
struct devwl_node *devwl_policy_find(const struct devwl_policy *policy, const char *path);

/* Number of nodes, root included. */
size_t devwl_policy_count(const struct devwl_policy *policy);

/*
 * Visit every node in pre-order (parents before children, children in creation order).
 * Stops at, and returns, the first negative value fn returns; 0 otherwise.
 */
int devwl_policy_foreach(struct devwl_policy *policy,
			 int (*fn)(struct devwl_node *node, void *userdata), void *userdata);

/*
 * Write buf[0..len) to the node's devices.allow or devices.deny, with the kernel's
 * semantics: parse, update, propagate a revocation to every descendant.
 * Errors: -ENOENT (devwl_policy_write: no such node), -EINVAL, -E2BIG, -EPERM, -ENOMEM.
 * ret_err may be NULL; it is filled for parse errors and refusals.
 */
int devwl_policy_write(struct devwl_policy *policy, const char *path, enum devwl_file file,
		       const char *buf, size_t len, struct devwl_error *ret_err);
int devwl_node_write(struct devwl_node *node, enum devwl_file file, const char *buf, size_t len,
		     struct devwl_error *ret_err);

/* The same with a parsed rule. Errors: -EINVAL, -EPERM, -ENOMEM. */
int devwl_node_update(struct devwl_node *node, enum devwl_file file, const struct devwl_rule *rule);

/*
 * Would the kernel allow a task in this node access to the device?
 * type: DEVWL_DEV_CHAR or DEVWL_DEV_BLOCK; access: DEVWL_ACC_* bits (0 is what
 * access(F_OK) asks). Returns 1 allowed, 0 denied, -EINVAL bad type or access.
 * A few hash lookups, whatever the number of exceptions; never allocates.
 */
int devwl_node_check(const struct devwl_node *node, int type, uint32_t major, uint32_t minor,
		     int access);

/* devices.list of the node, byte for byte. Errors: -ENOMEM. */
int devwl_node_list(const struct devwl_node *node, char **ret_text);

/*
 * The full listing: "behavior allow" or "behavior deny", then one line per exception,
 * "deny c 1:3 rwm" on an ALLOW node, "allow c 1:3 rwm" on a DENY node, then
 * "mknod_needs_cap false" if the waiver is in force. Errors: -ENOMEM.
 */
int devwl_node_show(const struct devwl_node *node, char **ret_text);

/* The node's path ("/" for the root); valid as long as the node. */
const char *devwl_node_path(const struct devwl_node *node);
enum devwl_behavior devwl_node_behavior(const struct devwl_node *node);
/* The parent, or NULL for the root. */
struct devwl_node *devwl_node_parent(const struct devwl_node *node);

/* Exceptions in order. devwl_node_exception: -ERANGE when index >= count. */
size_t devwl_node_exception_count(const struct devwl_node *node);
int devwl_node_exception(const struct devwl_node *node, size_t index, struct devwl_rule *ret_rule);

/*
 * Whether an on-behalf mknod needs CAP_MKNOD in the caller's user namespace (default
 * true). Setting it applies to the node and every descendant created after; setting
 * false on a node whose parent says true is allowed: the waiver is an administrator's
 * choice, not a device grant.
 */
bool devwl_node_mknod_needs_cap(const struct devwl_node *node);
void devwl_node_set_mknod_needs_cap(struct devwl_node *node, bool needs_cap);

/* Pin a node while something (a container) uses it: rmdir fails -EBUSY until unref. */
void devwl_node_ref(struct devwl_node *node);
void devwl_node_unref(struct devwl_node *node);

/* ---------------------------------------------------------------------------------- */
/* Policy files (JSON, see devwl-policy(5)) and OCI linux.resources.devices arrays.    */

/*
 * Load a whole policy from a JSON file or string. Nothing is returned unless all of
 * it is valid. name is used in messages (a file name) and may be NULL.
 * Errors: -ENOENT/-EACCES/... opening the file, -EINVAL bad JSON or content (ret_err
 * names the file, the node, the rule and the reason), -EPERM a rule the hierarchy
 * refuses, -E2BIG, -ENOMEM.
 */
int devwl_policy_load_file(const char *file, struct devwl_policy **ret_policy,
			   struct devwl_error *ret_err);
int devwl_policy_load_string(const char *text, const char *name, struct devwl_policy **ret_policy,
			     struct devwl_error *ret_err);

/* Save the whole hierarchy; loading the result gives the same decisions and listings. */
int devwl_policy_to_string(const struct devwl_policy *policy, char **ret_text);
/* Write atomically: temporary file, fsync, rename. Errors: as open/write/rename. */
int devwl_policy_save_file(const struct devwl_policy *policy, const char *file);

/*
 * Replay an OCI linux.resources.devices JSON array on a node, in order, as allow/deny
 * writes. All or nothing: on failure the node and its descendants are unchanged.
 * Errors: -EINVAL (ret_err names the entry), -EPERM, -ENOMEM.
 */
int devwl_node_import_oci(struct devwl_node *node, const char *json_array,
			  struct devwl_error *ret_err);
/* Export the node as an OCI devices array that, replayed on a fresh child, yields it. */
int devwl_node_export_oci(const struct devwl_node *node, char **ret_json);

/* ---------------------------------------------------------------------------------- */
/* Enforcement: seccomp user notification.                                            */

/* Kernel features, each probed once and cached. The probe forks no child: it uses a
 * short-lived thread of its own (all signals blocked), joined before it returns. */
#define DEVWL_FEATURE_USER_NOTIF	 (1u << 0) /* SECCOMP_RET_USER_NOTIF (5.0) */
#define DEVWL_FEATURE_ADDFD_SEND	 (1u << 1) /* SECCOMP_ADDFD_FLAG_SEND (5.14) */
#define DEVWL_FEATURE_WAIT_KILLABLE_RECV (1u << 2) /* (5.19) */
#define DEVWL_FEATURE_SYNC_WAKE_UP	 (1u << 3) /* SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (6.6) */
unsigned int devwl_features(void);

/* Flags for devwl_filter_install(). */
#define DEVWL_FILTER_ALLOW_IO_URING (1u << 0) /* do not refuse io_uring_setup */
/* Do not ask for SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV: a signal may then cancel a call the
 * supervisor is handling, and the call restarts as a new notification (tests use it to
 * exercise what kernels before 5.19 do). */
#define DEVWL_FILTER_NO_WAIT_KILLABLE_RECV (1u << 1)
/* Trap only mknod/mknodat of device nodes: for a workload whose device cgroup devwl has
 * programmed (devwl_cgroup_apply), where the kernel itself enforces every open. */
#define DEVWL_FILTER_MKNOD_ONLY (1u << 2)
/* Also trap unlink, unlinkat, rename, renameat and renameat2: for a workload in a user
 * namespace of its own whose device cgroup holds the allow list, where a node devwl makes
 * gets a twin bound over it, so that such a node is removed and renamed as a plain one
 * (doc/DESIGN.md, "nodev mounts"). Every other unlink and rename is CONTINUE'd. */
#define DEVWL_FILTER_TWINS (1u << 3)

/*
 * Install the devwl filter on the calling process (all threads must be the caller's
 * own; call it before starting any). Needs no_new_privs or CAP_SYS_ADMIN.
 * Returns the notify fd (O_CLOEXEC) through ret_notify_fd.
 * Errors: -EOPNOTSUPP no user notification, -EACCES, -EBUSY a listener is installed
 * already, -EINVAL, -ENOMEM.
 */
int devwl_filter_install(unsigned int flags, int *ret_notify_fd);

/*
 * Prepare a notify fd that devwl did not create (one an OCI runtime passed on): ask the
 * kernel to keep the target and the handler on one CPU across a round trip
 * (SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP, 6.6+), which devwl_filter_install() does for
 * its own fds. Errors: -EOPNOTSUPP the kernel lacks it (harmless: slower, not wrong),
 * -EBADF, -ENOTTY not a notify fd.
 */
int devwl_notify_fd_prepare(int notify_fd);

/* What one notification was and what devwl answered. */
enum devwl_verdict {
	DEVWL_VERDICT_CONTINUE = 0, /* not a device: the kernel runs the call */
	DEVWL_VERDICT_ALLOW = 1,    /* granted: the kernel opens it (CONTINUE) or devwl does */
	DEVWL_VERDICT_DENY = 2,	    /* answered -EPERM */
	DEVWL_VERDICT_ERROR = 3,    /* answered with another errno (see error) */
};

struct devwl_event {
	uint64_t id;
	pid_t pid; /* thread-group id of the caller (host pid namespace); 0 when the
		      answer did not need the caller's credentials (most CONTINUEs) */
	pid_t tid; /* the calling thread */
	int syscall_nr;
	const char *syscall; /* "openat", ...: static string */
	const char *path;    /* path argument as read; valid until the next handle call */
	int type;	     /* DEVWL_DEV_CHAR/_BLOCK, or 0 when not a device */
	uint32_t major, minor;
	int access; /* DEVWL_ACC_* asked for */
	enum devwl_verdict verdict;
	int error;	      /* positive errno answered, 0 on success/continue */
	uint64_t handling_ns; /* from receipt to answer */
	/* The caller's user namespace: the inode number of /proc/PID/ns/user, as lsns(8) and
	 * readlink show it; 0 when pid is (the handler did not read the caller). */
	uint64_t userns_ino;
	uint64_t reserved[8]; /* zero; later members come from here (see devwl_error) */
};

struct devwl_notify;

/* Handler state (notification buffers sized with SECCOMP_GET_NOTIF_SIZES, caches).
 * Returns NULL on out-of-memory or when user notification is unsupported. */
struct devwl_notify *devwl_notify_new(void);
void devwl_notify_free(struct devwl_notify *notify);

/*
 * Receive the pending notification on notify_fd (blocks if none is pending: poll for
 * POLLIN first from an event loop), decide it against node and answer it.
 * Where devwl cannot decide (a number it does not trap, an x32 call, a failure of its own)
 * the call is answered -EPERM, never CONTINUE.
 * ret_event may be NULL; it is written once a notification was received, also when
 * answering it then failed (check the return value before its verdict), and left alone
 * when none was. Errors: -ENOENT the target went away (not an error: nothing to
 * answer), -EAGAIN nothing pending on a non-blocking fd, others from the kernel.
 * Must be called from one thread per struct devwl_notify. That thread unshares its
 * filesystem context once (unshare(CLONE_FS)) and may chroot into a caller's root during
 * a call, always returning to its own. Signals are blocked while an fd is injected; a thread
 * that also runs an io_uring must create it with IORING_SETUP_DEFER_TASKRUN, or io_uring
 * task work can interrupt the injection (the kernel then completes the call with 0).
 */
int devwl_notify_handle(struct devwl_notify *notify, int notify_fd, const struct devwl_node *node,
			struct devwl_event *ret_event);

struct seccomp_notif; /* <linux/seccomp.h> */

/*
 * As devwl_notify_handle(), for a notification the caller has received itself
 * (SECCOMP_IOCTL_NOTIF_RECV into req, req_size bytes as SECCOMP_GET_NOTIF_SIZES sized it):
 * a runtime whose own loop receives and hands each notification to a plugin (crun's and
 * conmon's seccomp-notify plugins; devwl-plugin(7)). It decides req against node and
 * answers it on notify_fd, from any thread the caller chooses, at once or later (the
 * target waits meanwhile). The recv hook is not called: the caller received it.
 * Errors: -EINVAL a NULL argument or req_size below the kernel's first struct, and those
 * of devwl_notify_handle() but -EAGAIN.
 */
int devwl_notify_handle_request(struct devwl_notify *notify, int notify_fd,
				const struct seccomp_notif *req, size_t req_size,
				const struct devwl_node *node, struct devwl_event *ret_event);

/*
 * Have devwl_notify_handle() call fn(notify_fd, id, userdata) as soon as it has received a
 * notification, before it decides or answers it. A supervisor that may die mid-call
 * records the id there, so that whoever inherits the notify fd can answer the call the
 * dead one took (devwld(8), RESTART). fn must not block; NULL removes the hook.
 * With a hook set, an fd is injected in two steps (ADDFD, then SEND), never with
 * ADDFD_FLAG_SEND: a handler killed inside ADDFD+SEND leaves the target's call returning
 * 0 (the kernel's answer without its fd), where two steps leave it for the heir.
 */
typedef void (*devwl_notify_recv_fn)(int notify_fd, uint64_t id, void *userdata);
void devwl_notify_set_recv_hook(struct devwl_notify *notify, devwl_notify_recv_fn fn,
				void *userdata);

/*
 * Say whether a kernel baseline (a device cgroup or BPF device program that denies what
 * devwl does not grant, and that the callers cannot leave) stands behind the calls the
 * handler lets through. It decides who opens a granted device (DESIGN.md, "Grants"):
 * without one, the default, the kernel does (CONTINUE), in the caller's own context, as it
 * does every call that reaches no device — sound only as far as the kernel alone would let
 * the caller in, since a racing thread can swap the path between devwl's look and the
 * kernel's; with one (devwld serving OCI runtimes, devwl-run with a cgroup) the baseline
 * would refuse it, so the handler opens it on the caller's behalf unless
 * devwl_notify_set_enforced() says the baseline holds the allow list. Without either, a
 * device node is made only on a nodev mount (nothing else would keep it from opening
 * beyond the policy), and such a node the handler opens for the caller, as the policy
 * says; a mknod anywhere else is refused EPERM.
 */
void devwl_notify_set_baseline(struct devwl_notify *notify, bool baseline);

/*
 * Say whether the callers' device cgroup holds exactly the allow list of the node they
 * are served with (devwl_cgroup_apply(), kept in step with every change), which implies a
 * baseline. A grant lifts the device policy and nothing else: the kernel then opens every
 * granted device itself, in the caller's own context (its capabilities, LSM and Landlock
 * domain, user namespace), and the handler answers CONTINUE once it has refused what the
 * policy denies. A device node made for a caller in another user namespace (whose own
 * mounts are nodev) is then bound over by a node devwl makes on a tmpfs of its own, so the
 * kernel opens it too (the handler needs CAP_SYS_ADMIN for that; without, the node is made
 * and devwl_notify_reason() says it could not be bound).
 * Under a deny baseline without it, the handler opens a granted device on the caller's
 * behalf (through a node of its own where the caller's is on a nodev mount) with the
 * caller's whole credential: fsuid, fsgid, groups, umask and, as its effective set, the
 * caller's own where the caller is in the handler's user namespace (none otherwise),
 * within the handler's. A caller under another LSM label (AppArmor, SELinux, Smack) is
 * refused EPERM rather than opened for outside it; a Landlock domain cannot be seen from
 * outside, so only this enforcement keeps one for granted devices (libdevwl(3), GRANTS).
 */
void devwl_notify_set_enforced(struct devwl_notify *notify, bool enforced);

/*
 * The device nodes devwl made for a workload on mounts where the kernel opens no device
 * node (nodev), which only devwl opens, for the workload, as its policy says: a fact
 * about the workload that every handler serving it must share, and an embedder may save
 * across a restart (doc/DESIGN.md, "nodev mounts"). Thread-safe, reference-counted. It
 * holds the last 1024 nodes: a workload that makes more loses the oldest (they stop
 * opening). devwl_nodeset_new() returns NULL on out-of-memory; unref accepts NULL.
 */
struct devwl_nodeset;
struct devwl_nodeset *devwl_nodeset_new(void);
struct devwl_nodeset *devwl_nodeset_ref(struct devwl_nodeset *set);
void devwl_nodeset_unref(struct devwl_nodeset *set);
/* Add or remove the node of inode ino on device dev (st_dev, st_ino). Errors: -EINVAL
 * set is NULL or ino is 0; remove: -ENOENT not there. */
int devwl_nodeset_add(struct devwl_nodeset *set, uint64_t dev, uint64_t ino);
int devwl_nodeset_remove(struct devwl_nodeset *set, uint64_t dev, uint64_t ino);
/* Is it there? false for a NULL set. */
bool devwl_nodeset_has(struct devwl_nodeset *set, uint64_t dev, uint64_t ino);
/* The i-th entry, to save the set: 0, -ENOENT past the last; a removed one reads ino 0
 * (skip it). -EINVAL a NULL argument. */
int devwl_nodeset_get(struct devwl_nodeset *set, size_t i, uint64_t *ret_dev, uint64_t *ret_ino);

/*
 * The set the handler records the nodes it makes on nodev mounts in, and opens for the
 * caller from: set by the embedder per workload before each devwl_notify_handle() (the
 * handler takes a reference), or NULL for the handler's own, the default. Use one set per
 * workload, shared by every handler that serves it, so that a node opens whichever
 * handler takes the call.
 */
void devwl_notify_set_nodeset(struct devwl_notify *notify, struct devwl_nodeset *set);

/*
 * Why the last devwl_notify_handle() on this context answered as it did, where the errno
 * does not say it: static text, or NULL. An EPERM says which check refused the call:
 * "policy" (the node denies the device), "no CAP_MKNOD" (a mknod the node allows, by a
 * caller without CAP_MKNOD, the node not waiving it), "cannot decide" (a call devwl does
 * not handle, or a failure of its own: failing closed), or the caller's LSM label; an
 * allowed mknod may say that no node the kernel opens could be bound over it.
 */
const char *devwl_notify_reason(const struct devwl_notify *notify);

/*
 * The context keeps the last caller's root open (a container's calls then skip opening
 * it every time), and so pins that root's mount until a call from another root, this, or
 * devwl_notify_free(). A context that serves several containers calls it when it will
 * wait a while, so that a container that went away leaves no mount behind. Not during
 * devwl_notify_handle() on the same context.
 */
void devwl_notify_forget(struct devwl_notify *notify);

/* ---------------------------------------------------------------------------------- */
/* Kernel enforcement: a device cgroup programmed with a node's allow list.            */

struct bpf_insn; /* <linux/bpf.h> */

/*
 * Compile the node's allow list into a BPF_PROG_TYPE_CGROUP_DEVICE program that decides
 * every (type, major, minor, access) exactly as devwl_node_check() does, partial overlaps
 * of an ALLOW node's denials included. Pure: no syscalls. Balanced searches per device
 * type: size grows linearly with the exceptions, a check logarithmically. The caller
 * frees *ret_insns with free(). Errors: -EINVAL, -ENOMEM, -E2BIG too many exceptions of
 * one device type for the ISA's 16-bit jumps (about 14,000) or the verifier's limit.
 */
int devwl_node_compile_bpf(const struct devwl_node *node, struct bpf_insn **ret_insns,
			   size_t *ret_count);

struct devwl_cgroup;

/* The cgroup's parent is devwl's own and holds only it (v1: needed to turn a DENY cgroup
 * into an ALLOW one without a moment of allow-all; see libdevwl(3)). */
#define DEVWL_CGROUP_OWN_PARENT (1u << 0)
/* Take over a cgroup a runtime has programmed, its tasks running: no moment of deny-all.
 * v1: the first apply starts from the cgroup's own devices.list (a DENY cgroup's; an
 * ALLOW one is reset to deny-all first); v2: the first program joins the runtime's, then
 * every other program attached to the cgroup itself is detached, by each apply until one
 * has detached them all; one attached after that is another's and stays
 * (devwl_cgroup_check() reports it), except the runtime's rules attached again by its
 * cgroup manager (systemd's device program, "sd_devices"), which each apply detaches
 * too. Where a program libdevwl loaded (each is named "devwl_node") is attached at the
 * first apply, the cgroup was taken over before (a supervisor restarted): only that one
 * and sd_devices are detached. The cgroup holds, at every moment, no more than its old
 * rules or the node allow. */
#define DEVWL_CGROUP_TAKE_OVER (1u << 1)
/* cgroup v2: the program also records each access it denies, for
 * devwl_cgroup_read_denials(), where the kernel has BPF ring buffers (5.8); elsewhere it
 * is ignored, and on cgroup v1 (whose controller tells nobody) it takes a reporter on the
 * cgroup2 hierarchy to record (devwl_cgroup_set_reporter()). */
#define DEVWL_CGROUP_RECORD_DENIALS (1u << 2)
/* cgroup v2, with DEVWL_CGROUP_RECORD_DENIALS: the program also reports the accesses it
 * allows, to the same reader (allowed 1), each (type, major, minor, access) at most once a
 * second, with the count of those allowed since its last report folded in: a workload
 * opening /dev/null in a loop costs one record a second. Needs a kernel whose verifier
 * takes atomic exchanges (5.12); elsewhere the program reports denials only (see
 * devwl_cgroup_recording()). Accesses counted after a key's last report wait for its next
 * access past the second. */
#define DEVWL_CGROUP_RECORD_ACCESSES (1u << 3)

/*
 * Take over the device controls of the cgroup directory dir: a cgroup2 directory (a BPF
 * device program is attached, ALLOW_MULTI, so programs above it still apply) or a
 * cgroup-v1 devices directory (devices.allow/deny written). Until the first
 * devwl_cgroup_apply() the cgroup denies every device (TAKE_OVER: keeps its rules). Needs
 * CAP_SYS_ADMIN (v1) or CAP_BPF+CAP_SYS_ADMIN (v2) in the initial user namespace. Errors: -EINVAL
 * bad flags, or OWN_PARENT with a parent that does not allow all; -ENOTDIR not a cgroup directory
 * with device controls; -EPERM/-EACCES not privileged; -ENOMEM; others from open(2) and bpf(2).
 */
int devwl_cgroup_open(const char *dir, unsigned int flags, struct devwl_cgroup **ret_cgroup);

/*
 * Make the cgroup enforce the node's allow list now. v2 replaces the attached program
 * in one step; v1 writes the difference in an order that never lets a task in the
 * cgroup hold more than the old or the new list (a DENY <-> ALLOW change moves the tasks
 * through a sibling granting what both grant, and waits for an RCU grace period; see
 * libdevwl(3)). Call it again after every change of
 * the node or an ancestor. On failure the cgroup denies every device.
 * Returns the program's size in instructions (v2) or the number of writes (v1).
 * Errors: -EINVAL, -ENOMEM, -E2BIG (see devwl_node_compile_bpf), -EOPNOTSUPP (v1:
 * DENY to ALLOW without DEVWL_CGROUP_OWN_PARENT while tasks are in the cgroup),
 * -EBUSY/-EINVAL/-EPERM the kernel refused a write (v1: the cgroup has children; a
 * parent denies), errors of bpf(2).
 */
int devwl_cgroup_apply(struct devwl_cgroup *cgroup, const struct devwl_node *node);

/* 1 or 2 for a cgroup-v1 devices directory or a cgroup2 one; -EINVAL for NULL. */
int devwl_cgroup_version(const struct devwl_cgroup *cgroup);

/*
 * cgroup v1 on a hybrid host (the v1 devices controller beside a cgroup2 hierarchy): have
 * what the v1 rules decide reported, as a v2 program reports. The kernel asks a cgroup's v2
 * device programs before the v1 controller, so from the next devwl_cgroup_apply() on a
 * program named "devwl_report" is attached (ALLOW_MULTI) to dir, the same workload's own
 * cgroup2 directory: it decides each access by the node as the v1 rules do, records it for
 * devwl_cgroup_read_denials() (denials; with DEVWL_CGROUP_RECORD_ACCESSES allowed
 * accesses, deduplicated as on v2), and then allows it, always: the v1 rules alone
 * enforce, and it can grant nothing another program refuses. A denial it records is the
 * node's (an ancestor's v1 rules may refuse more, unrecorded). Each apply replaces it after
 * the v1 writes; where none can be loaded (see devwl_cgroup_recording()) or the apply
 * failed, it is detached. devwl_cgroup_check() reports it detached (DRIFT_DETACHED: the
 * next apply attaches it again) and another's device program on dir (DRIFT_FOREIGN: it
 * runs before the v1 rules); a reporter of that name another handle left there is
 * detached by the next apply. devwl_cgroup_free() detaches it. The caller vouches that dir
 * is the workload's alone: whatever runs in it or below is reported. Errors: -EINVAL NULL
 * or a cgroup2 handle, -EBUSY one set already, -EOPNOTSUPP opened without
 * DEVWL_CGROUP_RECORD_DENIALS or a kernel without BPF ring buffers (5.8), -ENOTDIR dir is
 * not a cgroup2 directory, -ENOMEM, others from open(2) and bpf(2).
 */
int devwl_cgroup_set_reporter(struct devwl_cgroup *cgroup, const char *dir);

/* What devwl_cgroup_check() found changed since the last devwl_cgroup_apply() (bits). */
/* v1: devices.list is not the set of exceptions written (another writer added, removed
 * or changed rules, or switched the default). */
#define DEVWL_CGROUP_DRIFT_RULES (1u << 0)
/* v2: the handle's program is no longer attached (detached, or replaced by another). */
#define DEVWL_CGROUP_DRIFT_DETACHED (1u << 1)
/* v2: a program the handle did not attach is attached to the cgroup beside it; every
 * attached program must allow an access, so it may refuse what the node grants. */
#define DEVWL_CGROUP_DRIFT_FOREIGN (1u << 2)
/* v2, TAKE_OVER: the runtime's cgroup manager attached the runtime's device rules again
 * beside the handle's program (systemd re-applying a scope's DeviceAllow=, known by its
 * program's name): the next devwl_cgroup_apply() detaches it, as the take-over did the
 * runtime's first ones. */
#define DEVWL_CGROUP_DRIFT_REAPPLIED (1u << 3)

/*
 * Does the cgroup still hold what the last devwl_cgroup_apply() made it? Another writer
 * can change it behind the handle (a service manager re-applying its own rules, a
 * runtime's update, a tool attaching a program). Reads the cgroup only: v1 devices.list,
 * compared with what was written as sets of exceptions; v2 BPF_PROG_QUERY of the cgroup's
 * own programs. Returns 0 when it holds what was applied, else DEVWL_CGROUP_DRIFT_* bits,
 * with what changed in ret_what (NUL-terminated, cut at size; may be NULL). After RULES
 * or DETACHED the handle takes the kernel's state as its own, so the next
 * devwl_cgroup_apply() restores the node from there, in its usual order (a v1 cgroup
 * switched to allow-all is first made to deny all); after REAPPLIED, the next apply
 * detaches the program the cgroup manager attached. FOREIGN is never repaired: the handle
 * detaches no program it did not attach (TAKE_OVER's runtime programs aside: those
 * present before the first apply that detached them, and the runtime's rules its cgroup
 * manager attaches again, REAPPLIED); ret_what names each one, and says what it does
 * where that is plain (a program that only allows or only denies). Before the first
 * apply: 0. Errors: -EINVAL, -ENOMEM, errors of read(2) and bpf(2).
 */
int devwl_cgroup_check(struct devwl_cgroup *cgroup, char *ret_what, size_t size);

/* An access the cgroup's program denied (DEVWL_CGROUP_RECORD_DENIALS), or one it allowed
 * (DEVWL_CGROUP_RECORD_ACCESSES). */
struct devwl_denial {
	int type; /* DEVWL_DEV_CHAR/_BLOCK as the kernel asked (another value: denied as such) */
	uint32_t major, minor;
	int access;	     /* DEVWL_ACC_* asked for */
	pid_t pid;	     /* thread-group id of the task (host pid namespace); 0 where the kernel
				does not let device programs ask */
	pid_t tid;	     /* its thread, 0 likewise */
	uint64_t cgroup_id;  /* the task's cgroup2 id (its inode number), 0 likewise */
	uint64_t count;	     /* accesses the record stands for (>= 1; a denial: 1); 0 from a
				library before DEVWL_CGROUP_RECORD_ACCESSES, meaning 1 */
	uint32_t allowed;    /* 1: an access the program allowed, 0: a denial */
	uint32_t reserved32; /* zero */
	uint64_t reserved[2]; /* zero; later members come from here (see devwl_error) */
};

/*
 * An fd that polls readable (POLLIN) when denials wait to be read: the program attached
 * now records them. The fd stays the handle's, the same across applies; poll it, never
 * read or close it. Errors: -EOPNOTSUPP nothing records (cgroup v1, opened without
 * DEVWL_CGROUP_RECORD_DENIALS, a kernel without ring buffers, or one whose verifier
 * refused the recording program: it then enforces without), -EINVAL NULL.
 */
int devwl_cgroup_denials_fd(const struct devwl_cgroup *cgroup);

/*
 * What the program attached now reports: DEVWL_CGROUP_RECORD_DENIALS, with
 * DEVWL_CGROUP_RECORD_ACCESSES where it also reports allowed accesses, or 0 (nothing: see
 * devwl_cgroup_denials_fd()). Errors: -EINVAL NULL.
 */
int devwl_cgroup_recording(const struct devwl_cgroup *cgroup);

/*
 * Take up to max recorded denials (and allowed accesses), oldest first, into ret; never
 * blocks. Returns how many (0: none waiting). Records past a full ring (about 290
 * waiting) are lost, not the refusal or the access; those of the deny-all program in
 * force after a failure are not recorded. Read until
 * it returns less than max: the fd is woken again only once the ring was emptied.
 * Errors: -EOPNOTSUPP no ring (see above), -EINVAL, -EIO the ring is not as written.
 */
int devwl_cgroup_read_denials(struct devwl_cgroup *cgroup, struct devwl_denial *ret, size_t max);

/* Close the handle. What was last applied stays in force until the cgroup is removed.
 * Accepts NULL. */
void devwl_cgroup_free(struct devwl_cgroup *cgroup);

/* ---------------------------------------------------------------------------------- */
/* Hand-off to devwld                                                                  */

/*
 * Hand a notify fd to a supervisor listening on an OCI runtime-spec seccomp listener
 * socket (devwld's listen.sock), exactly as an OCI runtime does: connect, then send in
 * one sendmsg the "container process state" JSON (ociVersion "1.0.2", fds ["seccompFd"],
 * pid = getpid(), metadata "node=NODE", state {ociVersion, id, status "running", pid,
 * bundle "/", annotations {}}) with notify_fd attached by SCM_RIGHTS; then close. Waits
 * for no answer. node may be NULL (no metadata: the supervisor picks the node); id may
 * be NULL ("devwl-run-PID"). notify_fd stays open: the caller closes it.
 * Errors: -EINVAL NULL socket_path, -ENAMETOOLONG path too long for a socket,
 * -EBADF bad notify_fd, -ENOMEM, and connect(2)/sendmsg(2) errors (-ENOENT,
 * -ECONNREFUSED, -EACCES, -EPIPE, ...).
 */
int devwl_handoff_send(const char *socket_path, int notify_fd, const char *node, const char *id);

/*
 * As devwl_handoff_send(), then wait up to timeout_ms (0: not at all) for the supervisor
 * to close the connection, which devwld does once it has taken the process on: its
 * device cgroup is programmed by then, where devwld programs it (devwld(8), KERNEL MODE).
 * Errors: those of devwl_handoff_send(), -EINVAL timeout_ms < 0, -ETIMEDOUT the
 * supervisor kept the connection open (the fd was handed over all the same).
 */
int devwl_handoff_send_wait(const char *socket_path, int notify_fd, const char *node,
			    const char *id, int timeout_ms);

/* ---------------------------------------------------------------------------------- */
/* Device nodes placed in a running process's root (hot-plug into a container)         */

/* Flags of struct devwl_place. */
#define DEVWL_PLACE_MKDIR (1u << 0) /* make missing parent directories */
/* If the target is in another user namespace, whose mounts are nodev (its /dev), bind a
 * twin of the node from a tmpfs of devwl's own over it, so that the node opens; only where
 * the target's device cgroup enforces the grant (doc/DESIGN.md, nodev mounts). Unplace
 * unmounts it. */
#define DEVWL_PLACE_TWIN (1u << 1)
/* A device cgroup confines every process that can reach the node: it holds the target's
 * allow list, or denies every device devwl did not open itself (a deny baseline). Without
 * it the node is made only on a mount where the kernel opens no device node (nodev, as
 * every mount of a user namespace), which is then opened only by a supervisor that opens
 * it for the target (doc/DESIGN.md, the node gate); DEVWL_PLACE_TWIN needs it. */
#define DEVWL_PLACE_CONFINED (1u << 2)
/* devwl_node_place()'s answer for a node made without DEVWL_PLACE_CONFINED: on a nodev
 * mount, so that only a supervisor opening it for the target makes it usable (give it
 * place->nodeset). */
#define DEVWL_PLACE_MADE_NODEV 2

/* What devwl_node_place() makes, and where. Zero it, then fill it in. */
struct devwl_place {
	const char *path; /* absolute, as the target sees it; no "." or "..", no symlink */
	int type;	  /* DEVWL_DEV_CHAR or DEVWL_DEV_BLOCK, as devwl_node_check() takes */
	uint32_t major, minor;
	mode_t mode;	    /* permission bits only (07777 at most), set exactly: no umask */
	uid_t uid;	    /* owner as the TARGET sees it, mapped through its user namespace */
	gid_t gid;	    /* (/proc/PID/uid_map, gid_map); (uid_t)-1, (gid_t)-1: its root */
	unsigned int flags; /* DEVWL_PLACE_* */
	/* With DEVWL_PLACE_MADE_NODEV, the node made is added to it (NULL: nowhere), so
	 * that the handlers serving the target open it (devwl_notify_set_nodeset). Taken
	 * from reserved[0]: zero, NULL, means none. */
	union {
		struct devwl_nodeset *nodeset;
		uint64_t nodeset_word_;
	};
	uint64_t reserved[3]; /* zero; later members come from here */
};

/*
 * Make the device node place->path inside the root and mount namespace of the process
 * pidfd refers to (pidfd_open(2)), with place's owner and mode, from any mount namespace
 * (the caller's own included). The path is walked from that root one component at a time:
 * a symbolic link anywhere in it is refused, and nothing after the walk looks the path up
 * again, so the target cannot steer the call elsewhere by changing its files meanwhile.
 * Missing parent directories are made with DEVWL_PLACE_MKDIR: 0755, owned by the owner of
 * the target's "/". Needs, in the initial user namespace, CAP_MKNOD, CAP_CHOWN,
 * CAP_FOWNER, CAP_DAC_OVERRIDE and CAP_SYS_PTRACE (for /proc/PID/root), and /proc mounted:
 * devwld, running as root, has them.
 * Returns 0 made; 1 the same device node (type and number) was there already, left as it
 * is (owner and mode untouched); DEVWL_PLACE_MADE_NODEV made, without DEVWL_PLACE_CONFINED,
 * on a mount proven nodev.
 * Errors: -EPERM without DEVWL_PLACE_CONFINED, the directory's mount is not proven nodev
 * (nothing is made: the node would open for anyone its permissions admit); -EEXIST
 * something else is at path; -ENOENT a parent directory is missing
 * (without DEVWL_PLACE_MKDIR); -ENOTDIR a parent is not a directory; -ELOOP a component is
 * a symbolic link; -EINVAL bad place (relative path, "." or "..", a trailing '/', bad type,
 * mode or flags, reserved not zero, a number beyond the kernel's 12-bit major or 20-bit
 * minor, DEVWL_PLACE_TWIN without DEVWL_PLACE_CONFINED), or uid/gid has no mapping in
 * the target's user namespace; -ENAMETOOLONG;
 * -EBADF pidfd is not a pidfd; -ESRCH the process has exited (or is not in this pid
 * namespace); -EPERM/-EACCES not privileged; -ENOMEM; -EIO its uid_map or gid_map is
 * not an id map; others from mknodat(2), fchownat(2) and mkdirat(2). ret_err may be NULL;
 * it names the process, the path and the component at fault (its byte offset in path).
 */
int devwl_node_place(int pidfd, const struct devwl_place *place, struct devwl_error *ret_err);

/*
 * Remove the device node path (as devwl_node_place() walks it) from the root of the
 * process pidfd refers to, if it is that device: type DEVWL_DEV_CHAR or DEVWL_DEV_BLOCK,
 * major:minor. A process that has the node open keeps it open and usable: the kernel revokes
 * nothing. Returns 0 removed; 1 nothing there (path or a parent directory missing). Errors: -EEXIST
 * something else is at path (left as it is); those of devwl_node_place() for the walk and the
 * process, and of unlinkat(2). ret_err may be NULL.
 */
int devwl_node_unplace(int pidfd, const char *path, int type, uint32_t major, uint32_t minor,
		       struct devwl_error *ret_err);

/* Log callback for diagnostics the library cannot return (NULL: silent, the default). */
enum devwl_log_level { DEVWL_LOG_ERR = 3, DEVWL_LOG_WARNING = 4, DEVWL_LOG_DEBUG = 7 };
typedef void (*devwl_log_fn)(enum devwl_log_level level, const char *msg, void *userdata);
void devwl_set_log(devwl_log_fn fn, void *userdata);

#ifdef __cplusplus
}
#endif

#endif /* DEVWL_H */
