/* dataconv plan: will a Caffe net fit in memory (ld_plan). */
#ifndef DATACONV_PLAN_H
#define DATACONV_PLAN_H

/** Run `dataconv plan`; argv[first..] are its arguments. @return an exit code (options.h). */
int dc_plan(int argc, char **argv, int first);

/** Print the plan usage to `f` (a FILE *). */
void dc_plan_help(void *f);

#endif /* DATACONV_PLAN_H */
