/* dataconv merge: one dataset from the parts of a sharded conversion (ld_merge). */
#ifndef DATACONV_MERGE_H
#define DATACONV_MERGE_H

/** Run `dataconv merge`; argv[first..] are its arguments. @return an exit code (options.h). */
int dc_merge(int argc, char **argv, int first);

/** Print the merge usage to `f` (a FILE *). */
void dc_merge_help(void *f);

#endif /* DATACONV_MERGE_H */
