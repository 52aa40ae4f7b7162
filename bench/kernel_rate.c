/*
 * Per-image cost of the pixel kernels the converter and the reader run for every sample:
 * the resampler (500x375 -> 224x224 RGB, Lanczos-3) and the interleaved -> planar copy
 * (224x224x3). Built with -DLIBDATA_BUILD_BENCH=ON twice, with and without the run-time
 * SSSE3/AVX2 kernels (bench/CMakeLists.txt); compare:
 *
 *   cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DLIBDATA_BUILD_BENCH=ON
 *   cmake --build build-bench --target kernel_rate kernel_rate_sse2
 *   build-bench/bench/kernel_rate; build-bench/bench/kernel_rate_sse2     [REPS, default 2000]
 *
 * Times are this thread's CPU time (best of 3 rounds), so a busy machine does not inflate them.
 * The image is synthetic (a smooth pattern): these kernels' cost does not depend on content.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "libdata/convert.h"
#include "resize/resize.h"

#define REPS 2000

/* This thread's CPU time: wall time on a shared machine measures the other processes too. */
static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    const int reps = argc > 1 && atoi(argv[1]) > 0 ? atoi(argv[1]) : REPS; /* kernel_rate [REPS] */
    ld_image src = {0}, dst = {0};
    ld_err e;
    if (ld__image_alloc(&src, 500, 375, 3) != LD_OK) return 1;
    for (size_t i = 0; i < (size_t)500 * 375 * 3; i++)
        src.px[i] = (uint8_t)(i * 7 + (i >> 9));
    ld_resizer *r = ld__resizer_create();
    const ld_geometry g = {.mode = LD_RESIZE_SQUASH, .w = 224, .h = 224};
    if (!r || ld__resize(r, &src, &g, &dst, &e) != LD_OK) /* warm-up: scratch, coefficients */
        return 1;
    double best = 1e9;
    for (int round = 0; round < 3; round++) {
        const double t0 = cpu_now();
        for (int i = 0; i < reps; i++)
            ld__resize(r, &src, &g, &dst, &e);
        const double t = (cpu_now() - t0) / reps;
        best = t < best ? t : best;
    }
    printf("resize 500x375 -> 224x224 RGB: %6.1f us\n", best * 1e6);

    uint8_t *planes = malloc((size_t)224 * 224 * 3);
    if (!planes) return 1;
    const int ch[3] = {2, 1, 0};
    best = 1e9;
    for (int round = 0; round < 3; round++) {
        const double t0 = cpu_now();
        for (int i = 0; i < reps * 10; i++)
            ld__deinterleave3(dst.px, (size_t)224 * 3, 224, 224, ch, i & 1, planes);
        const double t = (cpu_now() - t0) / (reps * 10);
        best = t < best ? t : best;
    }
    printf("interleaved -> planar 224x224x3: %6.1f us\n", best * 1e6);
    free(planes);
    ld__image_free(&dst);
    ld__image_free(&src);
    ld__resizer_free(r);
    return 0;
}
