/*
 * toolcap-confine: runs a program confined by Landlock to reading beneath the given paths, or
 * started inside a given cgroup.
 *
 *   toolcap-confine --probe                     prints the kernel's Landlock ABI (0: none), exits 0
 *   toolcap-confine [--read PATH]... -- EXE ARG... applies the ruleset, then execs EXE
 *   toolcap-confine --cgroup DIR -- FILE ARG...  runs FILE (searched in PATH, as a shell does) in
 *                                                a session of its own inside the cgroup DIR
 *   toolcap-confine --server                     starts calls as --cgroup does, on requests from
 *                                                stdin (see server() below)
 *
 * The server mode takes the host's fork off every call: a host that forks itself to start a
 * launcher pays for copying its own page tables (milliseconds for a host of 100 MB, growing with
 * it, with its event loop blocked), while this small process forks in microseconds.
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
#include <poll.h>
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

/*
 * Runs a request's fields (the cgroup DIR, the working directory, the argument count N, N
 * arguments, FILE first, then the environment) as --cgroup does; returns its exit status.
 */
static int run_request(char **field, size_t fields) {
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
  return run_in_cgroup(field[0], field + 3);
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

/* Starts one call: its pipes, and a launcher (a fork of this small process) that runs it in its cgroup. */
static void start_call(char **field, size_t fields, struct started **calls, size_t *ncalls, const sigset_t *before) {
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0) {
    reply("S -1 0 0\n");
    return;
  }
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(out[0]);
    close(out[1]);
    reply("S -1 0 0\n");
    return;
  }
  pid_t pid = fork();
  if (pid == 0) {
    /* the call gets the signal state a host's spawn would give it */
    signal(SIGPIPE, SIG_DFL);
    sigprocmask(SIG_SETMASK, before, NULL);
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null < 0 || dup2(null, 0) < 0 || dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0) _exit(EXIT_NOT_CONFINED);
    _exit(run_request(field, fields));
  }
  close(out[1]);
  close(err[1]);
  if (pid < 0) {
    close(out[0]);
    close(err[0]);
    reply("S -1 0 0\n");
    return;
  }
  struct started *grown = realloc(*calls, (*ncalls + 1) * sizeof **calls);
  if (grown != NULL) {
    *calls = grown;
    (*calls)[(*ncalls)++] = (struct started){pid, out[0], err[0]};
  }
  char line[64];
  snprintf(line, sizeof line, "S %d %d %d\n", (int)pid, out[0], err[0]);
  reply(line);
}

/*
 * --server: calls from stdin, each a decimal byte count, a newline and that many bytes of
 * NUL-terminated fields. "run" then the fields of --cgroup's request (the cgroup DIR, the working
 * directory, the argument count N, N arguments with FILE first, the environment as NAME=VALUE):
 * the server makes the call's stdout and stderr pipes and forks a launcher that runs it as
 * --cgroup does (stdin /dev/null), then answers "S PID OUT ERR": the launcher's pid and the
 * numbers of its own descriptors for the pipes' read ends, which the host opens through
 * /proc/<server>/fd ("S -1 0 0": nothing started). "ack" then PID: the host holds the read ends,
 * the server closes its own. When a launcher ends: "X PID CODE SIGNAL" (CODE -1 when it died of
 * SIGNAL). End of file on stdin ends the server; calls already started run on as their own.
 */
static int server(void) {
  sigset_t children, before;
  sigemptyset(&children);
  sigaddset(&children, SIGCHLD);
  sigprocmask(SIG_BLOCK, &children, &before);
  int sfd = signalfd(-1, &children, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd < 0) return fail("cannot watch its children", NULL);
  signal(SIGPIPE, SIG_IGN);
  int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (null >= 0) dup2(null, 2);
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
      if (strcmp(field[0], "run") == 0) {
        start_call(field + 1, count - 1, &calls, &ncalls, &before);
      } else if (strcmp(field[0], "ack") == 0 && count == 2) {
        pid_t pid = (pid_t)atoi(field[1]);
        for (size_t i = 0; i < ncalls; i++) {
          if (calls[i].pid != pid) continue;
          close(calls[i].out);
          close(calls[i].err);
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

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--server") == 0) return server();
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
