/* trust.c - is a file another local user could have planted or may reach? The ONNX runner's
 * cache (onnx.c) and the pipe runner (pipe.c) load or believe only what passes here, checked
 * on the open descriptor, so what was checked is what is used. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

static const char *type_name(mode_t mode)
{
    return S_ISFIFO(mode) ? "a FIFO" : S_ISREG(mode) ? "a regular file"
           : S_ISDIR(mode) ? "a folder" : S_ISLNK(mode) ? "a symbolic link" : "a special file";
}

int check_ours(int fd, const char *path, const trust_rule *t, char *err, size_t errlen)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        set_err(err, errlen, "%scannot stat %s: %s", t->prefix, path, strerror(errno));
    else if ((st.st_mode & S_IFMT) != t->type)
        set_err(err, errlen, "%srefusing %s: it is %s, not %s (%s)", t->prefix, path,
                type_name(st.st_mode), type_name(t->type), t->fix);
    else if (st.st_uid != geteuid())
        set_err(err, errlen, "%srefusing %s: %s belongs to uid %u, not to this user (%u) (%s)",
                t->prefix, path, t->what, (unsigned)st.st_uid, (unsigned)geteuid(), t->fix);
    else if (st.st_mode & t->forbidden)
        set_err(err, errlen, "%srefusing %s: its mode %04o lets other users %s it (%s)",
                t->prefix, path, (unsigned)(st.st_mode & 07777),
                t->forbidden & (S_IRGRP | S_IROTH) ? "open" : "write", t->fix);
    else
        return 0;
    return -1;
}

int refuse_link(int dirfd, const char *name, const char *path, const trust_rule *t, char *err,
                size_t errlen)
{
    struct stat st;
    int e = errno;
    if ((e == ELOOP || e == ENOTDIR) && fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0
        && S_ISLNK(st.st_mode)) {
        set_err(err, errlen, "%srefusing %s: it is a symbolic link, not %s (%s)", t->prefix,
                path, type_name(t->type), t->fix);
        return 1;
    }
    errno = e;
    return 0;
}
