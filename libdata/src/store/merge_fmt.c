/* The merge's log sink (merge_fmt.h). */
#include "store/merge_fmt.h"

#include <stdarg.h>

void ld__merge_log(const ld_merge_log *l, int level, const char *fmt, ...)
{
    if (!l || !l->fn) return;
    char msg[LD_ERRMSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    ld__vformat_msg(msg, sizeof msg, fmt, ap);
    va_end(ap);
    l->fn(l->user, level, msg);
}
