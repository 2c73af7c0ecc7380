/*
 * toolcap-confine: runs a program confined by Landlock to reading beneath the given paths.
 *
 *   toolcap-confine --probe                     prints the kernel's Landlock ABI (0: none), exits 0
 *   toolcap-confine [--read PATH]... -- EXE ARG... applies the ruleset, then execs EXE
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
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SYS_CREATE_RULESET 444
#define SYS_ADD_RULE 445
#define SYS_RESTRICT_SELF 446
#define CREATE_RULESET_VERSION (1U << 0)
#define RULE_PATH_BENEATH 1
#define ACCESS_READ_FILE (1ULL << 2)
#define ACCESS_READ_DIR (1ULL << 3)
#define EXIT_NOT_CONFINED 125

struct ruleset_attr {
  uint64_t handled_access_fs;
};

struct path_beneath_attr {
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__((packed));

static int fail(const char *what, const char *detail) {
  fprintf(stderr, "toolcap-confine: %s%s%s: %s\n", what, detail ? " " : "", detail ? detail : "", strerror(errno));
  return EXIT_NOT_CONFINED;
}

int main(int argc, char **argv) {
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
