/*
 * caffe.proto for the planner: every message a net or solver prototxt can hold, with the full
 * set of its fields (BVLC Caffe master 9b89154, the Caffe the estimate is measured against).
 * The prototxt parser has no schema; this check holds a parsed tree to the one Caffe's
 * protobuf text parser applies, so that a net Caffe refuses (a misspelt field, a message
 * given a value, an enum value it does not have) is refused here too instead of planned with
 * the field silently missing.
 */
#ifndef LD_PLAN_SCHEMA_H
#define LD_PLAN_SCHEMA_H

#include "common/ld_internal.h"
#include "plan/prototxt.h"

/* Which top-level message a file holds. */
enum { LD_PLAN_NET_PROTO = 0, LD_PLAN_SOLVER_PROTO = 1 };

/* Check `root` (a parsed net or solver, `which`) against caffe.proto, as protobuf's text
 * parser reads it for Caffe: every field must be one of its message's (its full set, not only
 * the fields the planner reads), a message field must be a message and a scalar a value of
 * its type (strings quoted, numbers unquoted, enum values by name or number). The tree is
 * then made what Caffe sees: an enum given by number gets its name, a non-repeated field given
 * twice keeps its last value, and a non-repeated message given twice is merged into the first.
 * Errors (LD_EFORMAT) read "FILE:LINE:COL: [layer 'NAME': ]message type "caffe.X" has no field
 * named "y"" (with a close field name suggested), LD_ENOMEM. */
int ld__plan_schema_check(ld_pt_node *root, int which, const char *file, ld_err *e);

#endif /* LD_PLAN_SCHEMA_H */
