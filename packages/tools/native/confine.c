/*
 * toolcap-confine: runs a program confined by Landlock to reading beneath the given paths, or
 * started inside a given cgroup.
 *
 *   toolcap-confine --probe                     prints the kernel's Landlock ABI (0: none), exits 0
 *   toolcap-confine [--read PATH]... -- EXE ARG... applies the ruleset, then execs EXE
 *   toolcap-confine --cgroup DIR -- FILE ARG...  runs FILE (searched in PATH, as a shell does) in
 *                                                a session of its own inside the cgroup DIR
 *   toolcap-confine --serve                      waits for one request on stdin, then runs it as
 *                                                --cgroup does
 *
 * The serve mode lets a host start the launcher before it has a call for it (the host's fork and
 * exec off the call's path). The request is a decimal byte count and a newline, then that many
 * bytes of NUL-terminated fields: the cgroup DIR, the working directory, the argument count N, N
 * arguments (FILE first), then the child's environment, one NAME=VALUE per field. Its stdin is
 * replaced by /dev/null once the request is read (the child's stdin). End of file before a whole
 * request (the host went away, or dropped it) ends it with status 0, nothing run.
 *
 * The cgroup mode creates the child directly inside the cgroup (clone3 with CLONE_INTO_CGROUP,
 * Linux 5.7+): unlike writing a pid into `cgroup.procs`, which takes the kernel's threadgroup lock
 * for writing and waits out an RCU grace period (milliseconds), the fork path takes it for reading
 * only. The launcher stays as the child's parent: it forwards SIGTERM, SIGINT and SIGHUP to it,
 * holds none of the descriptors it was given (0, 1 and 2 go to /dev/null once the child runs),
 * and exits when the child does, with its exit status or by the same signal. Exit status 125: the
 * child could not be created in the cgroup (nothing ran); 127: FILE was not found; 126: it could
 * not be executed (the statuses of a shell and of env).
 *
 * Only reading is restricted (files and directory listings); EXE itself must lie beneath a --read
 * path, since the kernel checks the exec'd file like any file opened for reading. Any failure to
 * apply the ruleset ends with exit status 125 and a message on stderr: the program never runs
 * unconfined. No libc wrapper exists for the Landlock calls, so they are made by number; the
 * numbers are the same on every architecture (the unified syscall table), and the structures are
 * declared here so the build needs no kernel headers.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
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
#define EXIT_NOT_CONFINED 125
#define SYS_CLONE3 435
#define CLONE_INTO_CGROUP 0x200000000ULL
#define EXIT_NOT_FOUND 127
#define EXIT_NOT_EXECUTABLE 126

struct ruleset_attr {
  uint64_t handled_access_fs;
};

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

static int fail(const char *what, const char *detail) {
  fprintf(stderr, "toolcap-confine: %s%s%s: %s\n", what, detail ? " " : "", detail ? detail : "", strerror(errno));
  return EXIT_NOT_CONFINED;
}

static volatile pid_t child_pid = 0;

static void forward(int signal_number) {
  if (child_pid > 0) kill(child_pid, signal_number);
}

static const int forwarded[] = {SIGTERM, SIGINT, SIGHUP};

/* Runs argv[0] in a session of its own inside the cgroup `dir`; returns its exit status, or dies of its signal. */
static int run_in_cgroup(const char *dir, char **argv) {
  /* the host starts the launcher in its own session (no new session: on Linux each is a scheduler
     autogroup, costly to make and free, and the child makes the one the call needs); a process
     group of its own keeps a terminal's signals to the host's group from reaching it */
  setpgid(0, 0);
  int cgroup = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (cgroup < 0) return fail("cannot open the cgroup", dir);
  /* blocked until the handlers are in place: a signal sent meanwhile is forwarded, not lost */
  sigset_t relayed, before;
  sigemptyset(&relayed);
  for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++) sigaddset(&relayed, forwarded[i]);
  sigprocmask(SIG_BLOCK, &relayed, &before);
  struct clone_args args = {.flags = CLONE_INTO_CGROUP, .exit_signal = SIGCHLD, .cgroup = (uint64_t)cgroup};
  long pid = syscall(SYS_CLONE3, &args, sizeof args);
  if (pid < 0) return fail("cannot start a process in the cgroup", dir);
  if (pid == 0) {
    sigprocmask(SIG_SETMASK, &before, NULL);
    /* its own session and process group, as a detached spawn would give it */
    setsid();
    execvp(argv[0], argv);
    int code = errno == ENOENT ? EXIT_NOT_FOUND : EXIT_NOT_EXECUTABLE;
    fprintf(stderr, "toolcap-confine: cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(code);
  }
  child_pid = (pid_t)pid;
  close(cgroup);
  struct sigaction action = {.sa_handler = forward};
  sigemptyset(&action.sa_mask);
  for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++) sigaction(forwarded[i], &action, NULL);
  sigprocmask(SIG_SETMASK, &before, NULL);
  /* the call's pipes are the child's alone: they end when the last process of the call closes them */
  int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null >= 0) {
    for (int fd = 0; fd <= 2; fd++) dup2(null, fd);
    if (null > 2) close(null);
  }
  int status;
  while (waitpid(child_pid, &status, 0) < 0) {
    if (errno != EINTR) return EXIT_NOT_CONFINED;
  }
  child_pid = 0;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  /* the same death for whoever waits on the launcher (without a core file of its own) */
  int signal_number = WTERMSIG(status);
  struct rlimit no_core = {0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  signal(signal_number, SIG_DFL);
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, signal_number);
  sigprocmask(SIG_UNBLOCK, &only, NULL);
  kill(getpid(), signal_number);
  return 128 + signal_number;
}

/* A request larger than this is refused (the environment and a command, far below any real limit). */
#define MAX_REQUEST (64UL << 20)

/* Reads exactly `size` bytes from stdin; 0 at end of file before them. */
static int read_all(char *into, size_t size) {
  size_t got = 0;
  while (got < size) {
    ssize_t r = read(0, into + got, size - got);
    if (r == 0) return 0;
    if (r < 0) {
      if (errno == EINTR) continue;
      return 0;
    }
    got += (size_t)r;
  }
  return 1;
}

/* --serve: one request from stdin (format above), then run as --cgroup. */
static int serve(void) {
  char head[24];
  size_t used = 0;
  for (;;) {
    if (used == sizeof head) {
      errno = EINVAL;
      return fail("request header too long", NULL);
    }
    if (!read_all(head + used, 1)) return 0;
    if (head[used] == '\n') break;
    used++;
  }
  head[used] = 0;
  char *end;
  unsigned long size = strtoul(head, &end, 10);
  if (end == head || *end != 0 || size == 0 || size > MAX_REQUEST) {
    errno = EINVAL;
    return fail("bad request size", head);
  }
  char *request = malloc(size);
  if (request == NULL) return fail("cannot hold the request", NULL);
  if (!read_all(request, size)) return 0;
  if (request[size - 1] != 0) {
    errno = EINVAL;
    return fail("request not NUL-terminated", NULL);
  }
  size_t fields = 0;
  for (size_t i = 0; i < size; i++) fields += request[i] == 0;
  char **field = calloc(fields + 1, sizeof *field);
  if (field == NULL) return fail("cannot hold the request", NULL);
  size_t at = 0;
  for (char *p = request; p < request + size; p += strlen(p) + 1) field[at++] = p;
  field[at] = NULL;
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
  int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null < 0 || dup2(null, 0) < 0) return fail("cannot open", "/dev/null");
  close(null);
  if (chdir(field[1]) != 0) return fail("cannot enter the working directory", field[1]);
  environ = env;
  return run_in_cgroup(field[0], field + 3);
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--serve") == 0) return serve();
  if (argc >= 5 && strcmp(argv[1], "--cgroup") == 0 && strcmp(argv[3], "--") == 0) {
    return run_in_cgroup(argv[2], argv + 4);
  }
  if (argc == 2 && strcmp(argv[1], "--probe") == 0) {
    long abi = syscall(SYS_CREATE_RULESET, NULL, 0, CREATE_RULESET_VERSION);
    printf("%ld\n", abi < 0 ? 0L : abi);
    return 0;
  }
  struct ruleset_attr attr = {.handled_access_fs = ACCESS_READ_FILE | ACCESS_READ_DIR};
  int ruleset = (int)syscall(SYS_CREATE_RULESET, &attr, sizeof attr, 0);
  if (ruleset < 0) return fail("cannot create a Landlock ruleset", NULL);
  int at = 1;
  for (; at < argc && strcmp(argv[at], "--") != 0; at += 2) {
    if (strcmp(argv[at], "--read") != 0 || at + 1 >= argc) {
      errno = EINVAL;
      return fail("usage: toolcap-confine [--read PATH]... -- EXE ARG...", NULL);
    }
    int fd = open(argv[at + 1], O_PATH | O_CLOEXEC);
    if (fd < 0) {
      /* a root that does not exist (a scratch dir before its first spill) grants nothing */
      if (errno == ENOENT) continue;
      return fail("cannot open", argv[at + 1]);
    }
    struct stat st;
    if (fstat(fd, &st) != 0) return fail("cannot examine", argv[at + 1]);
    struct path_beneath_attr rule = {
        .allowed_access = S_ISDIR(st.st_mode) ? (ACCESS_READ_FILE | ACCESS_READ_DIR) : ACCESS_READ_FILE,
        .parent_fd = fd};
    if (syscall(SYS_ADD_RULE, ruleset, RULE_PATH_BENEATH, &rule, 0) != 0) return fail("cannot add a rule for", argv[at + 1]);
    close(fd);
  }
  if (at >= argc - 1) {
    errno = EINVAL;
    return fail("usage: toolcap-confine [--read PATH]... -- EXE ARG...", NULL);
  }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return fail("cannot set no_new_privs", NULL);
  if (syscall(SYS_RESTRICT_SELF, ruleset, 0) != 0) return fail("cannot restrict itself", NULL);
  close(ruleset);
  execv(argv[at + 1], argv + at + 1);
  return fail("cannot run", argv[at + 1]);
}
