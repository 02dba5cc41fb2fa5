/* wrap.c - long lines of generated code broken into readable ones.
 *
 * Calls and signatures with many arguments (a Concat of 40 inputs, a model's NAME_eval with
 * one pointer per tensor) came out as lines of hundreds of columns. A code line longer than
 * MLBC_COMMENT_WIDTH is broken after the commas between the arguments of its first
 * parenthesis, its continuation lines aligned after that parenthesis, as clang-format does.
 * Comments, strings, character constants, preprocessor lines and macro bodies are left as
 * they are.
 */
#include <string.h>

#include "mlbc.h"

/* Where LINE (of LEN bytes) may break: after ", " at depth 1, before any comment. Fills
 * cut[] with the offsets of the next argument; returns their number. */
static int break_points(const char *line, size_t len, size_t *cut, int max)
{
    int n = 0, depth = 0;
    char quote = 0;
    for (size_t i = 0; i < len && n < max; i++) {
        char c = line[i];
        if (quote) {
            if (c == '\\')
                i++;
            else if (c == quote)
                quote = 0;
        } else if (c == '"' || c == '\'') {
            quote = c;
        } else if (c == '/' && (line[i + 1] == '*' || line[i + 1] == '/')) {
            break;
        } else if (c == '(') {
            depth++;
        } else if (c == ')') {
            depth--;
        } else if (c == ',' && depth == 1 && line[i + 1] == ' ') {
            cut[n++] = i + 2;
        }
    }
    return n;
}

/* LINE broken greedily at its break points; the continuation indent is the column after its
 * first '(' (or 8 more than the line's own indent if that is past half the width). */
static void wrap_line(Buf *out, const char *line, size_t len)
{
    size_t cut[1024];
    int n = break_points(line, len, cut, 1024);
    const char *open = memchr(line, '(', len);
    if (!n || !open) {
        buf_put(out, line, len);
        return;
    }
    size_t cont = (size_t)(open - line) + 1, start = 0, col0 = 0;
    if (cont > MLBC_COMMENT_WIDTH / 2)
        cont = strspn(line, " ") + 8;
    for (int i = 0; i < n; i++) {
        size_t next = i + 1 < n ? cut[i + 1] : len;
        if (col0 + (next - start) > MLBC_COMMENT_WIDTH && cut[i] > start) {
            buf_put(out, line + start, cut[i] - 1 - start);   /* without the space */
            buf_printf(out, "\n%*s", (int)cont, "");
            start = cut[i];
            col0 = cont;
        }
    }
    buf_put(out, line + start, len - start);
}

void wrap_code_lines(Buf *text)
{
    if (!text->p)
        return;
    Buf out = {0};
    int in_comment = 0, in_macro = 0;
    for (const char *p = text->p; *p;) {
        size_t len = strcspn(p, "\n");
        const char *body = p + strspn(p, " ");
        int code = !in_comment && !in_macro && *body != '#' && strncmp(body, "/*", 2) &&
                   strncmp(body, "//", 2) && strncmp(body, "* ", 2) && *body != '"';
        if (code && len > MLBC_COMMENT_WIDTH)
            wrap_line(&out, p, len);
        else
            buf_put(&out, p, len);
        /* a block comment still open, or a macro continued, at the end of this line */
        for (const char *c = p; c < p + len; c++)
            if (!in_comment && c[0] == '/' && c[1] == '*')
                in_comment = 1, c++;
            else if (in_comment && c[0] == '*' && c[1] == '/')
                in_comment = 0, c++;
        in_macro = len && p[len - 1] == '\\';
        p += len;
        if (*p == '\n') {
            buf_puts(&out, "\n");
            p++;
        }
    }
    *text = out;                        /* the old text stays: the compiler frees nothing */
}
