/*
 * dataconv --shard K/N | auto | auto/N (shard.h).
 */
#include "shard.h"

#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libdata/convert.h"
#include "options.h"

#define MAX_PARTS 99999 /* LD_C_SHARD_COUNT's bound: five digits in the part names */

/* A non-negative decimal integer (all of s); 0 when s is not one. */
static int parse_count(const char *s, long long *out)
{
    if (!s || *s < '0' || *s > '9') return 0;
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (errno || *end) return 0;
    *out = v;
    return 1;
}

/* Environment variable `name` as an integer: 1 found, 0 absent, -1 set but not a number. */
static int env_int(const char *name, long long *out)
{
    const char *v = getenv(name);
    if (!v) return 0;
    return parse_count(v, out) ? 1 : -1;
}

int dc_shard_mpi_size(const char **var)
{
    static const char *const names[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        long long v;
        if (env_int(names[i], &v) == 1 && v > 0 && v <= MAX_PARTS) {
            if (var) *var = names[i];
            return (int)v;
        }
    }
    return 0;
}

/* K and N from a rank/size pair of variables. 1 found (set), 0 absent, or a usage error. */
static int rank_size(const char *flag, const char *rank, const char *size, long long *k,
                     long long *n, char *from, size_t cap, int *rc)
{
    int a = env_int(rank, k), b = env_int(size, n);
    if (a == 0 && b == 0) return 0;
    if (a != 1 || b != 1) {
        *rc = dc_usage_error("%s auto: %s=%s and %s=%s: expected two numbers", flag, rank,
                             getenv(rank) ? getenv(rank) : "(unset)", size,
                             getenv(size) ? getenv(size) : "(unset)");
        return 1;
    }
    /* One process of one (srun inside an array task, at sites with pmi2): not a split */
    if (*n == 1 && getenv("SLURM_ARRAY_TASK_ID")) return 0;
    snprintf(from, cap, "%s=%lld, %s=%lld", rank, *k, size, *n);
    return 1;
}

/* A Slurm array task. With N given (auto/N), the task ids are the parts: K = ID, whatever
 * subset of 0..N-1 the array has (resubmitting the failed tasks, --array=3,7, keeps their
 * parts). Without N: K = ID - MIN, N = MAX - MIN + 1 of a contiguous array; *derived = 1. */
static int slurm_array(const char *flag, long long given, long long *k, long long *n, char *from,
                       size_t cap, int *derived, int *rc)
{
    long long id, lo, hi, step = 1, count;
    int a = env_int("SLURM_ARRAY_TASK_ID", &id);
    if (a == 0) return 0;
    if (a < 0) {
        *rc = dc_usage_error("%s auto: SLURM_ARRAY_TASK_ID=%s is not a number", flag,
                             getenv("SLURM_ARRAY_TASK_ID"));
        return 1;
    }
    if (given > 0) {
        if (id >= given) {
            *rc = dc_usage_error("%s auto/%lld: SLURM_ARRAY_TASK_ID=%lld is not a part of %lld: "
                                 "with auto/N the array's task ids are the parts, 0..%lld "
                                 "(sbatch --array=0-%lld)",
                                 flag, given, id, given, given - 1, given - 1);
            return 1;
        }
        *k = id;
        *n = given;
        snprintf(from, cap, "SLURM_ARRAY_TASK_ID=%lld", id);
        return 1;
    }
    if (env_int("SLURM_ARRAY_TASK_MIN", &lo) != 1 || env_int("SLURM_ARRAY_TASK_MAX", &hi) != 1 ||
        hi < lo) {
        *rc = dc_usage_error("%s auto: SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_MIN/MAX "
                             "are missing or not numbers: give --shard auto/N (N parts, the "
                             "task ids 0..N-1)",
                             flag);
        return 1;
    }
    /* --array=0-15:2 or --array=3,7: the ids are not one contiguous run, so id - min
     * would leave parts unconverted (and a resubmitted subset is such an array) */
    int s = env_int("SLURM_ARRAY_TASK_STEP", &step);
    int c = env_int("SLURM_ARRAY_TASK_COUNT", &count);
    if ((s == 1 && step != 1) || (c == 1 && count != hi - lo + 1)) {
        *rc = dc_usage_error("%s auto: the Slurm array's task ids are not one contiguous run "
                             "(ids %lld..%lld, step %lld, %lld tasks), so they do not say the "
                             "parts: give --shard auto/N, N the number of parts, with the task "
                             "ids 0..N-1 as the parts",
                             flag, lo, hi, step,
                             c == 1 ? count : (hi - lo) / (step > 0 ? step : 1) + 1);
        return 1;
    }
    *k = id - lo;
    *n = hi - lo + 1;
    *derived = 1;
    snprintf(from, cap, "SLURM_ARRAY_TASK_ID=%lld (MIN %lld, MAX %lld)", id, lo, hi);
    return 1;
}

int dc_shard_parse(const char *flag, const char *val, int *k, int *n, char *from, size_t cap,
                   int *derived)
{
    long long kk = -1, nn = -1, given = -1;
    int rc = DC_EXIT_OK;
    from[0] = '\0';
    *derived = 0;
    if (strncmp(val, "auto", 4) == 0 && (val[4] == '\0' || val[4] == '/')) {
        if (val[4] == '/' && (!parse_count(val + 5, &given) || given < 1 || given > MAX_PARTS))
            return dc_usage_error("%s %s: expected auto/N with N = 1..%d parts", flag, val,
                                  MAX_PARTS);
        int found = rank_size(flag, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", &kk, &nn, from,
                              cap, &rc) ||
                    rank_size(flag, "PMI_RANK", "PMI_SIZE", &kk, &nn, from, cap, &rc) ||
                    slurm_array(flag, given, &kk, &nn, from, cap, derived, &rc);
        if (rc != DC_EXIT_OK) return rc;
        if (!found) {
            int a = env_int("JOB_COMPLETION_INDEX", &kk);
            if (a < 0)
                return dc_usage_error("%s auto: JOB_COMPLETION_INDEX=%s is not a number", flag,
                                      getenv("JOB_COMPLETION_INDEX"));
            if (a == 1 && given < 0)
                return dc_usage_error("%s auto: JOB_COMPLETION_INDEX=%lld (a Kubernetes Indexed "
                                      "Job) gives the part but not the count: use --shard auto/N "
                                      "with N = the Job's completions",
                                      flag, kk);
            if (a == 1) snprintf(from, cap, "JOB_COMPLETION_INDEX=%lld", kk);
            found = a == 1;
            nn = given;
        }
        if (!found)
            return dc_usage_error(
                "%s %s: no launcher told this process its part: none of OMPI_COMM_WORLD_RANK/SIZE "
                "(Open MPI), PMI_RANK/SIZE (MPICH, srun), SLURM_ARRAY_TASK_ID/MIN/MAX (sbatch "
                "--array), JOB_COMPLETION_INDEX (Kubernetes, with auto/N) is set; give --shard K/N",
                flag, val);
        if (given > 0 && nn != given)
            return dc_usage_error("%s %s: the environment says %lld parts (%s), not %lld", flag,
                                  val, nn, from, given);
    } else {
        const char *slash = strchr(val, '/');
        char left[32];
        size_t len = slash ? (size_t)(slash - val) : 0;
        if (!slash || len == 0 || len >= sizeof left)
            return dc_usage_error("%s '%s': expected K/N (part K of N, K from 0), auto or auto/N",
                                  flag, val);
        memcpy(left, val, len);
        left[len] = '\0';
        if (!parse_count(left, &kk) || !parse_count(slash + 1, &nn))
            return dc_usage_error("%s '%s': expected K/N with whole numbers, e.g. --shard 0/8",
                                  flag, val);
    }
    if (nn < 1 || nn > MAX_PARTS)
        return dc_usage_error("%s %s: %lld parts%s%s%s; the number of parts must be 1..%d", flag,
                              val, nn, *from ? " (" : "", from, *from ? ")" : "", MAX_PARTS);
    if (kk < 0 || kk >= nn)
        return dc_usage_error("%s %s: part %lld%s%s%s is not in 0..%lld: parts are numbered from "
                              "0 to N-1",
                              flag, val, kk, *from ? " (" : "", from, *from ? ")" : "", nn - 1);
    *k = (int)kk;
    *n = (int)nn;
    return DC_EXIT_OK;
}

int dc_shard_check_siblings(const char *output, int n, const char *from)
{
    char *name = NULL;
    if (ld_shard_part_name(output, 0, 1, &name) != LD_OK) return DC_EXIT_OK;
    /* "out-00000-of-00001.h5" -> "out-?????-of-?????.h5" */
    char *at = strstr(name, "-00000-of-00001"); /* not a library message: a file name */
    for (char *p = at; at && p < at + 15; p++)
        if (*p >= '0' && *p <= '9') *p = '?';
    glob_t g;
    int rc = DC_EXIT_OK;
    if (at && glob(name, 0, NULL, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc && rc == DC_EXIT_OK; i++) {
            const char *of =
                strstr(g.gl_pathv[i] + (at - name), "-of-"); /* not a library message */
            long long m = of ? strtoll(of + 4, NULL, 10) : 0;
            if (m > 0 && m != n)
                rc = dc_usage_error(
                    "--shard auto: %s counts %d parts, but %s is part of %lld: the array's "
                    "MIN/MAX changed (a resubmission of some tasks?). Give --shard auto/%lld so "
                    "that each task id is its part, or remove the parts of %lld first",
                    from, n, g.gl_pathv[i], m, m, m);
        }
        globfree(&g);
    }
    ld_free(name);
    return rc;
}
