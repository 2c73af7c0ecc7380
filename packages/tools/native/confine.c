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
 *       --cgroup1 DIR    FILE joins the cgroup v1 DIR (its cgroup.procs) before anything else
 *                        is applied to it (repeatable, up to 4: one per v1 controller)
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
  return fail("usage: toolcap-confine [--read PATH]... [--cgroup DIR] [--scope] [--memory BYTES] [--address-space BYTES] [--cgroup1 DIR]... -- FILE ARG...", NULL);
}

/*
 * A call's bounds besides its cgroup v2. The cgroup v1 hierarchies (memory, pids on a hybrid
 * host) have no CLONE_INTO_CGROUP: the process joins each by writing its own pid to cgroup.procs,
 * before its rlimits and Landlock (which may deny writes to cgroup files) apply; what it starts
 * inherits the membership. RLIMIT_AS is the memory ceiling where no memory controller is usable.
 */
static int apply_call_bounds(const struct options *options) {
  for (size_t i = 0; i < options->ncgroup1; i++) {
    char file[4096], pid[32];
    int length = snprintf(file, sizeof file, "%s/cgroup.procs", options->cgroup1[i]);
    if (length < 0 || (size_t)length >= sizeof file) return fail("cgroup v1 path too long", options->cgroup1[i]);
    int fd = open(file, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return fail("cannot open the cgroup v1", file);
    int size = snprintf(pid, sizeof pid, "%ld", (long)getpid());
    ssize_t written = write(fd, pid, (size_t)size);
    (void)close(fd);
    if (written != size) return fail("cannot join the cgroup v1", options->cgroup1[i]);
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

/* Applies what `options` asks of the program itself (scopes, memory); 0, or EXIT_NOT_CONFINED. */
static int apply_to_self(const struct options *options) {
  if (apply_call_bounds(options) != 0) return EXIT_NOT_CONFINED;
  if (options->memory > 0) {
    struct rlimit limit = {(rlim_t)options->memory, (rlim_t)options->memory};
    if (setrlimit(RLIMIT_DATA, &limit) != 0) return fail("cannot set the memory ceiling", NULL);
  }
  if (options->scope) {
    struct ruleset_attr attr = {.scoped = SCOPE_SIGNAL | SCOPE_ABSTRACT_UNIX_SOCKET};
    int ruleset = (int)syscall(SYS_CREATE_RULESET, &attr, sizeof attr, 0);
    if (ruleset < 0) return fail("cannot create a Landlock scope ruleset (Landlock ABI 6 or later needed)", NULL);
    if (restrict_self(ruleset) != 0) return EXIT_NOT_CONFINED;
  }
  return 0;
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

/*
 * Runs argv[0] in a session of its own inside the cgroup `options->cgroup`, with `options`
 * applied to it; returns its exit status, or dies of its signal.
 */
static int run_in_cgroup(const struct options *options, char **argv) {
  /* the host starts the launcher in its own session (no new session: on Linux each is a scheduler
     autogroup, costly to make and free, and the child makes the one the call needs); a process
     group of its own keeps a terminal's signals to the host's group from reaching it */
  if (setpgid(0, 0) != 0) return fail("cannot make its own process group", NULL);
  int cgroup = open(options->cgroup, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (cgroup < 0) return fail("cannot open the cgroup", options->cgroup);
  /* blocked until the handlers are in place: a signal sent meanwhile is forwarded, not lost */
  sigset_t relayed, before;
  if (sigemptyset(&relayed) != 0) return fail("cannot build a signal set", NULL);
  for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++) {
    if (sigaddset(&relayed, forwarded[i]) != 0) return fail("cannot build a signal set", NULL);
  }
  if (sigprocmask(SIG_BLOCK, &relayed, &before) != 0) return fail("cannot block signals", NULL);
  struct clone_args args = {.flags = CLONE_INTO_CGROUP, .exit_signal = SIGCHLD, .cgroup = (uint64_t)cgroup};
  long pid = syscall(SYS_CLONE3, &args, sizeof args);
  if (pid < 0) return fail("cannot start a process in the cgroup", options->cgroup);
  if (pid == 0) {
    if (sigprocmask(SIG_SETMASK, &before, NULL) != 0) _exit(fail("cannot restore the signal mask", NULL));
    /* its own session and process group, as a detached spawn would give it */
    if (setsid() < 0) _exit(fail("cannot start a session", NULL));
    if (apply_to_self(options) != 0) _exit(EXIT_NOT_CONFINED);
    _exit(exec_program(argv));
  }
  child_pid = (pid_t)pid;
  /* the child holds its own reference to the cgroup now */
  (void)close(cgroup);
  struct sigaction action = {.sa_handler = forward};
  if (sigemptyset(&action.sa_mask) != 0) perror("toolcap-confine: cannot build a signal set");
  for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++) {
    /* the child runs already: without a handler a relayed signal ends the launcher, and the host
       still stops the call from its cgroup, so this is reported but not fatal */
    if (sigaction(forwarded[i], &action, NULL) != 0) perror("toolcap-confine: cannot relay a signal");
  }
  if (sigprocmask(SIG_SETMASK, &before, NULL) != 0) perror("toolcap-confine: cannot restore the signal mask");
  /* the call's pipes are the child's alone: they end when the last process of the call closes them
     (if they cannot be dropped here they still close when the launcher exits, with the child) */
  int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null < 0) perror("toolcap-confine: cannot open /dev/null");
  for (int fd = 0; null >= 0 && fd <= 2; fd++) {
    if (dup2(null, fd) < 0) perror("toolcap-confine: cannot release a descriptor of the call");
  }
  if (null > 2) (void)close(null);
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

/* Reads a request's options field: "-" or a comma list of "scope" and "memory=BYTES". */
static int parse_request_options(char *text, struct options *options) {
  if (strcmp(text, "-") == 0) return 0;
  for (char *save = NULL, *item = strtok_r(text, ",", &save); item != NULL; item = strtok_r(NULL, ",", &save)) {
    if (strcmp(item, "scope") == 0) options->scope = 1;
    else if (strncmp(item, "memory=", 7) == 0 && parse_bytes(item + 7, &options->memory) == 0) continue;
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

/* Starts one call: its pipes, and a launcher (a fork of this small process) that runs it in its cgroup. */
static void start_call(int with_options, char **field, size_t fields, struct started **calls, size_t *ncalls,
                       const sigset_t *before) {
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0) {
    reply("S -1 0 0\n");
    return;
  }
  if (pipe2(err, O_CLOEXEC) != 0) {
    close_all(out[0], out[1]);
    reply("S -1 0 0\n");
    return;
  }
  /* the list of started calls grows before the fork: a call the server could not follow would
     keep its read ends open here until the server exits */
  struct started *grown = realloc(*calls, (*ncalls + 1) * sizeof **calls);
  if (grown == NULL) {
    close_all(out[0], out[1]);
    close_all(err[0], err[1]);
    reply("S -1 0 0\n");
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
    reply("S -1 0 0\n");
    return;
  }
  (*calls)[(*ncalls)++] = (struct started){pid, out[0], err[0]};
  char line[64];
  snprintf(line, sizeof line, "S %d %d %d\n", (int)pid, out[0], err[0]);
  reply(line);
}

/*
 * --server: calls from stdin, each a decimal byte count, a newline and that many bytes of
 * NUL-terminated fields. "run" then the fields of --cgroup's request (the cgroup DIR, the working
 * directory, the argument count N, N arguments with FILE first, the environment as NAME=VALUE), or
 * "run-with" then an options field ("-", or a comma list of "scope" and "memory=BYTES") and the same:
 * the server makes the call's stdout and stderr pipes and forks a launcher that runs it as
 * --cgroup does (stdin /dev/null), then answers "S PID OUT ERR": the launcher's pid and the
 * numbers of its own descriptors for the pipes' read ends, which the host opens through
 * /proc/<server>/fd ("S -1 0 0": nothing started). "ack" then PID: the host holds the read ends,
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
      if (strcmp(field[0], "run") == 0 || strcmp(field[0], "run-with") == 0) {
        start_call(strcmp(field[0], "run-with") == 0, field + 1, count - 1, &calls, &ncalls, &before);
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
    if (at + 1 >= argc) return usage();
    if (strcmp(argv[at], "--read") == 0) reads[nreads++] = argv[++at];
    else if (strcmp(argv[at], "--cgroup") == 0 && options.cgroup == NULL) options.cgroup = argv[++at];
    else if (strcmp(argv[at], "--memory") == 0 && parse_bytes(argv[at + 1], &options.memory) == 0) at++;
    else if (strcmp(argv[at], "--address-space") == 0 && parse_bytes(argv[at + 1], &options.address_space) == 0) at++;
    else if (strcmp(argv[at], "--cgroup1") == 0 && add_cgroup1(&options, argv[at + 1]) == 0) at++;
    else return usage();
  }
  if (at >= argc - 1) return usage();
  char **program = argv + at + 1;
  if (nreads > 0) {
    /* a reader runs in place; the cgroup entry is for the shell of a call */
    if (options.cgroup != NULL) return usage();
    return run_reading_beneath(reads, nreads, &options, program);
  }
  if (options.cgroup != NULL) return run_in_cgroup(&options, program);
  /* scopes or a memory ceiling alone: applied here, then the program replaces the launcher */
  if (apply_to_self(&options) != 0) return EXIT_NOT_CONFINED;
  return exec_program(program);
}
