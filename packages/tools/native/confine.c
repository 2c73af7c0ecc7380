/*
 * toolcap-confine: starts a program confined by the kernel, in one of these modes:
 *
 *   toolcap-confine --probe                 prints the kernel's Landlock ABI (0: none), exits 0
 *   toolcap-confine [OPTION]... -- FILE ARG...
 *       --read PATH      Landlock: FILE may read files and list directories beneath PATH only
 *                        (repeatable; FILE itself is exec'd by path and must lie beneath one)
 *       --cgroup DIR     FILE (searched in PATH, as a shell does) runs in a session of its own
 *                        inside the cgroup DIR; the launcher stays as its parent
 *       --scope          Landlock scopes: FILE and everything it starts cannot signal a process
 *                        outside their own domain, nor connect to an abstract unix socket
 *                        outside it (and, as in any Landlock domain, cannot ptrace, pidfd_getfd
 *                        or read /proc/<pid>/fd|mem of a process outside it)
 *       --memory BYTES   RLIMIT_DATA of FILE (inherited by what it starts): an allocation past
 *                        it fails instead of growing the process's memory
 *       --address-space BYTES  RLIMIT_AS of FILE (inherited): counts shared mappings too
 *       --cgroup1 DIR    FILE joins the cgroup v1 DIR (its tasks file) before anything else
 *                        is applied to it (repeatable, up to 4: one per v1 controller)
 *       --deny-cgroupfs  Landlock: FILE and everything it starts cannot write beneath any cgroup
 *                        mount (no cgroup.procs, cgroup.kill, cgroup.freeze, no new cgroup): write
 *                        access is granted beneath every other tree of the file system only
 *       --isolate BYTES  FILE runs in PID and mount namespaces of its own (a user namespace first
 *                        where the launcher is not root): the cgroup mounts read-only, a tmpfs of
 *                        BYTES on /dev/shm, a /proc listing the call's processes only; a small
 *                        pid 1 (see run_init) starts FILE and reaps what it leaves
 *   toolcap-confine --server                starts calls as --cgroup does, on requests from
 *                                           stdin (see server() below)
 *
 * The server mode takes the host's fork off every call: a host that forks itself to start a
 * launcher pays for copying its own page tables (milliseconds for a host of 100 MB, growing with
 * it, with its event loop blocked), while this small process forks in microseconds.
 *
 * The cgroup mode creates the child directly inside the cgroup (clone3 with CLONE_INTO_CGROUP,
 * Linux 5.7+): unlike writing a pid into `cgroup.procs`, which takes the kernel's threadgroup lock
 * for writing and waits out an RCU grace period (milliseconds), the fork path takes it for reading
 * only. The launcher stays as the child's parent, outside every restriction it applies to the
 * child: it forwards SIGTERM, SIGINT and SIGHUP to it, holds none of the descriptors it was given
 * (0, 1 and 2 go to /dev/null once the child runs), and exits when the child does, with its exit
 * status or by the same signal.
 *
 * Exit statuses of the launcher itself: 125, a restriction could not be applied or the child could
 * not be created (nothing ran: the program never runs less confined than asked); 127, FILE was not
 * found; 126, it could not be executed (the statuses of a shell and of env). Every system call's
 * result is checked: a failure that would loosen a restriction ends with 125 and a message on
 * stderr; one that cannot (closing a descriptor this process no longer needs) is ignored on purpose
 * and says so where it happens.
 *
 * No libc wrapper exists for the Landlock calls, so they are made by number; the numbers are the
 * same on every architecture (the unified syscall table), and the structures are declared here so
 * the build needs no kernel headers.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <limits.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define SYS_CREATE_RULESET 444
#define SYS_ADD_RULE 445
#define SYS_RESTRICT_SELF 446
#define CREATE_RULESET_VERSION (1U << 0)
#define RULE_PATH_BENEATH 1
#define ACCESS_READ_FILE (1ULL << 2)
#define ACCESS_READ_DIR (1ULL << 3)
/* every right Landlock has that changes the file system (all but execute, read file, read dir),
   by the ABI that added it */
#define ACCESS_WRITE_V1                                                                                   \
  ((1ULL << 1) | (1ULL << 4) | (1ULL << 5) | (1ULL << 6) | (1ULL << 7) | (1ULL << 8) | (1ULL << 9) |     \
   (1ULL << 10) | (1ULL << 11) | (1ULL << 12))
#define ACCESS_REFER (1ULL << 13)
#define ACCESS_TRUNCATE (1ULL << 14)
#define ACCESS_IOCTL_DEV (1ULL << 15)
/* of those, the ones a rule on a file (not a directory) may carry */
#define ACCESS_WRITE_FILE_ONLY ((1ULL << 1) | ACCESS_TRUNCATE | ACCESS_IOCTL_DEV)
/* the first ABI that can grant renames and links across directories (REFER): without it a
   ruleset that handles writes refuses every rename into another directory */
#define ABI_REFER 2
#define SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define SCOPE_SIGNAL (1ULL << 1)
/* the first Landlock ABI with scopes */
#define ABI_SCOPES 6
#define EXIT_NOT_CONFINED 125
#define EXIT_NOT_EXECUTABLE 126
#define EXIT_NOT_FOUND 127
#define SYS_CLONE3 435
#define CLONE_INTO_CGROUP 0x200000000ULL

/* the kernel's struct landlock_ruleset_attr as of ABI 6 (fs, net, scoped) */
struct ruleset_attr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};

/* up to ABI 5 a ruleset without scopes is created with the first field alone, so old kernels take it */
#define RULESET_ATTR_FS_ONLY sizeof(uint64_t)

struct path_beneath_attr {
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__((packed));

/* the kernel's struct clone_args up to `cgroup` (CLONE_ARGS_SIZE_VER2, 88 bytes) */
struct clone_args {
  uint64_t flags;
  uint64_t pidfd;
  uint64_t child_tid;
  uint64_t parent_tid;
  uint64_t exit_signal;
  uint64_t stack;
  uint64_t stack_size;
  uint64_t tls;
  uint64_t set_tid;
  uint64_t set_tid_size;
  uint64_t cgroup;
};

/* What a call asks for besides its program (from the command line or a server request). */
struct options {
  const char *cgroup;
  int scope;
  unsigned long long memory;
  unsigned long long address_space;
  const char *cgroup1[4];
  size_t ncgroup1;
  /* Landlock: no write beneath any cgroup mount (--deny-cgroupfs) */
  int deny_cgroupfs;
  /* the size of the call's own /dev/shm, when it gets PID and mount namespaces (--isolate BYTES) */
  unsigned long long isolate;
  /* the tasks file of each --cgroup1, opened before the namespaces (see open_cgroup1) */
  int cgroup1_fd[4];
  int cgroup1_open;
};

/* Takes a --cgroup1 DIR (or a request's cgroup1=DIR): 0, or -1 past the four it holds. */
static int add_cgroup1(struct options *options, const char *dir) {
  if (options->ncgroup1 >= sizeof options->cgroup1 / sizeof options->cgroup1[0] || dir[0] != '/') return -1;
  options->cgroup1[options->ncgroup1++] = dir;
  return 0;
}

static int fail(const char *what, const char *detail) {
  fprintf(stderr, "toolcap-confine: %s%s%s: %s\n", what, detail ? " " : "", detail ? detail : "", strerror(errno));
  return EXIT_NOT_CONFINED;
}

static int usage(void) {
  errno = EINVAL;
  return fail("usage: toolcap-confine [--read PATH]... [--cgroup DIR] [--scope] [--memory BYTES] "
              "[--address-space BYTES] [--cgroup1 DIR]... [--deny-cgroupfs] [--isolate BYTES] -- FILE ARG...",
              NULL);
}

/*
 * Opens the tasks file of every --cgroup1 DIR for writing, once. The launcher entry does it
 * before it makes namespaces: these descriptors stay on the host's cgroup mounts, so the program
 * can still join its v1 cgroups once pid 1 has made the namespace's cgroup mounts read-only (a
 * file opened for writing on a mount would also keep that mount from going read-only). 0, or
 * EXIT_NOT_CONFINED.
 */
static int open_cgroup1(struct options *options) {
  if (options->cgroup1_open) return 0;
  for (size_t i = 0; i < options->ncgroup1; i++) {
    char file[4096];
    int length = snprintf(file, sizeof file, "%s/tasks", options->cgroup1[i]);
    if (length < 0 || (size_t)length >= sizeof file) return fail("cgroup v1 path too long", options->cgroup1[i]);
    options->cgroup1_fd[i] = open(file, O_WRONLY | O_CLOEXEC);
    if (options->cgroup1_fd[i] < 0) return fail("cannot open the cgroup v1", file);
  }
  options->cgroup1_open = 1;
  return 0;
}

/* Closes what open_cgroup1 opened, in a process that joins no cgroup v1 itself (the launcher, pid 1). */
static void close_cgroup1(const struct options *options) {
  /* nothing to undo: a descriptor is only closed early here, exec would close it anyway */
  for (size_t i = 0; options->cgroup1_open && i < options->ncgroup1; i++) (void)close(options->cgroup1_fd[i]);
}

/*
 * A call's bounds besides its cgroup v2. The cgroup v1 hierarchies (memory, pids on a hybrid
 * host) have no CLONE_INTO_CGROUP: the process joins each by writing "0" (the writing thread) to
 * its tasks file, before its rlimits and Landlock (which may deny writes to cgroup files) apply;
 * what it starts inherits the membership. The process has one thread here, so moving the thread
 * moves the process; and a move of the writer's own single thread is the one the kernel makes
 * without taking its global threadgroup lock for writing, which a pid written to cgroup.procs
 * takes and which waits out an RCU grace period (5 to 20 ms per call on a loaded machine, against
 * 0.1 ms this way, measured here). RLIMIT_AS is the memory ceiling where no memory controller is
 * usable.
 */
static int apply_call_bounds(const struct options *options) {
  struct options opened = *options;
  if (open_cgroup1(&opened) != 0) return EXIT_NOT_CONFINED;
  for (size_t i = 0; i < opened.ncgroup1; i++) {
    ssize_t written = write(opened.cgroup1_fd[i], "0", 1);
    (void)close(opened.cgroup1_fd[i]);
    if (written != 1) return fail("cannot join the cgroup v1", opened.cgroup1[i]);
  }
  if (options->address_space > 0) {
    struct rlimit limit = {(rlim_t)options->address_space, (rlim_t)options->address_space};
    if (setrlimit(RLIMIT_AS, &limit) != 0) return fail("cannot set the address-space ceiling", NULL);
  }
  return 0;
}

static long landlock_abi(void) {
  long abi = syscall(SYS_CREATE_RULESET, NULL, 0, CREATE_RULESET_VERSION);
  return abi < 0 ? 0 : abi;
}

/*
 * Enforces `ruleset` on this process (and what it execs and starts). Without CAP_SYS_ADMIN the
 * kernel requires no_new_privs first; with it (a host running as root), no_new_privs is left unset
 * so setuid programs the command runs still work as they would outside toolcap.
 */
static int restrict_self(int ruleset) {
  if (syscall(SYS_RESTRICT_SELF, ruleset, 0) != 0) {
    if (errno != EPERM) return fail("cannot restrict itself", NULL);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return fail("cannot set no_new_privs", NULL);
    if (syscall(SYS_RESTRICT_SELF, ruleset, 0) != 0) return fail("cannot restrict itself", NULL);
  }
  /* the domain is in force; the ruleset's descriptor is not needed any more */
  (void)close(ruleset);
  return 0;
}

/* A mount of this process's mount namespace: where, and the per-mount flags it has. */
struct mount_point {
  char *path;
  unsigned long flags;
};

/* Decodes mountinfo's octal escapes (`\040` for a space) in place. */
static void unescape(char *text) {
  char *out = text;
  for (char *in = text; *in != 0; in++) {
    if (in[0] == '\\' && in[1] >= '0' && in[1] <= '3' && in[2] >= '0' && in[2] <= '7' && in[3] >= '0' && in[3] <= '7') {
      *out++ = (char)((in[1] - '0') * 64 + (in[2] - '0') * 8 + (in[3] - '0'));
      in += 3;
    } else {
      *out++ = *in;
    }
  }
  *out = 0;
}

/* The per-mount flags of a mountinfo options field ("rw,nosuid,relatime"): a remount must keep them. */
static unsigned long mount_flags(char *field) {
  unsigned long flags = 0;
  for (char *save = NULL, *item = strtok_r(field, ",", &save); item != NULL; item = strtok_r(NULL, ",", &save)) {
    if (strcmp(item, "nosuid") == 0) flags |= MS_NOSUID;
    else if (strcmp(item, "nodev") == 0) flags |= MS_NODEV;
    else if (strcmp(item, "noexec") == 0) flags |= MS_NOEXEC;
    else if (strcmp(item, "noatime") == 0) flags |= MS_NOATIME;
    else if (strcmp(item, "nodiratime") == 0) flags |= MS_NODIRATIME;
    else if (strcmp(item, "relatime") == 0) flags |= MS_RELATIME;
  }
  return flags;
}

/*
 * The mounts of file system type `cgroup` or `cgroup2` of this mount namespace (from
 * /proc/self/mountinfo), NULL-path terminated; NULL when mountinfo cannot be read.
 */
static struct mount_point *cgroup_mounts(void) {
  FILE *info = fopen("/proc/self/mountinfo", "re");
  if (info == NULL) return NULL;
  struct mount_point *found = calloc(1, sizeof *found);
  size_t count = 0;
  char *line = NULL;
  size_t room = 0;
  while (found != NULL && getline(&line, &room, info) > 0) {
    /* id parent dev root MOUNTPOINT OPTIONS [optional...] - FSTYPE source superoptions */
    char *field[6] = {0};
    char *save = NULL;
    int n = 0;
    for (char *item = strtok_r(line, " \n", &save); item != NULL; item = n < 6 ? strtok_r(NULL, " \n", &save) : NULL) {
      field[n++] = item;
    }
    if (n < 6) continue;
    char *type = NULL;
    for (char *rest = strtok_r(NULL, " \n", &save); rest != NULL; rest = strtok_r(NULL, " \n", &save)) {
      if (strcmp(rest, "-") == 0) {
        type = strtok_r(NULL, " \n", &save);
        break;
      }
    }
    if (type == NULL || (strcmp(type, "cgroup") != 0 && strcmp(type, "cgroup2") != 0)) continue;
    unescape(field[4]);
    struct mount_point *grown = realloc(found, (count + 2) * sizeof *found);
    char *path = strdup(field[4]);
    if (grown == NULL || path == NULL) {
      free(grown == NULL ? found : grown);
      found = NULL;
      break;
    }
    found = grown;
    found[count++] = (struct mount_point){path, mount_flags(field[5])};
    found[count] = (struct mount_point){NULL, 0};
  }
  free(line);
  (void)fclose(info);
  return found;
}

/* Whether `path` is `dir` or lies beneath it. */
static int beneath(const char *path, const char *dir) {
  size_t n = strlen(dir);
  if (strcmp(dir, "/") == 0) return 1;
  return strncmp(path, dir, n) == 0 && (path[n] == 0 || path[n] == '/');
}

/*
 * Adds rules that grant `rights` beneath `path` except beneath any of `mounts`: Landlock grants by
 * hierarchy, so a tree holding no cgroup mount is granted whole, one holding one is entered and
 * each of its entries granted the same way, and a cgroup mount itself is left out. Symbolic links
 * are not followed (what they name is granted, or not, where it lies). 0, or EXIT_NOT_CONFINED.
 */
static int grant_beneath(int ruleset, const char *path, const struct mount_point *mounts, uint64_t rights) {
  int holds = 0;
  for (const struct mount_point *m = mounts; m->path != NULL; m++) {
    if (strcmp(m->path, path) == 0) return 0;
    if (beneath(m->path, path)) holds = 1;
  }
  if (!holds) {
    int fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    /* gone since it was listed: nothing to grant */
    if (fd < 0) return errno == ENOENT ? 0 : fail("cannot open", path);
    struct stat st;
    if (fstat(fd, &st) != 0) return fail("cannot examine", path);
    if (S_ISLNK(st.st_mode)) {
      (void)close(fd);
      return 0;
    }
    struct path_beneath_attr rule = {.allowed_access = S_ISDIR(st.st_mode) ? rights : rights & ACCESS_WRITE_FILE_ONLY,
                                     .parent_fd = fd};
    if (syscall(SYS_ADD_RULE, ruleset, RULE_PATH_BENEATH, &rule, 0) != 0) return fail("cannot add a rule for", path);
    /* the rule holds its own reference to the path */
    (void)close(fd);
    return 0;
  }
  DIR *dir = opendir(path);
  if (dir == NULL) return fail("cannot list", path);
  int code = 0;
  for (struct dirent *entry; code == 0 && (entry = readdir(dir)) != NULL;) {
    if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0) continue;
    char child[PATH_MAX];
    if (snprintf(child, sizeof child, "%s/%s", strcmp(path, "/") == 0 ? "" : path, entry->d_name) >= (int)sizeof child) {
      errno = ENAMETOOLONG;
      code = fail("cannot name an entry of", path);
      break;
    }
    code = grant_beneath(ruleset, child, mounts, rights);
  }
  (void)closedir(dir);
  return code;
}

/* The write rights the kernel's Landlock `abi` has. */
static uint64_t write_rights(long abi) {
  uint64_t rights = ACCESS_WRITE_V1;
  if (abi >= 2) rights |= ACCESS_REFER;
  if (abi >= 3) rights |= ACCESS_TRUNCATE;
  if (abi >= 5) rights |= ACCESS_IOCTL_DEV;
  return rights;
}

static void free_mounts(struct mount_point *mounts) {
  for (struct mount_point *m = mounts; m != NULL && m->path != NULL; m++) free(m->path);
  free(mounts);
}

/* Applies what `options` asks of the program itself (scopes, cgroupfs, memory); 0, or EXIT_NOT_CONFINED. */
static int apply_to_self(const struct options *options) {
  if (apply_call_bounds(options) != 0) return EXIT_NOT_CONFINED;
  if (options->memory > 0) {
    struct rlimit limit = {(rlim_t)options->memory, (rlim_t)options->memory};
    if (setrlimit(RLIMIT_DATA, &limit) != 0) return fail("cannot set the memory ceiling", NULL);
  }
  if (!options->scope && !options->deny_cgroupfs) return 0;
  long abi = landlock_abi();
  if (options->deny_cgroupfs && abi < ABI_REFER) {
    errno = ENOSYS;
    return fail("cannot keep the program out of cgroupfs (Landlock ABI 2 or later needed)", NULL);
  }
  uint64_t rights = options->deny_cgroupfs ? write_rights(abi) : 0;
  struct ruleset_attr attr = {.handled_access_fs = rights,
                              .scoped = options->scope ? SCOPE_SIGNAL | SCOPE_ABSTRACT_UNIX_SOCKET : 0};
  int ruleset = (int)syscall(SYS_CREATE_RULESET, &attr, options->scope ? sizeof attr : RULESET_ATTR_FS_ONLY, 0);
  if (ruleset < 0) {
    return fail(options->scope ? "cannot create a Landlock scope ruleset (Landlock ABI 6 or later needed)"
                               : "cannot create a Landlock ruleset",
                NULL);
  }
  if (options->deny_cgroupfs) {
    struct mount_point *mounts = cgroup_mounts();
    if (mounts == NULL) return fail("cannot read its mounts", "/proc/self/mountinfo");
    int code = grant_beneath(ruleset, "/", mounts, rights);
    free_mounts(mounts);
    if (code != 0) return code;
  }
  return restrict_self(ruleset);
}

/* Replaces this process by argv[0] (searched in PATH); returns only on failure, with its status. */
static int exec_program(char **argv) {
  execvp(argv[0], argv);
  int code = errno == ENOENT ? EXIT_NOT_FOUND : EXIT_NOT_EXECUTABLE;
  fprintf(stderr, "toolcap-confine: cannot run %s: %s\n", argv[0], strerror(errno));
  return code;
}

static volatile pid_t child_pid = 0;

static void forward(int signal_number) {
  /* a child already gone has nothing to be told; the wait below reports it */
  if (child_pid > 0) (void)kill(child_pid, signal_number);
}

static const int forwarded[] = {SIGTERM, SIGINT, SIGHUP};

/* Dies of `signal_number` as the child did (without a core file of its own); returns only if it cannot. */
static int die_like(int signal_number) {
  struct rlimit no_core = {0, 0};
  /* a core file would be the launcher's, not the child's: refusing it matters less than dying alike */
  if (setrlimit(RLIMIT_CORE, &no_core) != 0) perror("toolcap-confine: cannot refuse a core file");
  /* SIGKILL and SIGSTOP refuse a disposition and cannot be blocked: for them these two fail harmlessly */
  if (signal(signal_number, SIG_DFL) == SIG_ERR && signal_number != SIGKILL && signal_number != SIGSTOP) {
    perror("toolcap-confine: cannot reset the child's signal");
  }
  sigset_t only;
  if (sigemptyset(&only) != 0 || sigaddset(&only, signal_number) != 0 || sigprocmask(SIG_UNBLOCK, &only, NULL) != 0) {
    perror("toolcap-confine: cannot unblock the child's signal");
  }
  if (kill(getpid(), signal_number) != 0) perror("toolcap-confine: cannot end by the child's signal");
  return 128 + signal_number;
}

/* Writes `text` to the file `path` (a /proc file of this process); 0, or -1 with errno. */
static int write_text(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  size_t n = strlen(text);
  ssize_t w = write(fd, text, n);
  int saved = errno;
  (void)close(fd);
  errno = saved;
  return w == (ssize_t)n ? 0 : -1;
}

/*
 * --isolate, in the launcher: a mount namespace of its own and a PID namespace for its next child
 * (which becomes that namespace's pid 1). Root makes them directly; any other user first makes a
 * user namespace that maps its own uid and gid to themselves (unprivileged user namespaces), so
 * the call keeps its identity and gets no right outside it. 0, or EXIT_NOT_CONFINED.
 */
static int enter_namespaces(void) {
  if (unshare(CLONE_NEWNS | CLONE_NEWPID) == 0) return 0;
  if (errno != EPERM) return fail("cannot make mount and PID namespaces", NULL);
  uid_t uid = geteuid();
  gid_t gid = getegid();
  if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID) != 0) {
    return fail("cannot make user, mount and PID namespaces (unprivileged user namespaces are off here)", NULL);
  }
  char map[64];
  /* setgroups must be denied before an unprivileged process may write its gid map */
  if (write_text("/proc/self/setgroups", "deny") != 0) return fail("cannot deny setgroups", NULL);
  snprintf(map, sizeof map, "%u %u 1", (unsigned)uid, (unsigned)uid);
  if (write_text("/proc/self/uid_map", map) != 0) return fail("cannot map its uid", NULL);
  snprintf(map, sizeof map, "%u %u 1", (unsigned)gid, (unsigned)gid);
  if (write_text("/proc/self/gid_map", map) != 0) return fail("cannot map its gid", NULL);
  return 0;
}

/*
 * --isolate, in the namespaces' pid 1: mounts of its own (no mount made here reaches the host),
 * every cgroup mount read-only, a tmpfs of `shm_bytes` on /dev/shm (what the call puts there is
 * bounded and goes with the namespace) and a /proc of the new PID namespace (no process outside
 * the call is listed, so no host's environ, cmdline or maps can be opened). 0, or EXIT_NOT_CONFINED.
 */
static int isolate_mounts(unsigned long long shm_bytes) {
  if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) != 0) return fail("cannot make its mounts its own", NULL);
  struct mount_point *mounts = cgroup_mounts();
  if (mounts == NULL) return fail("cannot read its mounts", "/proc/self/mountinfo");
  for (struct mount_point *m = mounts; m->path != NULL; m++) {
    /* a bind remount changes this mount's flags only; the ones it has are kept (a user namespace
       may not clear them) */
    if (mount(NULL, m->path, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | m->flags, NULL) != 0) {
      return fail("cannot make a cgroup mount read-only:", m->path);
    }
  }
  free_mounts(mounts);
  char data[64];
  snprintf(data, sizeof data, "size=%llu,mode=1777", shm_bytes);
  if (mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, data) != 0) return fail("cannot mount", "/dev/shm");
  if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0) return fail("cannot mount", "/proc");
  return 0;
}

static void release_stdio(void);

/*
 * --isolate: pid 1 of the call's PID namespace, outside the call's cgroup. The kernel ends every
 * process of the namespace when its pid 1 exits, so this process does not run the program itself:
 * it starts it inside the cgroup `cgroup` (when not -1) (session,
 * restrictions and all, as the launcher's child would be), relays SIGTERM, SIGINT and SIGHUP to
 * it, sends its wait status through `report` when it ends (the launcher exits with it then, as it
 * would without namespaces), and reaps what the call leaves behind until nothing is left: a
 * background process of the call runs on after the shell exits, as it does without namespaces,
 * until it ends or the host stops the call's cgroup; with nothing left this process exits.
 */
static int run_init(const struct options *options, char **argv, int report, int cgroup) {
  if (isolate_mounts(options->isolate) != 0) return EXIT_NOT_CONFINED;
  sigset_t relayed, before;
  if (sigemptyset(&relayed) != 0) return fail("cannot build a signal set", NULL);
  for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++) {
    if (sigaddset(&relayed, forwarded[i]) != 0) return fail("cannot build a signal set", NULL);
  }
  if (sigprocmask(SIG_BLOCK, &relayed, &before) != 0) return fail("cannot block signals", NULL);
  /* the program alone goes into the call's cgroup: this process stays outside it, so the host
     finds and stops there what the call started, as without namespaces */
  struct clone_args args = {.flags = cgroup >= 0 ? CLONE_INTO_CGROUP : 0,
                            .exit_signal = SIGCHLD,
                            .cgroup = cgroup >= 0 ? (uint64_t)cgroup : 0};
  pid_t shell = (pid_t)syscall(SYS_CLONE3, &args, sizeof args);
  if (shell < 0) return fail("cannot start a process in the cgroup", options->cgroup);
  if (cgroup >= 0) (void)close(cgroup);
  if (shell == 0) {
    (void)close(report);
    if (sigprocmask(SIG_SETMASK, &before, NULL) != 0) _exit(fail("cannot restore the signal mask", NULL));
    if (setsid() < 0) _exit(fail("cannot start a session", NULL));
    if (apply_to_self(options) != 0) _exit(EXIT_NOT_CONFINED);
    _exit(exec_program(argv));
  }
  child_pid = shell;
  /* the program joined its v1 cgroups through these; pid 1 stays outside them, as outside the v2 one */
  close_cgroup1(options);
  struct sigaction action = {.sa_handler = forward};
  if (sigemptyset(&action.sa_mask) != 0) perror("toolcap-confine: cannot build a signal set");
  for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++) {
    /* pid 1 of a namespace gets only the signals it handles: without a handler the relay is lost,
       and the host still stops the call from its cgroup, so this is reported but not fatal */
    if (sigaction(forwarded[i], &action, NULL) != 0) perror("toolcap-confine: cannot relay a signal");
  }
  if (sigprocmask(SIG_SETMASK, &before, NULL) != 0) perror("toolcap-confine: cannot restore the signal mask");
  release_stdio();
  for (;;) {
    int status;
    pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      /* ECHILD: nothing of the call is left */
      return 0;
    }
    if (pid != shell) continue;
    child_pid = 0;
    /* the launcher gone has nothing to be told: the host learns the end from the launcher's exit */
    if (write(report, &status, sizeof status) != (ssize_t)sizeof status) perror("toolcap-confine: cannot report the exit");
    (void)close(report);
  }
}

/* The call's pipes are the program's alone: 0, 1 and 2 go to /dev/null (they still close at exit otherwise). */
static void release_stdio(void) {
  int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null < 0) perror("toolcap-confine: cannot open /dev/null");
  for (int fd = 0; null >= 0 && fd <= 2; fd++) {
    if (dup2(null, fd) < 0) perror("toolcap-confine: cannot release a descriptor of the call");
  }
  if (null > 2) (void)close(null);
}

/*
 * Runs argv[0] in a session of its own inside the cgroup `options->cgroup`, with `options`
 * applied to it; returns its exit status, or dies of its signal.
 */
static int run_in_cgroup(struct options *options, char **argv) {
  /* the host starts the launcher in its own session (no new session: on Linux each is a scheduler
     autogroup, costly to make and free, and the child makes the one the call needs); a process
     group of its own keeps a terminal's signals to the host's group from reaching it */
  if (setpgid(0, 0) != 0) return fail("cannot make its own process group", NULL);
  int cgroup = -1;
  if (options->cgroup != NULL) {
    cgroup = open(options->cgroup, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (cgroup < 0) return fail("cannot open the cgroup", options->cgroup);
  }
  /* the v1 cgroups are opened on the host's mounts: in namespaces they are read-only (open_cgroup1) */
  if (open_cgroup1(options) != 0) return EXIT_NOT_CONFINED;
  /* --isolate: the namespaces, and the pipe pid 1 reports the program's end through */
  int report[2] = {-1, -1};
  if (options->isolate > 0) {
    if (enter_namespaces() != 0) return EXIT_NOT_CONFINED;
    if (pipe2(report, O_CLOEXEC) != 0) return fail("cannot make a pipe", NULL);
  }
  /* blocked until the handlers are in place: a signal sent meanwhile is forwarded, not lost */
  sigset_t relayed, before;
  if (sigemptyset(&relayed) != 0) return fail("cannot build a signal set", NULL);
  for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++) {
    if (sigaddset(&relayed, forwarded[i]) != 0) return fail("cannot build a signal set", NULL);
  }
  if (sigprocmask(SIG_BLOCK, &relayed, &before) != 0) return fail("cannot block signals", NULL);
  /* with namespaces the child is their pid 1, which puts the program into the cgroup itself */
  int into = cgroup >= 0 && options->isolate == 0;
  struct clone_args args = {.flags = into ? CLONE_INTO_CGROUP : 0,
                            .exit_signal = SIGCHLD,
                            .cgroup = into ? (uint64_t)cgroup : 0};
  long pid = syscall(SYS_CLONE3, &args, sizeof args);
  if (pid < 0) return fail("cannot start a process in the cgroup", options->cgroup);
  if (pid == 0) {
    if (sigprocmask(SIG_SETMASK, &before, NULL) != 0) _exit(fail("cannot restore the signal mask", NULL));
    if (options->isolate > 0) {
      (void)close(report[0]);
      _exit(run_init(options, argv, report[1], cgroup));
    }
    /* its own session and process group, as a detached spawn would give it */
    if (setsid() < 0) _exit(fail("cannot start a session", NULL));
    if (apply_to_self(options) != 0) _exit(EXIT_NOT_CONFINED);
    _exit(exec_program(argv));
  }
  child_pid = (pid_t)pid;
  /* the child holds its own reference to the cgroup and the v1 cgroups now */
  if (cgroup >= 0) (void)close(cgroup);
  close_cgroup1(options);
  struct sigaction action = {.sa_handler = forward};
  if (sigemptyset(&action.sa_mask) != 0) perror("toolcap-confine: cannot build a signal set");
  for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++) {
    /* the child runs already: without a handler a relayed signal ends the launcher, and the host
       still stops the call from its cgroup, so this is reported but not fatal */
    if (sigaction(forwarded[i], &action, NULL) != 0) perror("toolcap-confine: cannot relay a signal");
  }
  if (sigprocmask(SIG_SETMASK, &before, NULL) != 0) perror("toolcap-confine: cannot restore the signal mask");
  release_stdio();
  if (options->isolate > 0) {
    (void)close(report[1]);
    /* the program's end as pid 1 saw it; without one (pid 1 was killed), pid 1's own end */
    int reported;
    ssize_t got;
    while ((got = read(report[0], &reported, sizeof reported)) < 0 && errno == EINTR) {
    }
    if (got == (ssize_t)sizeof reported) {
      if (WIFEXITED(reported)) return WEXITSTATUS(reported);
      return die_like(WTERMSIG(reported));
    }
  }
  int status;
  while (waitpid(child_pid, &status, 0) < 0) {
    if (errno != EINTR) return EXIT_NOT_CONFINED;
  }
  child_pid = 0;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return die_like(WTERMSIG(status));
}

/* Reads a positive byte count into `bytes`: 0, or -1 when `text` is not one. */
static int parse_bytes(const char *text, unsigned long long *bytes) {
  char *end;
  /* digits only: strtoull would take a sign or leading blanks */
  if (text[0] < '0' || text[0] > '9') return -1;
  errno = 0;
  unsigned long long value = strtoull(text, &end, 10);
  if (errno != 0 || end == text || *end != 0 || value == 0) return -1;
  *bytes = value;
  return 0;
}

/* A request larger than this is refused (the environment and a command, far below any real limit). */
#define MAX_REQUEST (64UL << 20)

/* The fields of a request body (NUL-terminated, the last one included); NULL on a bad body. */
static char **fields_of(char *body, size_t size, size_t *count) {
  if (size == 0 || body[size - 1] != 0) return NULL;
  size_t n = 0;
  for (size_t i = 0; i < size; i++) n += body[i] == 0;
  char **field = calloc(n + 1, sizeof *field);
  if (field == NULL) return NULL;
  size_t at = 0;
  for (char *p = body; p < body + size; p += strlen(p) + 1) field[at++] = p;
  field[at] = NULL;
  *count = n;
  return field;
}

/* Reads a request's options field: "-" or a comma list of "scope", "deny-cgroupfs", "memory=BYTES",
   "as=BYTES", "cgroup1=DIR" (repeatable), "isolate=BYTES". */
static int parse_request_options(char *text, struct options *options) {
  if (strcmp(text, "-") == 0) return 0;
  for (char *save = NULL, *item = strtok_r(text, ",", &save); item != NULL; item = strtok_r(NULL, ",", &save)) {
    if (strcmp(item, "scope") == 0) options->scope = 1;
    else if (strcmp(item, "deny-cgroupfs") == 0) options->deny_cgroupfs = 1;
    else if (strncmp(item, "memory=", 7) == 0 && parse_bytes(item + 7, &options->memory) == 0) continue;
    else if (strncmp(item, "isolate=", 8) == 0 && parse_bytes(item + 8, &options->isolate) == 0) continue;
    else if (strncmp(item, "as=", 3) == 0 && parse_bytes(item + 3, &options->address_space) == 0) continue;
    else if (strncmp(item, "cgroup1=", 8) == 0 && add_cgroup1(options, item + 8) == 0) continue;
    else return -1;
  }
  return 0;
}

/*
 * Runs a request's fields as --cgroup does and returns its exit status. "run": the cgroup DIR, the
 * working directory, the argument count N, N arguments (FILE first), then the environment.
 * "run-with": an options field first (see parse_request_options), then the same.
 */
static int run_request(int with_options, char **field, size_t fields) {
  struct options options = {0};
  if (with_options) {
    if (fields < 1 || parse_request_options(field[0], &options) != 0) {
      errno = EINVAL;
      return fail("bad request options", NULL);
    }
    field++;
    fields--;
  }
  char *end;
  unsigned long count = fields >= 3 ? strtoul(field[2], &end, 10) : 0;
  if (fields < 3 || *end != 0 || count == 0 || count > fields - 3) {
    errno = EINVAL;
    return fail("bad request fields", NULL);
  }
  /* the arguments end where the environment starts: that field becomes argv's NULL */
  char **env = calloc(fields - 3 - count + 1, sizeof *env);
  if (env == NULL) return fail("cannot hold the request", NULL);
  for (size_t i = 3 + count; i < fields; i++) env[i - 3 - count] = field[i];
  field[3 + count] = NULL;
  if (chdir(field[1]) != 0) return fail("cannot enter the working directory", field[1]);
  environ = env;
  options.cgroup = field[0];
  return run_in_cgroup(&options, field + 3);
}

/* A call started by the server whose pipes' read ends it still holds (until the host took them). */
struct started {
  pid_t pid;
  int out, err;
};

static void reply(const char *line) {
  size_t left = strlen(line);
  while (left > 0) {
    ssize_t w = write(1, line, left);
    if (w < 0 && errno == EINTR) continue;
    /* the host is gone: nothing to serve */
    if (w <= 0) _exit(0);
    line += w;
    left -= (size_t)w;
  }
}

/* Closes descriptors the server no longer needs; a failure leaves nothing to undo. */
static void close_all(int a, int b) {
  (void)close(a);
  (void)close(b);
}

/* The answer to the call `id` that started nothing (the host may start it another way). */
static void reply_not_started(unsigned long id) {
  char line[64];
  snprintf(line, sizeof line, "S %lu -1 0 0\n", id);
  reply(line);
}

/* Starts one call: its pipes, and a launcher (a fork of this small process) that runs it in its cgroup. */
static void start_call(unsigned long id, int with_options, char **field, size_t fields, struct started **calls,
                       size_t *ncalls, const sigset_t *before) {
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0) {
    reply_not_started(id);
    return;
  }
  if (pipe2(err, O_CLOEXEC) != 0) {
    close_all(out[0], out[1]);
    reply_not_started(id);
    return;
  }
  /* the list of started calls grows before the fork: a call the server could not follow would
     keep its read ends open here until the server exits */
  struct started *grown = realloc(*calls, (*ncalls + 1) * sizeof **calls);
  if (grown == NULL) {
    close_all(out[0], out[1]);
    close_all(err[0], err[1]);
    reply_not_started(id);
    return;
  }
  *calls = grown;
  pid_t pid = fork();
  if (pid == 0) {
    /* the call gets the signal state a host's spawn would give it */
    if (signal(SIGPIPE, SIG_DFL) == SIG_ERR || sigprocmask(SIG_SETMASK, before, NULL) != 0) {
      _exit(fail("cannot reset the signal state", NULL));
    }
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null < 0 || dup2(null, 0) < 0 || dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0) _exit(EXIT_NOT_CONFINED);
    _exit(run_request(with_options, field, fields));
  }
  close_all(out[1], err[1]);
  if (pid < 0) {
    close_all(out[0], err[0]);
    reply_not_started(id);
    return;
  }
  (*calls)[(*ncalls)++] = (struct started){pid, out[0], err[0]};
  char line[96];
  snprintf(line, sizeof line, "S %lu %d %d %d\n", id, (int)pid, out[0], err[0]);
  reply(line);
}

/*
 * --server: calls from stdin, each a decimal byte count, a newline and that many bytes of
 * NUL-terminated fields. "run", the call's ID (decimal, the host's choice: the answer names it), then
 * the fields of --cgroup's request (the cgroup DIR, the working directory, the argument count N, N
 * arguments with FILE first, the environment as NAME=VALUE), or "run-with", the ID, an options field
 * ("-", or a comma list of "scope", "deny-cgroupfs", "memory=BYTES", "as=BYTES", "cgroup1=DIR" and
 * "isolate=BYTES") and the same:
 * the server makes the call's stdout and stderr pipes and forks a launcher that runs it as
 * --cgroup does (stdin /dev/null), then answers "S ID PID OUT ERR": the launcher's pid and the
 * numbers of its own descriptors for the pipes' read ends, which the host opens through
 * /proc/<server>/fd ("S ID -1 0 0": nothing started). "ack" then PID: the host holds the read ends,
 * the server closes its own. When a launcher ends: "X PID CODE SIGNAL" (CODE -1 when it died of
 * SIGNAL). End of file on stdin ends the server; calls already started run on as their own.
 */
static int server(void) {
  sigset_t children, before;
  if (sigemptyset(&children) != 0 || sigaddset(&children, SIGCHLD) != 0) return fail("cannot build a signal set", NULL);
  if (sigprocmask(SIG_BLOCK, &children, &before) != 0) return fail("cannot block SIGCHLD", NULL);
  int sfd = signalfd(-1, &children, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd < 0) return fail("cannot watch its children", NULL);
  if (signal(SIGPIPE, SIG_IGN) == SIG_ERR) return fail("cannot ignore SIGPIPE", NULL);
  /* nothing of the server's own may reach a call's stderr or the host's */
  int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (null < 0 || dup2(null, 2) < 0) return fail("cannot silence its stderr", NULL);
  struct started *calls = NULL;
  size_t ncalls = 0;
  char *buffer = NULL;
  size_t have = 0, room = 0;
  for (;;) {
    struct pollfd watch[2] = {{.fd = 0, .events = POLLIN}, {.fd = sfd, .events = POLLIN}};
    if (poll(watch, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return EXIT_NOT_CONFINED;
    }
    if (watch[1].revents != 0) {
      struct signalfd_siginfo info;
      /* drained only to clear it: which children ended is asked of waitpid below */
      while (read(sfd, &info, sizeof info) > 0) {
      }
      int status;
      pid_t pid;
      while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        char line[64];
        if (WIFEXITED(status)) snprintf(line, sizeof line, "X %d %d 0\n", (int)pid, WEXITSTATUS(status));
        else snprintf(line, sizeof line, "X %d -1 %d\n", (int)pid, WTERMSIG(status));
        reply(line);
      }
    }
    if (watch[0].revents == 0) continue;
    if (have == room) {
      room = room == 0 ? 65536 : room * 2;
      if (room > 2 * MAX_REQUEST) return fail("request too long", NULL);
      char *grown = realloc(buffer, room);
      if (grown == NULL) return fail("cannot hold the request", NULL);
      buffer = grown;
    }
    ssize_t got = read(0, buffer + have, room - have);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return 0;
    have += (size_t)got;
    for (;;) {
      char *newline = memchr(buffer, '\n', have < 24 ? have : 24);
      if (newline == NULL) {
        if (have >= 24) return fail("request header too long", NULL);
        break;
      }
      *newline = 0;
      char *end;
      unsigned long size = strtoul(buffer, &end, 10);
      if (end == buffer || *end != 0 || size == 0 || size > MAX_REQUEST) {
        errno = EINVAL;
        return fail("bad request size", buffer);
      }
      size_t head = (size_t)(newline + 1 - buffer);
      if (have < head + size) {
        *newline = '\n';
        break;
      }
      char *body = buffer + head;
      size_t count;
      char **field = fields_of(body, size, &count);
      if (field == NULL || count < 1) return fail("bad request fields", NULL);
      if ((strcmp(field[0], "run") == 0 || strcmp(field[0], "run-with") == 0) && count >= 2) {
        char *id_end = field[1];
        unsigned long id = 0;
        /* digits only: strtoul would take a sign or leading blanks */
        if (field[1][0] >= '0' && field[1][0] <= '9') id = strtoul(field[1], &id_end, 10);
        if (id_end == field[1] || *id_end != 0) {
          errno = EINVAL;
          return fail("bad request id", field[1]);
        }
        start_call(id, strcmp(field[0], "run-with") == 0, field + 2, count - 2, &calls, &ncalls, &before);
      } else if (strcmp(field[0], "ack") == 0 && count == 2) {
        pid_t pid = (pid_t)atoi(field[1]);
        for (size_t i = 0; i < ncalls; i++) {
          if (calls[i].pid != pid) continue;
          close_all(calls[i].out, calls[i].err);
          calls[i] = calls[--ncalls];
          break;
        }
      } else {
        errno = EINVAL;
        return fail("unknown request", field[0]);
      }
      free(field);
      memmove(buffer, body + size, have - head - size);
      have -= head + size;
    }
  }
}

/* --read: a ruleset that lets the program read beneath the given paths only, then execs it by path. */
static int run_reading_beneath(char **reads, size_t nreads, const struct options *options, char **argv) {
  int with_scope = options->scope && landlock_abi() >= ABI_SCOPES;
  if (options->scope && !with_scope) {
    errno = ENOSYS;
    return fail("cannot scope the program (Landlock ABI 6 or later needed)", NULL);
  }
  struct ruleset_attr attr = {
      .handled_access_fs = ACCESS_READ_FILE | ACCESS_READ_DIR,
      .scoped = with_scope ? SCOPE_SIGNAL | SCOPE_ABSTRACT_UNIX_SOCKET : 0};
  int ruleset = (int)syscall(SYS_CREATE_RULESET, &attr, with_scope ? sizeof attr : RULESET_ATTR_FS_ONLY, 0);
  if (ruleset < 0) return fail("cannot create a Landlock ruleset", NULL);
  for (size_t i = 0; i < nreads; i++) {
    int fd = open(reads[i], O_PATH | O_CLOEXEC);
    if (fd < 0) {
      /* a root that does not exist (a scratch dir before its first spill) grants nothing */
      if (errno == ENOENT) continue;
      return fail("cannot open", reads[i]);
    }
    struct stat st;
    if (fstat(fd, &st) != 0) return fail("cannot examine", reads[i]);
    struct path_beneath_attr rule = {
        .allowed_access = S_ISDIR(st.st_mode) ? (ACCESS_READ_FILE | ACCESS_READ_DIR) : ACCESS_READ_FILE,
        .parent_fd = fd};
    if (syscall(SYS_ADD_RULE, ruleset, RULE_PATH_BENEATH, &rule, 0) != 0) return fail("cannot add a rule for", reads[i]);
    /* the rule holds its own reference to the path */
    (void)close(fd);
  }
  if (options->memory > 0) {
    struct rlimit limit = {(rlim_t)options->memory, (rlim_t)options->memory};
    if (setrlimit(RLIMIT_DATA, &limit) != 0) return fail("cannot set the memory ceiling", NULL);
  }
  /* always no_new_privs here: a reader never needs to gain privileges */
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return fail("cannot set no_new_privs", NULL);
  if (restrict_self(ruleset) != 0) return EXIT_NOT_CONFINED;
  execv(argv[0], argv);
  return fail("cannot run", argv[0]);
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--server") == 0) return server();
  if (argc == 2 && strcmp(argv[1], "--probe") == 0) {
    if (printf("%ld\n", landlock_abi()) < 0) return EXIT_NOT_CONFINED;
    return 0;
  }
  struct options options = {0};
  char **reads = calloc((size_t)argc, sizeof *reads);
  if (reads == NULL) return fail("cannot hold the arguments", NULL);
  size_t nreads = 0;
  int at = 1;
  for (; at < argc && strcmp(argv[at], "--") != 0; at++) {
    if (strcmp(argv[at], "--scope") == 0) {
      options.scope = 1;
      continue;
    }
    if (strcmp(argv[at], "--deny-cgroupfs") == 0) {
      options.deny_cgroupfs = 1;
      continue;
    }
    if (at + 1 >= argc) return usage();
    if (strcmp(argv[at], "--read") == 0) reads[nreads++] = argv[++at];
    else if (strcmp(argv[at], "--cgroup") == 0 && options.cgroup == NULL) options.cgroup = argv[++at];
    else if (strcmp(argv[at], "--memory") == 0 && parse_bytes(argv[at + 1], &options.memory) == 0) at++;
    else if (strcmp(argv[at], "--isolate") == 0 && parse_bytes(argv[at + 1], &options.isolate) == 0) at++;
    else if (strcmp(argv[at], "--address-space") == 0 && parse_bytes(argv[at + 1], &options.address_space) == 0) at++;
    else if (strcmp(argv[at], "--cgroup1") == 0 && add_cgroup1(&options, argv[at + 1]) == 0) at++;
    else return usage();
  }
  if (at >= argc - 1) return usage();
  char **program = argv + at + 1;
  if (nreads > 0) {
    /* a reader runs in place; the cgroup entry is for the shell of a call */
    if (options.cgroup != NULL || options.isolate > 0 || options.deny_cgroupfs) return usage();
    return run_reading_beneath(reads, nreads, &options, program);
  }
  /* namespaces need the launcher as the program's parent, with or without a cgroup */
  if (options.cgroup != NULL || options.isolate > 0) return run_in_cgroup(&options, program);
  /* scopes or a memory ceiling alone: applied here, then the program replaces the launcher */
  if (apply_to_self(&options) != 0) return EXIT_NOT_CONFINED;
  return exec_program(program);
}
