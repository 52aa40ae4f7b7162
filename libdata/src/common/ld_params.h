/* Row builders for the parameter tables (ld_param_desc) of reader/reader.c and
 * convert/convert.c: one line per parameter, the default also spelled as text. Include only
 * from a .c file that defines a table; the short names are local to that use. */
#ifndef LD_PARAMS_H
#define LD_PARAMS_H

#include "libdata/libdata.h"

// clang-format off
#define NCH(a) (sizeof(a) / sizeof((a)[0]))
#define INT(id, name, def, lo, hi, unit, help) \
    { id, name, LD_PARAM_INT, def, lo, hi, unit, NULL, 0, #def, help }
#define BOOL(id, name, help) \
    { id, name, LD_PARAM_BOOL, 0, 0, 1, "", NULL, 0, "0", help }
/* An enum: its choices run from lo to hi; def is one of them, named def_name. */
#define ENUM(id, nm, ch, def, def_name, lo, hi, help) \
    { id, nm, LD_PARAM_ENUM, def, lo, hi, "", ch, NCH(ch), def_name, help }
#define STR(id, name, def, help) \
    { id, name, LD_PARAM_STRING, 0, 0, 0, "", NULL, 0, def, help }
// clang-format on

#endif
