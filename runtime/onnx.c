/* onnx.c - a model given as an ONNX path at run time: compiled by mlbc and the system C
 * compiler into a cached shared object, which so.c then loads. The cache layout, how the
 * tools are found and why concurrent compiles are safe are described at mlbc_onnx_options
 * in mlbc_runtime.h. */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"

extern char **environ;

#define MAX_WORDS 64            /* arguments of one compiler command */
#define OUTPUT_MAX 2048         /* compiler output kept for an error message */
#define MLBC_HINT "set MLBC or put mlbc on PATH"

typedef struct command {
    const char *argv[MAX_WORDS + 1];
    int n;
} command;

/* A value given by the caller, else the environment variable's (if set and non-empty). */
static const char *given_or_env(const char *given, const char *var)
{
    const char *v = getenv(var);
    return given ? given : v && *v ? v : NULL;
}

static int add_word(command *c, const char *w, char *err, size_t errlen)
{
    if (c->n == MAX_WORDS) {
        set_err(err, errlen, "more than %d arguments for %s", MAX_WORDS, c->argv[0]);
        return -1;
    }
    c->argv[c->n++] = w;
    c->argv[c->n] = NULL;
    return 0;
}

static int add_words(command *c, const char *const *words, char *err, size_t errlen)
{
    for (; words && *words; words++)
        if (add_word(c, *words, err, errlen))
            return -1;
    return 0;
}

/* ---- finding the tools and the cache --------------------------------------------------- */

/* $MLBC, else the mlbc next to the running program (a tool of an install or of build/),
 * else "mlbc" for posix_spawnp to find on PATH. */
static void find_mlbc(const char *given, char *out, size_t n)
{
    const char *v = given_or_env(given, "MLBC");
    ssize_t len;
    if (v) {
        snprintf(out, n, "%s", v);
        return;
    }
    len = readlink("/proc/self/exe", out, n - 1);
    if (len > 0 && (size_t)len < n - sizeof "mlbc") {
        out[len] = 0;
        if (strrchr(out, '/')) {
            strcpy(strrchr(out, '/') + 1, "mlbc");
            if (access(out, X_OK) == 0)
                return;
        }
    }
    snprintf(out, n, "mlbc");
}

/* The C compiler's words: $CC may hold several ("ccache gcc"). cc_text is split in place. */
static int cc_command(command *c, char *cc_text, char *err, size_t errlen)
{
    char *save;
    for (char *w = strtok_r(cc_text, " \t", &save); w; w = strtok_r(NULL, " \t", &save))
        if (add_word(c, w, err, errlen))
            return -1;
    if (!c->n) {
        set_err(err, errlen, "$CC is blank");
        return -1;
    }
    return 0;
}

/* ---- a cache folder only this user can write --------------------------------------------- */

/* An entry's name is predictable (the key hashes the model, mlbc's version and the options),
 * so whoever can write the folder or an entry chooses the code this process loads. */
static const trust_rule cache_folder_rule = {
    "", "the cache folder", S_IFDIR, S_IWGRP | S_IWOTH,
    "whoever can write it chooses the code loaded from it: use a folder of your own, e.g. "
    "set MLBC_CACHE_DIR, or chmod go-w it if it is yours"
};
static const trust_rule cache_entry_rule = {
    "", "the cache entry", S_IFREG, S_IWGRP | S_IWOTH,
    "this user's mlbc runtime did not make it: remove it, and see who else can write the cache "
    "folder"
};

/* openat(dirfd, name) without following a symbolic link, then checked by rule t on the
 * descriptor. The descriptor, or -1 with err; errno is ENOENT only when name does not exist. */
static int open_ours(int dirfd, const char *name, const char *path, int flags,
                     const trust_rule *t, char *err, size_t errlen)
{
    int fd = openat(dirfd, name, flags | O_NOFOLLOW | O_CLOEXEC), e = errno;
    if (fd < 0) {
        if (refuse_link(dirfd, name, path, t, err, errlen))
            e = ELOOP;
        else
            set_err(err, errlen, "cannot open %s: %s", path, strerror(e));
        errno = e;
        return -1;
    }
    if (check_ours(fd, path, t, err, errlen)) {
        close(fd);
        errno = EPERM;
        return -1;
    }
    return fd;
}

/* mkdir path, mode 0700 (the cache may hold a user's models), unless it exists; a folder
 * made here is checked at once, as the cache folder itself. */
static int make_folder(const char *path, char *err, size_t errlen)
{
    int fd;
    if (mkdir(path, 0700) == 0) {
        fd = open_ours(AT_FDCWD, path, path, O_RDONLY | O_DIRECTORY, &cache_folder_rule, err,
                       errlen);
        if (fd < 0)
            return -1;
        close(fd);
    } else if (errno != EEXIST) {
        set_err(err, errlen, "cannot create the cache folder '%s': %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* The cache folder, made with its missing parents, opened and checked: its descriptor, or
 * -1 with err. Everything in the cache is then reached through it, not through the path. */
static int open_cache(char *path, char *err, size_t errlen)
{
    for (char *p = path + 1;; p++) {
        char c = *p;
        if (c && c != '/')
            continue;
        *p = 0;
        int rc = make_folder(path, err, errlen);
        *p = c;
        if (rc)
            return -1;
        if (!c)
            break;
    }
    return open_ours(AT_FDCWD, path, path, O_RDONLY | O_DIRECTORY, &cache_folder_rule, err,
                     errlen);
}

/* The cache folder's path into out, and its descriptor (or -1 with err). */
static int cache_folder(const char *given, char *out, size_t n, char *err, size_t errlen)
{
    const char *dir = given_or_env(given, "MLBC_CACHE_DIR"), *home;
    int len;
    if (dir)
        len = snprintf(out, n, "%s", dir);
    else if ((dir = given_or_env(NULL, "XDG_CACHE_HOME")))
        len = snprintf(out, n, "%s/mlbc", dir);
    else if ((home = given_or_env(NULL, "HOME")))
        len = snprintf(out, n, "%s/.cache/mlbc", home);
    else {
        set_err(err, errlen, "no cache folder: set MLBC_CACHE_DIR (neither XDG_CACHE_HOME "
                "nor HOME is set)");
        return -1;
    }
    if (len < 0 || (size_t)len >= n) {
        set_err(err, errlen, "cache folder path too long");
        return -1;
    }
    while (len > 1 && out[len - 1] == '/')      /* "link/" would follow the link */
        out[--len] = 0;
    return open_cache(out, err, errlen);
}

/* ---- running a compiler ------------------------------------------------------------------ */

/* Runs argv (searched on PATH when it has no '/'), stdin from /dev/null, stdout and stderr
 * into out (NUL-terminated, cut at outlen), with descriptor keep (if >= 0) left open at the
 * same number (paths "/proc/self/fd/KEEP/..." in argv). 0 with *status (waitpid's), or -1
 * with err when the program cannot be started. */
static int run(const command *c, int keep, char *out, size_t outlen, int *status, char *err,
               size_t errlen)
{
    posix_spawn_file_actions_t fa;
    int fd[2], rc;
    size_t got = 0;
    pid_t pid;
    if (pipe2(fd, O_CLOEXEC)) {
        set_err(err, errlen, "pipe: %s", strerror(errno));
        return -1;
    }
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 2);
    if (keep >= 0)      /* onto itself: clears close-on-exec in the child (glibc >= 2.29) */
        posix_spawn_file_actions_adddup2(&fa, keep, keep);
    rc = posix_spawnp(&pid, c->argv[0], &fa, NULL, (char *const *)c->argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    if (rc) {
        close(fd[0]);
        set_err(err, errlen, "cannot run '%s': %s", c->argv[0], strerror(rc));
        return -1;
    }
    for (;;) {
        char buf[512];
        ssize_t k = read(fd[0], buf, sizeof buf);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        for (ssize_t i = 0; i < k && got + 1 < outlen; i++)
            out[got++] = buf[i];
    }
    out[got] = 0;
    close(fd[0]);
    while (waitpid(pid, status, 0) < 0)
        if (errno != EINTR) {
            set_err(err, errlen, "waiting for '%s': %s", c->argv[0], strerror(errno));
            return -1;
        }
    return 0;
}

/* " (HINT)" after the message in err. */
static void add_hint(const char *hint, char *err, size_t errlen)
{
    size_t k = err ? strlen(err) : 0;
    if (err && k < errlen)
        set_err(err + k, errlen - k, " (%s)", hint);
}

/* Runs a compiler that must succeed; its output becomes the error when it does not. hint
 * says how to point the runtime at the program when it cannot be started. */
static int run_ok(const command *c, int keep, const char *what, const char *hint, char *err,
                  size_t errlen)
{
    char out[OUTPUT_MAX];
    int status;
    size_t n;
    if (run(c, keep, out, sizeof out, &status, err, errlen)) {
        add_hint(hint, err, errlen);
        return -1;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    n = strlen(out);
    while (n && (out[n - 1] == '\n' || out[n - 1] == ' '))
        out[--n] = 0;
    if (WIFEXITED(status))
        set_err(err, errlen, "%s failed (%s, exit status %d): %s", what, c->argv[0],
                WEXITSTATUS(status), n ? out : "no message");
    else
        set_err(err, errlen, "%s failed (%s, killed by signal %d): %s", what, c->argv[0],
                WTERMSIG(status), n ? out : "no message");
    return -1;
}

/* ---- the cache key ----------------------------------------------------------------------- */

static unsigned char *read_file(const char *path, size_t *len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    unsigned char *data = NULL;
    long size;
    if (!f || fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
        set_err(err, errlen, "cannot read the model '%s': %s", path, strerror(errno));
        if (f)
            fclose(f);
        return NULL;
    }
    if (!(data = malloc((size_t)size + 1)) || fread(data, 1, (size_t)size, f) != (size_t)size) {
        set_err(err, errlen, "cannot read the model '%s'%s", path, data ? "" : ": out of memory");
        free(data);
        data = NULL;
    }
    fclose(f);
    *len = (size_t)size;
    return data;
}

/* mlbc's --version line: a new mlbc never reuses an entry an older one made. */
static int mlbc_version(const char *mlbc, char *out, size_t n, char *err, size_t errlen)
{
    command c = {{mlbc, "--version", NULL}, 2};
    int status;
    if (run(&c, -1, out, n, &status, err, errlen)) {
        add_hint(MLBC_HINT, err, errlen);
        return -1;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) || strncmp(out, "mlbc ", 5)) {
        set_err(err, errlen, "'%s --version' did not print mlbc's version: is it mlbc?", mlbc);
        return -1;
    }
    return 0;
}

/* MD5 (hex) of the model, the version and the words of the commands, NUL-separated. */
static int cache_key(const unsigned char *model, size_t len, const char *version,
                     const command *const *cmds, int ncmds, char hex[33], char *err,
                     size_t errlen)
{
    size_t total = len + strlen(version) + 2, at;
    unsigned char *buf, digest[16];
    for (int k = 0; k < ncmds; k++)
        for (int i = 0; i < cmds[k]->n; i++)
            total += strlen(cmds[k]->argv[i]) + 1;
    if (!(buf = malloc(total + (size_t)ncmds))) {
        set_err(err, errlen, "out of memory");
        return -1;
    }
    memcpy(buf, model, len);
    at = len;
    buf[at++] = 0;
    at += (size_t)sprintf((char *)buf + at, "%s", version) + 1;
    for (int k = 0; k < ncmds; k++) {
        for (int i = 0; i < cmds[k]->n; i++)
            at += (size_t)sprintf((char *)buf + at, "%s", cmds[k]->argv[i]) + 1;
        buf[at++] = 1;          /* ends a command: {"a"}{"b"} differs from {"a","b"}{} */
    }
    md5(buf, at, digest);
    free(buf);
    for (int i = 0; i < 16; i++)
        sprintf(hex + 2 * i, "%02x", digest[i]);
    return 0;
}

/* ---- compiling into the cache -------------------------------------------------------------- */

static int is_identifier(const char *s)
{
    if (!*s || (*s >= '0' && *s <= '9'))
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')
              || *s == '_'))
            return 0;
    return 1;
}

/* Everything a compile needs, filled by prepare(). */
typedef struct job {
    const char *model;
    char model_arg[MLBC_PATH_MAX];  /* the model as mlbc's argument (model_argument) */
    char name[MLBC_SPEC_MAX_NAME];
    char cache[MLBC_PATH_MAX];      /* the cache folder's path, for messages and callers */
    int dir;                        /* the cache folder, opened and checked; -1: not yet */
    char at[32];                    /* "/proc/self/fd/DIR": the cache folder in paths */
    char mlbc[MLBC_PATH_MAX];
    char cc_text[MLBC_PATH_MAX];
    command gen;                /* -n NAME MLBC_ARGS (mlbc's path is not part of the key) */
    command cc;                 /* CC -O2 -fPIC -shared */
    command cc_args;            /* after the C file, so that libraries resolve its symbols */
    char version[256];          /* mlbc --version */
    char key[33];
} job;

static int set_name(job *j, const mlbc_onnx_options *o, char *err, size_t errlen)
{
    char *derived = o->name ? NULL : model_name_from_path(j->model);
    const char *name = o->name ? o->name : derived;
    int ok = name && is_identifier(name) && strlen(name) < sizeof j->name;
    if (ok)
        strcpy(j->name, name);
    else
        set_err(err, errlen, "model name '%s' is not a C identifier (of at most %d characters)",
                name ? name : "", (int)sizeof j->name - 1);
    free(derived);
    return ok ? 0 : -1;
}

/* mlbc reads an argument "SELECTOR=PATH" (an '=' before any '/') as a member of a composite
 * and one starting with '-' as an option: such a relative path gets "./" in front, so that
 * mlbc compiles the file whose bytes were hashed. */
static int model_argument(job *j, char *err, size_t errlen)
{
    const char *m = j->model;
    int odd = m[0] != '/' && (m[0] == '-' || strchr(m, '='));
    int len = snprintf(j->model_arg, sizeof j->model_arg, "%s%s", odd ? "./" : "", m);
    if (len < 0 || (size_t)len >= sizeof j->model_arg) {
        set_err(err, errlen, "model path too long: %s", m);
        return -1;
    }
    return 0;
}

/* The cache folder, opened and checked into j->dir, and the path that names it. */
static int open_job_cache(job *j, const char *given, char *err, size_t errlen)
{
    if ((j->dir = cache_folder(given, j->cache, sizeof j->cache, err, errlen)) < 0)
        return -1;
    snprintf(j->at, sizeof j->at, "/proc/self/fd/%d", j->dir);
    return 0;
}

static int prepare(job *j, const mlbc_onnx_options *o, char *err, size_t errlen)
{
    static const char *const cc_flags[] = {"-O2", "-fPIC", "-shared", NULL};
    const command *cmds[3] = {&j->gen, &j->cc, &j->cc_args};
    const char *cc;
    unsigned char *data;
    size_t len;
    int rc;
    if (!(data = read_file(j->model, &len, err, errlen)))
        return -1;
    if (set_name(j, o, err, errlen) || model_argument(j, err, errlen)
        || open_job_cache(j, o->cache_dir, err, errlen)) {
        free(data);
        return -1;
    }
    find_mlbc(o->mlbc, j->mlbc, sizeof j->mlbc);
    cc = given_or_env(o->cc, "CC");
    snprintf(j->cc_text, sizeof j->cc_text, "%s", cc ? cc : "cc");
    if (add_word(&j->gen, "-n", err, errlen)
        || add_word(&j->gen, j->name, err, errlen) || add_words(&j->gen, o->mlbc_args, err, errlen)
        || cc_command(&j->cc, j->cc_text, err, errlen)
        || add_words(&j->cc, cc_flags, err, errlen)
        || add_words(&j->cc_args, o->cc_args, err, errlen)
        || mlbc_version(j->mlbc, j->version, sizeof j->version, err, errlen))
        rc = -1;
    else
        rc = cache_key(data, len, j->version, cmds, 3, j->key, err, errlen);
    free(data);
    return rc;
}

/* FOLDER/FILE into out; -1 with err when it does not fit. */
static int join(char *out, size_t n, const char *folder, const char *file, char *err,
                size_t errlen)
{
    int len = snprintf(out, n, "%s/%s", folder, file);
    if (len < 0 || (size_t)len >= n) {
        set_err(err, errlen, "path too long: %s/%s", folder, file);
        return -1;
    }
    return 0;
}

/* mlbc then the C compiler, in the temporary folder tmp (under j->at, which they are given
 * too: each path they use goes through the checked folder); leaves tmp/NAME.so. */
static int build_in(job *j, const char *tmp, char *err, size_t errlen)
{
    char c_file[MLBC_PATH_MAX], so[MLBC_PATH_MAX], base[MLBC_SPEC_MAX_NAME + 8];
    command gen = {{j->mlbc, NULL}, 1}, cc = j->cc;
    snprintf(base, sizeof base, "%s.c", j->name);
    if (join(c_file, sizeof c_file, tmp, base, err, errlen))
        return -1;
    snprintf(so, sizeof so, "%.*s.so", (int)strlen(c_file) - 2, c_file);
    if (add_word(&gen, j->model_arg, err, errlen) || add_words(&gen, j->gen.argv, err, errlen)
        || add_word(&gen, "-o", err, errlen) || add_word(&gen, c_file, err, errlen)
        || run_ok(&gen, j->dir, "mlbc", MLBC_HINT, err, errlen))
        return -1;
    if (add_word(&cc, "-o", err, errlen) || add_word(&cc, so, err, errlen)
        || add_word(&cc, c_file, err, errlen) || add_words(&cc, j->cc_args.argv, err, errlen)
        || add_word(&cc, "-lm", err, errlen)
        || run_ok(&cc, j->dir, "compiling the generated C", "set CC", err, errlen))
        return -1;
    return 0;
}

/* Removes the temporary folder and whatever a compile left in it (only our files). */
static void remove_temp(const char *tmp, const char *name)
{
    static const char *const ext[] = {".c", ".h", ".so"};
    char path[MLBC_PATH_MAX];
    for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
        if (snprintf(path, sizeof path, "%s/%s%s", tmp, name, ext[i]) < (int)sizeof path)
            unlink(path);
    }
    rmdir(tmp);
}

/* The model's bytes, read again: a model rewritten while it was compiled (a trainer saving
 * its next version) must not be cached under the old bytes' key. */
static int unchanged(job *j, char *err, size_t errlen)
{
    const command *cmds[3] = {&j->gen, &j->cc, &j->cc_args};
    char key[33];
    unsigned char *data;
    size_t len;
    int rc;
    if (!(data = read_file(j->model, &len, err, errlen)))
        return -1;
    rc = cache_key(data, len, j->version, cmds, 3, key, err, errlen);
    free(data);
    if (!rc && strcmp(key, j->key)) {
        set_err(err, errlen, "the model '%s' changed while it was compiled", j->model);
        return -1;
    }
    return rc;
}

/* Compiles in a fresh folder inside the cache (mkdtemp: mode 0700), then publishes the entry
 * FILE with one rename(), mode 0600 whatever the umask (a group-writable entry is refused). */
static int compile_to(job *j, const char *file, const char *entry, char *err, size_t errlen)
{
    char tmp[MLBC_PATH_MAX], so[MLBC_PATH_MAX], to[MLBC_PATH_MAX];
    int rc = -1;
    if (join(to, sizeof to, j->at, file, err, errlen))
        return -1;
    if (snprintf(tmp, sizeof tmp, "%s/tmp.%s.XXXXXX", j->at, j->name) >= (int)sizeof tmp
        || !mkdtemp(tmp)) {
        set_err(err, errlen, "cannot write in the cache folder '%s': %s", j->cache,
                strerror(errno));
        return -1;
    }
    if (snprintf(so, sizeof so, "%s/%s.so", tmp, j->name) >= (int)sizeof so)
        set_err(err, errlen, "path too long: %s", tmp);
    else if (!build_in(j, tmp, err, errlen) && !unchanged(j, err, errlen)) {
        if (chmod(so, 0600) == 0 && rename(so, to) == 0)
            rc = 0;
        else
            set_err(err, errlen, "cannot publish '%s': %s", entry, strerror(errno));
    }
    remove_temp(tmp, j->name);
    return rc;
}

/* 0 when the cache holds the entry FILE (and it passes cache_entry_rule), 1 when it was
 * compiled now, -1 with err (also when the entry is refused: it is not replaced, since
 * something other than this runtime wrote it). */
static int find_or_compile(job *j, const char *file, const char *entry, char *err,
                           size_t errlen)
{
    int fd = open_ours(j->dir, file, entry, O_RDONLY, &cache_entry_rule, err, errlen);
    if (fd >= 0) {
        close(fd);
        return 0;
    }
    if (errno != ENOENT)
        return -1;
    return compile_to(j, file, entry, err, errlen) == 0 ? 1 : -1;
}

int onnx_entry_find(const char *model, const mlbc_onnx_options *opt, onnx_entry *e,
                    char *err, size_t errlen)
{
    static const mlbc_onnx_options defaults;
    char file[MLBC_SPEC_MAX_NAME + 40];
    job *j;
    int rc = -1;
    e->dir = -1;
    if (!model || !*model) {
        set_err(err, errlen, "no ONNX model given");
        return -1;
    }
    if (!(j = calloc(1, sizeof *j))) {
        set_err(err, errlen, "out of memory");
        return -1;
    }
    j->model = model;
    j->dir = -1;
    if (!prepare(j, opt ? opt : &defaults, err, errlen)) {
        snprintf(file, sizeof file, "%s.%s.so", j->name, j->key);
        if (!join(e->path, sizeof e->path, j->cache, file, err, errlen)
            && !join(e->load, sizeof e->load, j->at, file, err, errlen))
            rc = find_or_compile(j, file, e->path, err, errlen);
    }
    if (rc >= 0)
        e->dir = j->dir;
    else if (j->dir >= 0)
        close(j->dir);
    free(j);
    return rc;
}

int mlbc_onnx_compile(const char *model, const mlbc_onnx_options *opt, char *so_path,
                      size_t so_len, char *err, size_t errlen)
{
    onnx_entry *e;
    int rc;
    if (!so_path || !so_len) {
        set_err(err, errlen, "no room for the shared object's path");
        return -1;
    }
    if (!(e = malloc(sizeof *e))) {
        set_err(err, errlen, "out of memory");
        return -1;
    }
    rc = onnx_entry_find(model, opt, e, err, errlen);
    if (rc >= 0) {
        close(e->dir);
        if (strlen(e->path) >= so_len) {
            set_err(err, errlen, "path too long: %s", e->path);
            rc = -1;
        } else
            strcpy(so_path, e->path);
    }
    free(e);
    return rc;
}
