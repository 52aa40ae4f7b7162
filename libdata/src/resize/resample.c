/*
 * Separable, antialiased Lanczos-3 (or bilinear: ld_geometry.filter) resampler on 8-bit HWC
 * images. Both filters go through the same fixed-point tables and SIMD kernels (which take any
 * tap count); only the weight function and its support differ. 16-bit images (--depth 16) use
 * the same tables and pass order in scalar loops with 64-bit sums and a 16-bit intermediate.
 *
 * Algorithm (the classic one of Pillow's ImagingResample, libvips' reduce and ImageMagick):
 * each axis gets a table of per-output-pixel filter coefficients; the image is filtered
 * along one axis into an 8-bit intermediate, then along the other. When shrinking by a
 * factor s > 1 the kernel is stretched by s (support 3s instead of 3), which turns Lanczos
 * into a low-pass filter at the output's Nyquist frequency: no aliasing (moire, jaggies)
 * however large the factor, and the cost stays linear in the number of source pixels read.
 * When enlarging the support stays 3 (plain interpolation).
 *
 * Coefficients are normalized per output pixel (so edges that clip the kernel, and flat
 * regions, keep their level) and quantized to Q14 int16 with the rounding residue folded
 * into the largest tap, so every row of weights sums to exactly 1 << 14: a flat image stays
 * exactly flat. The sampled region is the plan's fractional crop rectangle, so CROP never
 * resamples discarded pixels and the crop position is exact to a fraction of a pixel.
 *
 * Pass order: the vertical pass walks whole rows with one weight per row (a contiguous
 * multiply-accumulate the compiler vectorizes); the horizontal pass gathers a few pixels per
 * output and is scalar. We estimate both orders and run the cheaper one.
 *
 * All scratch (coefficient tables, the intermediate image, the accumulator row) belongs to
 * the ld_resizer and only grows; the tables of the last geometry are cached, so a dataset of
 * equally sized images never recomputes them.
 */
#include "resize/resize.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "libdata/libdata.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define LANCZOS_A 3.0
#define PI 3.14159265358979323846
#define QBITS 14
#define QONE (1 << QBITS)
#define QHALF (1 << (QBITS - 1))

/* GCC's -O2 only vectorizes loops with a known trip count; the vertical pass is the one loop
 * that matters, so ask for the full vectorizer there (clang vectorizes at -O2 already). */
#if defined(__GNUC__) && !defined(__clang__)
#define LD_HOT __attribute__((optimize("tree-vectorize")))
#else
#define LD_HOT
#endif

/* Coefficients of one axis: output pixel i reads `count[i]` source pixels from `start[i]`
 * with weights w[i * ksize ...]. The key fields identify the geometry they were made for. */
typedef struct axis_coeffs {
    int valid;
    int in_size, out_size;
    int filter; /* ld_filter */
    double x0, len;
    int ksize;
    int groups;    /* groups of 4 taps holding every pixel's taps: ceil(max count / 4) */
    int lo, hi;    /* union of the source pixels read: [lo, hi) */
    int max_start; /* largest start[i] */
    int32_t *start, *count;
    int16_t *w;
    size_t out_cap, w_cap;
    /* The x axis' weights for quad_rgb_avx2, pre-broadcast: per pair of output pixels (i, i+1)
     * and group of 4 taps, two 16-int16 vectors: [w_i(k, k+1) x 4 | w_i+1(k, k+1) x 4] and the
     * same for taps k+2, k+3 (x86 builds only, x axis only; NULL elsewhere). */
    int16_t *wb;
    size_t wb_cap;
} axis_coeffs;

/* Tables of the last two geometries per axis: a dataset of landscape photos with every few
 * in portrait (500x375 and 375x500) alternates between two, and rebuilding them on every
 * switch was 1.6 % of a conversion's CPU time. */
#define AXIS_CACHE 2

struct ld_resizer {
    axis_coeffs ax[AXIS_CACHE], ay[AXIS_CACHE];
    int ax_next, ay_next; /* the entry the next new geometry replaces */
    double *fw;           /* float weights of one output pixel */
    size_t fw_cap;
    uint8_t *tmp; /* intermediate image */
    size_t tmp_cap;
    int32_t *acc; /* accumulator row of the vertical pass */
    size_t acc_cap;
    int64_t *acc64; /* the same for 16-bit images */
    size_t acc64_cap;
    ld_image img; /* ld__resize_planar's interleaved result when it cannot write planes */
};

/* Grow-only scratch: realloc only when larger than ever before. */
static int grow(void **p, size_t *cap, size_t n, size_t elem)
{
    size_t bytes;
    if (n <= *cap) return LD_OK;
    if (!ld__mul_size(n, elem, &bytes)) return LD_ENOMEM;
    void *q = realloc(*p, bytes);
    if (!q) return LD_ENOMEM;
    *p = q;
    *cap = n;
    return LD_OK;
}

/* Lanczos-3 weights of source pixels lo..hi-1 for an output pixel centred at `center`
 * (source pixel j's centre is j + 0.5), the kernel stretched by fscale. The two sines advance
 * by a rotation per tap (sin(a + d) = sin a cos d + cos a sin d) instead of two sin() calls
 * per tap: sin() was 3-4 % of a conversion's CPU time, rebuilt whenever the image size
 * changes. The rotation's rounding error (about 1e-15 after 30 taps) is far below the int16
 * quantisation of the weights. */
static void lanczos_taps(double *fw, int lo, int hi, double center, double fscale)
{
    const double d = PI / fscale, cd = cos(d), sd = sin(d);
    const double cd3 = cos(d / LANCZOS_A), sd3 = sin(d / LANCZOS_A);
    const double px0 = PI * (lo + 0.5 - center) / fscale;
    double s = sin(px0), c = cos(px0), s3 = sin(px0 / LANCZOS_A), c3 = cos(px0 / LANCZOS_A);
    for (int j = lo; j < hi; j++) {
        const double px = PI * (j + 0.5 - center) / fscale, ax = fabs(px) / PI;
        fw[j - lo] = ax >= LANCZOS_A ? 0.0 : ax < 1e-8 ? 1.0 : LANCZOS_A * s * s3 / (px * px);
        const double s1 = s * cd + c * sd, s31 = s3 * cd3 + c3 * sd3;
        c = c * cd - s * sd;
        c3 = c3 * cd3 - s3 * sd3;
        s = s1;
        s3 = s31;
    }
}

/* Bilinear (Pillow's BILINEAR: the triangle 1 - |x| on support 1) weights of source pixels
 * lo..hi-1, the kernel stretched by fscale as lanczos_taps does. */
static void triangle_taps(double *fw, int lo, int hi, double center, double fscale)
{
    const double inv = 1.0 / fscale;
    for (int j = lo; j < hi; j++) {
        const double ax = fabs((j + 0.5 - center) * inv);
        fw[j - lo] = ax < 1.0 ? 1.0 - ax : 0.0;
    }
}

/* The filter's support (half-width, in output-pixel units before stretching). */
static double filter_support(int filter)
{
    return filter == LD_FILTER_BILINEAR ? 1.0 : LANCZOS_A;
}

static int axis_broadcast(axis_coeffs *a);

/* Build the table mapping source interval [x0, x0 + len) of an in_size axis onto out_size
 * pixels, or find it among the cached ones (set: AXIS_CACHE entries, *next: the one to
 * replace); broadcast: also fill wb (the x axis). Pixel j's center is at j + 0.5. */
static int axis_build(ld_resizer *r, axis_coeffs *set, int *next, int filter, int in_size,
                      double x0, double len, int out_size, int broadcast, const axis_coeffs **out)
{
    for (int k = 0; k < AXIS_CACHE; k++) {
        const axis_coeffs *c = &set[k];
        if (c->valid && c->in_size == in_size && c->out_size == out_size && c->x0 == x0 &&
            c->len == len && c->filter == filter) {
            *out = c;
            return LD_OK;
        }
    }
    axis_coeffs *a = &set[*next];
    *next = (*next + 1) % AXIS_CACHE;
    a->valid = 0;
    const double scale = len / out_size;
    const double fscale = scale > 1.0 ? scale : 1.0;
    const double support = filter_support(filter) * fscale;
    /* Rows of weights are padded with zeros to a multiple of 8 taps: the SIMD loops read taps
     * in pairs (RGB) or eights (gray) without a scalar tail. */
    const int ksize = ((int)ceil(2.0 * support) + 1 + 7) & ~7;
    size_t nw;
    /* start[] and count[] share one allocation: count = start + out_size */
    if (!ld__mul_size((size_t)out_size, (size_t)ksize, &nw) ||
        grow((void **)&a->start, &a->out_cap, 2 * (size_t)out_size, sizeof(int32_t)) < 0 ||
        grow((void **)&a->w, &a->w_cap, nw, sizeof(int16_t)) < 0 ||
        grow((void **)&r->fw, &r->fw_cap, (size_t)ksize, sizeof(double)) < 0)
        return LD_ENOMEM;
    a->count = a->start + out_size;

    a->lo = in_size;
    a->hi = 0;
    a->max_start = 0;
    for (int i = 0; i < out_size; i++) {
        const double center = x0 + (i + 0.5) * scale;
        int lo = (int)floor(center - support + 0.5);
        int hi = (int)floor(center + support + 0.5);
        if (lo < 0) lo = 0;
        if (hi > in_size) hi = in_size;
        if (hi - lo > ksize) hi = lo + ksize;
        if (hi <= lo) { /* center outside the image (cannot happen for a valid crop) */
            lo = center < 0 ? 0 : in_size - 1;
            hi = lo + 1;
        }
        double total = 0.0;
        if (filter == LD_FILTER_BILINEAR)
            triangle_taps(r->fw, lo, hi, center, fscale);
        else
            lanczos_taps(r->fw, lo, hi, center, fscale);
        for (int j = lo; j < hi; j++)
            total += r->fw[j - lo];
        int16_t *w = a->w + (size_t)i * ksize;
        if (total <= 0.0) { /* degenerate: nearest neighbour */
            int j = (int)floor(center);
            lo = j < 0 ? 0 : (j >= in_size ? in_size - 1 : j);
            hi = lo + 1;
            r->fw[0] = total = 1.0;
        }
        /* Quantize, then give the residue to the largest tap: the row sums to QONE exactly. */
        int sum = 0, big = 0;
        for (int j = 0; j < hi - lo; j++) {
            long q = lround(r->fw[j] / total * QONE);
            if (q > INT16_MAX) q = INT16_MAX;
            if (q < INT16_MIN) q = INT16_MIN;
            w[j] = (int16_t)q;
            sum += w[j];
            if (w[j] > w[big]) big = j;
        }
        w[big] = (int16_t)(w[big] + (QONE - sum));
        /* Drop zero taps at both ends (common when the kernel is clipped or quantized away). */
        while (hi - lo > 1 && w[0] == 0) {
            memmove(w, w + 1, (size_t)(hi - lo - 1) * sizeof *w);
            lo++;
        }
        while (hi - lo > 1 && w[hi - lo - 1] == 0)
            hi--;
        memset(w + (hi - lo), 0, (size_t)(ksize - (hi - lo)) * sizeof *w);
        a->start[i] = lo;
        a->count[i] = hi - lo;
        if (lo < a->lo) a->lo = lo;
        if (hi > a->hi) a->hi = hi;
        if (lo > a->max_start) a->max_start = lo;
    }
    a->ksize = ksize;
    a->groups = 1;
    for (int i = 0; i < out_size; i++)
        if ((a->count[i] + 3) / 4 > a->groups) a->groups = (a->count[i] + 3) / 4;
    a->in_size = in_size;
    a->out_size = out_size;
    if (broadcast && axis_broadcast(a) < 0) return LD_ENOMEM;
    a->x0 = x0;
    a->len = len;
    a->filter = filter;
    a->valid = 1;
    *out = a;
    return LD_OK;
}

static inline uint8_t clamp_q(int32_t acc)
{
    acc >>= QBITS; /* arithmetic shift of a negative sum is implementation-defined but is
                      an arithmetic shift on every compiler we build with; clamped anyway */
    return (uint8_t)(acc < 0 ? 0 : (acc > 255 ? 255 : acc));
}

#ifdef __SSE2__
/* One RGB output pixel: taps in pairs, each pair as [r0 r1 g0 g1 b0 b1 x x] int16 times
 * [w0 w1] x 4 through pmaddwd, giving [r g b x] int32. Reads 4 bytes per 3-byte pixel and
 * up to one zero-weighted pixel past the taps: the caller checks that this stays in bounds. */
static inline void h_rgb_sse2(const uint8_t *p, const int16_t *w, int count, uint8_t *d)
{
    const __m128i zero = _mm_setzero_si128();
    __m128i acc = _mm_set1_epi32(QHALF);
    for (int k = 0; k < count; k += 2, p += 6) {
        int32_t a, b, wp;
        memcpy(&a, p, 4);
        memcpy(&b, p + 3, 4);
        memcpy(&wp, w + k, 4);
        const __m128i ab = _mm_unpacklo_epi8(_mm_cvtsi32_si128(a), _mm_cvtsi32_si128(b));
        acc = _mm_add_epi32(acc, _mm_madd_epi16(_mm_unpacklo_epi8(ab, zero), _mm_set1_epi32(wp)));
    }
    acc = _mm_srai_epi32(acc, QBITS);
    const __m128i s16 = _mm_packs_epi32(acc, acc);
    const int32_t v = _mm_cvtsi128_si32(_mm_packus_epi16(s16, s16));
    memcpy(d, &v, 3);
}

/* Wider kernels chosen at run time (__builtin_cpu_supports): SSSE3 for the horizontal RGB
 * pass, AVX2 for the vertical pass. 500x375 -> 224x224 RGB takes 1.5-1.9x less time than
 * with SSE2 alone (bench/kernel_rate.c, built with and without -DLD_NO_X86_DISPATCH). */
#if defined(__GNUC__) && !defined(LD_NO_X86_DISPATCH) /* -DLD_NO_X86_DISPATCH: SSE2 only */
#include <immintrin.h>
#include <tmmintrin.h>
#define LD_X86_DISPATCH 1
/* The same sum, four taps per step (SSSE3 when the CPU has it): one 16-byte load holds
 * pixels k..k+4, and two byte shuffles widen taps (k, k+1) and (k+2, k+3) straight to
 * [r r g g b b 0 0] int16 for pmaddwd against the broadcast weight pairs: about 60 % of
 * h_rgb_sse2's instructions, and integer sums, so the result is identical. Taps go in groups
 * of four up to count rounded up (the weights past count are zero): reads 3 * round4(count)
 * + 4 bytes from p, which the caller checks. */
__attribute__((target("ssse3"))) static inline void h_rgb_ssse3(const uint8_t *p, const int16_t *w,
                                                                int count, uint8_t *d)
{
    const __m128i lo = _mm_setr_epi8(0, -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1);
    const __m128i hi = _mm_setr_epi8(6, -1, 9, -1, 7, -1, 10, -1, 8, -1, 11, -1, -1, -1, -1, -1);
    __m128i acc = _mm_set1_epi32(QHALF);
    for (int k = 0; k < count; k += 4, p += 12) {
        const __m128i px = _mm_loadu_si128((const __m128i *)p);
        const __m128i wv = _mm_loadl_epi64((const __m128i *)(w + k));
        acc = _mm_add_epi32(acc, _mm_madd_epi16(_mm_shuffle_epi8(px, lo),
                                                _mm_shuffle_epi32(wv, _MM_SHUFFLE(0, 0, 0, 0))));
        acc = _mm_add_epi32(acc, _mm_madd_epi16(_mm_shuffle_epi8(px, hi),
                                                _mm_shuffle_epi32(wv, _MM_SHUFFLE(1, 1, 1, 1))));
    }
    acc = _mm_srai_epi32(acc, QBITS);
    const __m128i s16 = _mm_packs_epi32(acc, acc);
    const int32_t v = _mm_cvtsi128_si32(_mm_packus_epi16(s16, s16));
    memcpy(d, &v, 3);
}

/* The output pixels of one RGB row whose taps can be read with h_rgb_ssse3 (a whole-row
 * function so that the kernel inlines: a call per pixel cost most of the gain), from pixel i0
 * on. Returns the first pixel it could not do (its reads would pass `end`): the caller
 * finishes the row. */
__attribute__((target("ssse3"))) static int hrow_rgb_ssse3(const uint8_t *s, const axis_coeffs *a,
                                                           int i0, int xoff, const uint8_t *end,
                                                           uint8_t *d)
{
    for (int i = i0; i < a->out_size; i++) {
        const uint8_t *p = s + (size_t)(a->start[i] - xoff) * 3;
        const int four = (a->count[i] + 3) & ~3;
        if ((size_t)(end - p) < (size_t)four * 3 + 4) return i;
        h_rgb_ssse3(p, a->w + (size_t)i * a->ksize, a->count[i], d + 3 * i);
    }
    return a->out_size;
}

/* The same sums for four output pixels per step (AVX2 when the CPU has it), two per 256-bit
 * accumulator, one per 128-bit half: each half does exactly h_rgb_ssse3's steps over all
 * ksize taps (those past count[i] weigh 0), with the weight pairs read ready-broadcast from
 * a->wb instead of shuffled out of a->w, so the result is identical. About a third of the
 * instructions per pixel: 500x375 -> 224x224 RGB spent 56 % of its time in hrow_rgb_ssse3.
 * Returns pixels i..i+3 as dwords [r g b x] in order. The caller checks the reads (at most
 * ksize / 4 * 12 + 4 bytes from each pixel's first tap). Only the a->groups groups of four
 * taps that hold taps are summed (the weights past count are zero, so the sums are the same):
 * the random resized crop's bilinear tables are padded to 8 taps, but a box shrunk by at most 2
 * has at most 4, half the work of the pass that was 14 % of a box decoder sample. */
__attribute__((target("avx2"), always_inline)) static inline __m128i
quad_rgb_avx2(const uint8_t *s, const axis_coeffs *a, int xoff, int i)
{
    const __m256i lo = _mm256_setr_epi8(0, -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1, 0,
                                        -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1);
    const __m256i hi = _mm256_setr_epi8(6, -1, 9, -1, 7, -1, 10, -1, 8, -1, 11, -1, -1, -1, -1, -1,
                                        6, -1, 9, -1, 7, -1, 10, -1, 8, -1, 11, -1, -1, -1, -1, -1);
    /* pixels i, i+1, i+2, i+3 are dwords 0, 4, 1, 5 after the packs: put them in order */
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    const int stride = a->ksize / 4; /* groups per pixel in wb */
    const uint8_t *p0 = s + (size_t)(a->start[i] - xoff) * 3;
    const uint8_t *p1 = s + (size_t)(a->start[i + 1] - xoff) * 3;
    const uint8_t *p2 = s + (size_t)(a->start[i + 2] - xoff) * 3;
    const uint8_t *p3 = s + (size_t)(a->start[i + 3] - xoff) * 3;
    const __m256i *w01 = (const __m256i *)(a->wb + (size_t)(i / 2) * stride * 32);
    const __m256i *w23 = w01 + 2 * stride;
    __m256i acc01 = _mm256_set1_epi32(QHALF), acc23 = acc01;
    for (int g = 0; g < a->groups; g++, p0 += 12, p1 += 12, p2 += 12, p3 += 12) {
        const __m256i x01 =
            _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)p0)),
                                    _mm_loadu_si128((const __m128i *)p1), 1);
        const __m256i x23 =
            _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)p2)),
                                    _mm_loadu_si128((const __m128i *)p3), 1);
        acc01 = _mm256_add_epi32(acc01, _mm256_madd_epi16(_mm256_shuffle_epi8(x01, lo),
                                                          _mm256_loadu_si256(w01 + 2 * g)));
        acc23 = _mm256_add_epi32(acc23, _mm256_madd_epi16(_mm256_shuffle_epi8(x23, lo),
                                                          _mm256_loadu_si256(w23 + 2 * g)));
        acc01 = _mm256_add_epi32(acc01, _mm256_madd_epi16(_mm256_shuffle_epi8(x01, hi),
                                                          _mm256_loadu_si256(w01 + 2 * g + 1)));
        acc23 = _mm256_add_epi32(acc23, _mm256_madd_epi16(_mm256_shuffle_epi8(x23, hi),
                                                          _mm256_loadu_si256(w23 + 2 * g + 1)));
    }
    const __m256i s16 =
        _mm256_packs_epi32(_mm256_srai_epi32(acc01, QBITS), _mm256_srai_epi32(acc23, QBITS));
    return _mm256_castsi256_si128(
        _mm256_permutevar8x32_epi32(_mm256_packus_epi16(s16, s16), order));
}

/* Can quad_rgb_avx2 read every pixel of this row? One check per row: the pixel with the
 * largest start reads furthest. */
static int row_fits_avx2(const uint8_t *s, const axis_coeffs *a, int xoff, const uint8_t *end)
{
    return (size_t)(end - (s + (size_t)(a->max_start - xoff) * 3)) >= (size_t)a->ksize / 4 * 12 + 4;
}

/* One interleaved RGB row with quad_rgb_avx2. Returns the first pixel it did not do (0 when
 * the row's reads could pass `end`); the caller finishes the row. */
__attribute__((target("avx2"))) static int hrow_rgb_avx2(const uint8_t *s, const axis_coeffs *a,
                                                         int xoff, const uint8_t *end, uint8_t *d)
{
    const __m128i rgb = _mm_setr_epi8(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1);
    const int n = a->out_size;
    if (!row_fits_avx2(s, a, xoff, end)) return 0;
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        const __m128i px = _mm_shuffle_epi8(quad_rgb_avx2(s, a, xoff, i), rgb);
        uint8_t *o = d + 3 * i;
        if (i + 6 <= n) { /* 16-byte store: the 4 extra bytes belong to pixels done next */
            _mm_storeu_si128((__m128i *)o, px);
        } else {
            _mm_storel_epi64((__m128i *)o, px);
            const int32_t last = _mm_extract_epi32(px, 2);
            memcpy(o + 8, &last, 4);
        }
    }
    return i;
}

/* The same row written straight into three planes (pl[k] gets channel k): the CHW layout of
 * raw datasets without a separate transpose of the resized image. Same return value. */
__attribute__((target("avx2"))) static int hrow_rgb_planar_avx2(const uint8_t *s,
                                                                const axis_coeffs *a, int xoff,
                                                                const uint8_t *end,
                                                                uint8_t *const pl[3])
{
    const __m128i planar = _mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, -1, -1, -1, -1);
    const int n = a->out_size;
    if (!row_fits_avx2(s, a, xoff, end)) return 0;
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        const __m128i px = _mm_shuffle_epi8(quad_rgb_avx2(s, a, xoff, i), planar);
        const int32_t r = _mm_cvtsi128_si32(px), g = _mm_extract_epi32(px, 1),
                      b = _mm_extract_epi32(px, 2);
        memcpy(pl[0] + i, &r, 4);
        memcpy(pl[1] + i, &g, 4);
        memcpy(pl[2] + i, &b, 4);
    }
    return i;
}

#endif

/* One gray output pixel: eight taps per pmaddwd. */
static inline uint8_t h_gray_sse2(const uint8_t *p, const int16_t *w, int count)
{
    const __m128i zero = _mm_setzero_si128();
    __m128i acc = _mm_setzero_si128();
    for (int k = 0; k < count; k += 8) {
        const __m128i px = _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)(p + k)), zero);
        acc = _mm_add_epi32(acc, _mm_madd_epi16(px, _mm_loadu_si128((const __m128i *)(w + k))));
    }
    acc = _mm_add_epi32(acc, _mm_shuffle_epi32(acc, _MM_SHUFFLE(1, 0, 3, 2)));
    acc = _mm_add_epi32(acc, _mm_shuffle_epi32(acc, _MM_SHUFFLE(2, 3, 0, 1)));
    return clamp_q(_mm_cvtsi128_si32(acc) + QHALF);
}
#endif

/* The horizontal pass of RGB rows into planes: planes[k] + y * pstride is row y of channel k.
 * Only with the AVX2 kernel (ld__resize_planar checks); pixels it leaves (a row's last < 4,
 * rows whose reads would pass `end`) take the scalar sums, which are the same integers. */
#ifdef LD_X86_DISPATCH
static void hpass_planar(const uint8_t *src, size_t sstride, int rows, const axis_coeffs *a,
                         int xoff, const uint8_t *end, uint8_t *const planes[3], size_t pstride)
{
    for (int y = 0; y < rows; y++) {
        const uint8_t *s = src + (size_t)y * sstride;
        uint8_t *const pl[3] = {planes[0] + (size_t)y * pstride, planes[1] + (size_t)y * pstride,
                                planes[2] + (size_t)y * pstride};
        for (int i = hrow_rgb_planar_avx2(s, a, xoff, end, pl); i < a->out_size; i++) {
            const int16_t *w = a->w + (size_t)i * a->ksize;
            const uint8_t *p = s + (size_t)(a->start[i] - xoff) * 3;
            int32_t r0 = QHALF, r1 = QHALF, r2 = QHALF;
            for (int k = 0; k < a->count[i]; k++, p += 3) {
                r0 += w[k] * p[0];
                r1 += w[k] * p[1];
                r2 += w[k] * p[2];
            }
            pl[0][i] = clamp_q(r0);
            pl[1][i] = clamp_q(r1);
            pl[2][i] = clamp_q(r2);
        }
    }
}
#endif

/* Horizontal pass: `rows` rows of `src` (pixels addressed from column 0 = source column
 * `xoff`) into `dst` rows of a->out_size pixels. `end` is the end of src's buffer: SIMD
 * loads that would cross it fall back to scalar code. */
static void hpass(const uint8_t *src, size_t sstride, int rows, int c, const axis_coeffs *a,
                  int xoff, const uint8_t *end, uint8_t *dst, size_t dstride)
{
    const int n = a->out_size, ks = a->ksize;
    (void)end;
#ifdef LD_X86_DISPATCH
    const int ssse3 = __builtin_cpu_supports("ssse3");
    const int avx2 = __builtin_cpu_supports("avx2");
#endif
    for (int y = 0; y < rows; y++) {
        const uint8_t *s = src + (size_t)y * sstride;
        uint8_t *d = dst + (size_t)y * dstride;
        if (c == 3) {
            int i0 = 0;
#ifdef LD_X86_DISPATCH
            if (avx2) i0 = hrow_rgb_avx2(s, a, xoff, end, d);
            if (ssse3) i0 = hrow_rgb_ssse3(s, a, i0, xoff, end, d);
#endif
            for (int i = i0; i < n; i++) {
                const int16_t *w = a->w + (size_t)i * ks;
                const uint8_t *p = s + (size_t)(a->start[i] - xoff) * 3;
#ifdef __SSE2__
                const int even = (a->count[i] + 1) & ~1;
                if ((size_t)(end - p) >= (size_t)even * 3 + 1) {
                    h_rgb_sse2(p, w, a->count[i], d + 3 * i);
                    continue;
                }
#endif
                int32_t r0 = QHALF, r1 = QHALF, r2 = QHALF;
                for (int k = 0; k < a->count[i]; k++, p += 3) {
                    r0 += w[k] * p[0];
                    r1 += w[k] * p[1];
                    r2 += w[k] * p[2];
                }
                d[3 * i] = clamp_q(r0);
                d[3 * i + 1] = clamp_q(r1);
                d[3 * i + 2] = clamp_q(r2);
            }
        } else if (c == 1) {
            for (int i = 0; i < n; i++) {
                const int16_t *w = a->w + (size_t)i * ks;
                const uint8_t *p = s + (a->start[i] - xoff);
#ifdef __SSE2__
                if ((size_t)(end - p) >= (size_t)((a->count[i] + 7) & ~7)) {
                    d[i] = h_gray_sse2(p, w, a->count[i]);
                    continue;
                }
#endif
                int32_t acc = QHALF;
                for (int k = 0; k < a->count[i]; k++)
                    acc += w[k] * p[k];
                d[i] = clamp_q(acc);
            }
        } else {
            for (int i = 0; i < n; i++) {
                const int16_t *w = a->w + (size_t)i * ks;
                for (int ch = 0; ch < c; ch++) {
                    const uint8_t *p = s + (size_t)(a->start[i] - xoff) * c + ch;
                    int32_t acc = QHALF;
                    for (int k = 0; k < a->count[i]; k++)
                        acc += w[k] * p[(size_t)k * c];
                    d[(size_t)i * c + ch] = clamp_q(acc);
                }
            }
        }
    }
}

/* Vertical pass: output row i of `dst` = weighted sum of rows start[i].. of `src`, whose first
 * row is source row `yoff`. `elems` = bytes per row to process.
 *
 * SSE2: 16 bytes of a row at a time, taps in pairs: the bytes of rows k and k+1 interleaved
 * and widened to int16 meet [w_k w_k+1] in pmaddwd, so four int32 accumulators stay in
 * registers over all taps. The remaining bytes of a row go through the scalar loop. */
#ifdef LD_X86_DISPATCH
/* vpass's SSE2 loop on 32 bytes at a time (AVX2 when the CPU has it). AVX2's unpack and pack
 * work within each 128-bit half, so each half goes through exactly the SSE2 steps: same
 * sums, same bytes. Returns how many bytes of the row it did: all of them, or 0 when the row is
 * shorter than 32 bytes. */
__attribute__((target("avx2"))) static size_t
vrow_avx2(const uint8_t *s0, size_t sstride, const int16_t *w, int count, uint8_t *d, size_t elems)
{
    const __m256i zero = _mm256_setzero_si256();
    size_t x0 = 0;
    if (elems < 32) return 0;
    for (; x0 < elems; x0 += 32) {
        /* The row's last block overlaps the one before: the overlap is computed twice, to the
         * same bytes, instead of going through the SSE2 and scalar loops (a 500-pixel RGB
         * row ends in 28 bytes that cost a sixth of the row's time). */
        if (x0 + 32 > elems) x0 = elems - 32;
        __m256i a0 = _mm256_set1_epi32(QHALF), a1 = a0, a2 = a0, a3 = a0;
        for (int k = 0; k < count; k += 2) {
            const uint8_t *r0 = s0 + (size_t)k * sstride + x0;
            const uint8_t *r1 = k + 1 < count ? r0 + sstride : r0; /* weight 0 then */
            const __m256i v0 = _mm256_loadu_si256((const __m256i *)r0);
            const __m256i v1 = _mm256_loadu_si256((const __m256i *)r1);
            int32_t wp;
            memcpy(&wp, w + k, 4);
            const __m256i wv = _mm256_set1_epi32(wp);
            const __m256i lo = _mm256_unpacklo_epi8(v0, v1), hi = _mm256_unpackhi_epi8(v0, v1);
            a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(_mm256_unpacklo_epi8(lo, zero), wv));
            a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(_mm256_unpackhi_epi8(lo, zero), wv));
            a2 = _mm256_add_epi32(a2, _mm256_madd_epi16(_mm256_unpacklo_epi8(hi, zero), wv));
            a3 = _mm256_add_epi32(a3, _mm256_madd_epi16(_mm256_unpackhi_epi8(hi, zero), wv));
        }
        a0 = _mm256_packs_epi32(_mm256_srai_epi32(a0, QBITS), _mm256_srai_epi32(a1, QBITS));
        a2 = _mm256_packs_epi32(_mm256_srai_epi32(a2, QBITS), _mm256_srai_epi32(a3, QBITS));
        _mm256_storeu_si256((__m256i *)(d + x0), _mm256_packus_epi16(a0, a2));
    }
    return x0;
}
#endif

LD_HOT static void vpass(const uint8_t *src, size_t sstride, int yoff, size_t elems,
                         const axis_coeffs *a, uint8_t *dst, size_t dstride, int32_t *restrict acc)
{
#ifdef LD_X86_DISPATCH
    const int avx2 = __builtin_cpu_supports("avx2");
#endif
    for (int i = 0; i < a->out_size; i++) {
        const int16_t *w = a->w + (size_t)i * a->ksize;
        const uint8_t *s0 = src + (size_t)(a->start[i] - yoff) * sstride;
        uint8_t *restrict d = dst + (size_t)i * dstride;
        const int count = a->count[i];
        size_t x0 = 0;
#ifdef LD_X86_DISPATCH
        if (avx2) x0 = vrow_avx2(s0, sstride, w, count, d, elems);
#endif
#ifdef __SSE2__
        const __m128i zero = _mm_setzero_si128();
        for (; x0 + 16 <= elems; x0 += 16) {
            __m128i a0 = _mm_set1_epi32(QHALF), a1 = a0, a2 = a0, a3 = a0;
            for (int k = 0; k < count; k += 2) {
                const uint8_t *r0 = s0 + (size_t)k * sstride + x0;
                const uint8_t *r1 = k + 1 < count ? r0 + sstride : r0; /* weight 0 then */
                const __m128i v0 = _mm_loadu_si128((const __m128i *)r0);
                const __m128i v1 = _mm_loadu_si128((const __m128i *)r1);
                int32_t wp;
                memcpy(&wp, w + k, 4);
                const __m128i wv = _mm_set1_epi32(wp);
                const __m128i lo = _mm_unpacklo_epi8(v0, v1), hi = _mm_unpackhi_epi8(v0, v1);
                a0 = _mm_add_epi32(a0, _mm_madd_epi16(_mm_unpacklo_epi8(lo, zero), wv));
                a1 = _mm_add_epi32(a1, _mm_madd_epi16(_mm_unpackhi_epi8(lo, zero), wv));
                a2 = _mm_add_epi32(a2, _mm_madd_epi16(_mm_unpacklo_epi8(hi, zero), wv));
                a3 = _mm_add_epi32(a3, _mm_madd_epi16(_mm_unpackhi_epi8(hi, zero), wv));
            }
            a0 = _mm_packs_epi32(_mm_srai_epi32(a0, QBITS), _mm_srai_epi32(a1, QBITS));
            a2 = _mm_packs_epi32(_mm_srai_epi32(a2, QBITS), _mm_srai_epi32(a3, QBITS));
            _mm_storeu_si128((__m128i *)(d + x0), _mm_packus_epi16(a0, a2));
        }
#endif
        if (x0 == elems) continue;
        const int32_t w0 = w[0];
        for (size_t x = x0; x < elems; x++)
            acc[x] = QHALF + w0 * s0[x];
        for (int k = 1; k < count; k++) {
            const uint8_t *restrict s = s0 + (size_t)k * sstride;
            const int32_t wk = w[k];
            for (size_t x = x0; x < elems; x++)
                acc[x] += wk * s[x];
        }
        for (size_t x = x0; x < elems; x++) {
            int32_t v = acc[x] >> QBITS;
            d[x] = (uint8_t)(v < 0 ? 0 : (v > 255 ? 255 : v));
        }
    }
}

/* ---- 16-bit images: the same tables and pass order, scalar, 64-bit sums ---- */

static inline uint16_t clamp_q16(int64_t acc)
{
    acc >>= QBITS;
    return (uint16_t)(acc < 0 ? 0 : (acc > 65535 ? 65535 : acc));
}

/* hpass on uint16 samples (strides in samples). */
static void hpass16(const uint16_t *src, size_t sstride, int rows, int c, const axis_coeffs *a,
                    int xoff, uint16_t *dst, size_t dstride)
{
    for (int y = 0; y < rows; y++) {
        const uint16_t *s = src + (size_t)y * sstride;
        uint16_t *d = dst + (size_t)y * dstride;
        for (int i = 0; i < a->out_size; i++) {
            const int16_t *w = a->w + (size_t)i * a->ksize;
            const uint16_t *p = s + (size_t)(a->start[i] - xoff) * c;
            for (int ch = 0; ch < c; ch++) {
                int64_t acc = QHALF;
                for (int k = 0; k < a->count[i]; k++)
                    acc += (int64_t)w[k] * p[(size_t)k * c + ch];
                d[(size_t)i * c + ch] = clamp_q16(acc);
            }
        }
    }
}

/* vpass on uint16 samples (strides and elems in samples). */
LD_HOT static void vpass16(const uint16_t *src, size_t sstride, int yoff, size_t elems,
                           const axis_coeffs *a, uint16_t *dst, size_t dstride,
                           int64_t *restrict acc)
{
    for (int i = 0; i < a->out_size; i++) {
        const int16_t *w = a->w + (size_t)i * a->ksize;
        const uint16_t *s0 = src + (size_t)(a->start[i] - yoff) * sstride;
        uint16_t *restrict d = dst + (size_t)i * dstride;
        for (size_t x = 0; x < elems; x++)
            acc[x] = QHALF;
        for (int k = 0; k < a->count[i]; k++) {
            const uint16_t *restrict s = s0 + (size_t)k * sstride;
            const int64_t wk = w[k];
            for (size_t x = 0; x < elems; x++)
                acc[x] += wk * s[x];
        }
        for (size_t x = 0; x < elems; x++)
            d[x] = clamp_q16(acc[x]);
    }
}

/* a->wb from a->w (see axis_coeffs): only x86 builds with the AVX2 kernel read it. */
static int axis_broadcast(axis_coeffs *a)
{
#ifdef LD_X86_DISPATCH
    const int groups = a->ksize / 4, pairs = (a->out_size + 1) / 2;
    size_t n;
    if (!ld__mul_size((size_t)pairs * groups, 32, &n) ||
        grow((void **)&a->wb, &a->wb_cap, n, 2) < 0)
        return LD_ENOMEM;
    for (int q = 0; q < pairs; q++)
        for (int g = 0; g < groups; g++)
            for (int half = 0; half < 2; half++) {
                const int i = 2 * q + half;
                for (int v = 0; v < 2; v++) {
                    int16_t *o = a->wb + (((size_t)q * groups + g) * 2 + v) * 16 + half * 8;
                    const int k = 4 * g + 2 * v;
                    const int16_t w0 = i < a->out_size ? a->w[(size_t)i * a->ksize + k] : 0;
                    const int16_t w1 = i < a->out_size ? a->w[(size_t)i * a->ksize + k + 1] : 0;
                    for (int j = 0; j < 4; j++) {
                        o[2 * j] = w0;
                        o[2 * j + 1] = w1;
                    }
                }
            }
#else
    (void)a;
#endif
    return LD_OK;
}

ld_resizer *ld__resizer_create(void)
{
    return calloc(1, sizeof(ld_resizer));
}

static void axis_free(axis_coeffs *a)
{
    free(a->start);
    free(a->w);
    free(a->wb);
}

void ld__resizer_free(ld_resizer *r)
{
    if (!r) return;
    for (int k = 0; k < AXIS_CACHE; k++) {
        axis_free(&r->ax[k]);
        axis_free(&r->ay[k]);
    }
    free(r->fw);
    free(r->tmp);
    free(r->acc);
    free(r->acc64);
    ld__image_free(&r->img);
    free(r);
}

/* Average taps per output pixel of an axis (for the pass-order cost estimate). */
static double axis_taps(const axis_coeffs *a)
{
    double scale = a->len / a->out_size;
    return 2.0 * filter_support(a->filter) * (scale > 1.0 ? scale : 1.0);
}

/* The two passes of one resize: coefficient tables, order, intermediate image. */
typedef struct passes {
    const axis_coeffs *ax, *ay;
    int h_first;
    size_t tmp_stride, tmp_bytes;
} passes;

static int prepare(ld_resizer *r, const ld_image *src, const ld_resize_plan *p, int filter,
                   passes *ps, ld_err *e)
{
    int rc = LD_OK;
    const int c = src->c;
    LD_CHECK(e, filter == LD_FILTER_LANCZOS3 || filter == LD_FILTER_BILINEAR, LD_EINVAL,
             "resize: unknown filter %d", filter);
    rc = axis_build(r, r->ax, &r->ax_next, filter, src->w, p->crop_x, p->crop_w, p->scaled_w, 1,
                    &ps->ax);
    if (rc == LD_OK)
        rc = axis_build(r, r->ay, &r->ay_next, filter, src->h, p->crop_y, p->crop_h, p->scaled_h, 0,
                        &ps->ay);
    LD_CHECK(e, rc == LD_OK, LD_ENOMEM, "resize: out of memory for filter coefficients");
    const axis_coeffs *ax = ps->ax, *ay = ps->ay;
    const int yrows = ay->hi - ay->lo, xcols = ax->hi - ax->lo;
    /* Cost of each order in rough SIMD instructions per (tap x output pixel): the vertical
     * pass does about 0.35 per byte, the horizontal one about 2 per RGB pixel and 1 per gray
     * pixel (instruction counts of the loops above plus their gathers; on a 2-core EPYC VM
     * 500x375 -> 224x224 took 0.48 ms vertical-first vs 0.56 ms horizontal-first for RGB,
     * 0.27 vs 0.42 ms for gray). The estimate decides the output bytes (the 8-bit intermediate
     * differs), so it stays as it is even where faster kernels shifted the real costs. */
    const double hw = c == 3 ? 2.0 : (c == 1 ? 1.0 : 3.0 * c), vw = 0.35 * c;
    const double cost_hv = (double)yrows * p->scaled_w * axis_taps(ax) * hw +
                           (double)p->scaled_h * p->scaled_w * axis_taps(ay) * vw;
    const double cost_vh = (double)p->scaled_h * xcols * axis_taps(ay) * vw +
                           (double)p->scaled_h * p->scaled_w * axis_taps(ax) * hw;
    ps->h_first = cost_hv <= cost_vh;
    ps->tmp_stride = ps->h_first ? (size_t)p->scaled_w * c : (size_t)xcols * c;
    const int tmp_rows = ps->h_first ? yrows : p->scaled_h;
    const size_t acc_elems = ps->h_first ? ps->tmp_stride : (size_t)p->scaled_w * c;
    LD_CHECK(e, ld__mul_size(ps->tmp_stride, (size_t)tmp_rows, &ps->tmp_bytes), LD_ENOMEM,
             "resize: intermediate image too large");
    rc = grow((void **)&r->tmp, &r->tmp_cap, ps->tmp_bytes, 1);
    if (rc == LD_OK)
        rc = grow((void **)&r->acc, &r->acc_cap,
                  acc_elems > ps->tmp_stride ? acc_elems : ps->tmp_stride, sizeof(int32_t));
    LD_CHECK(e, rc == LD_OK, LD_ENOMEM, "resize: out of memory for a %zu-byte scratch image",
             ps->tmp_bytes);
fail:
    return rc;
}

/* ld__resize of a 16-bit image: the same plan, tables and pass order (the same filter), with
 * 16-bit intermediate samples; pad mode's gray level v is v * 257. */
static int resize16(ld_resizer *r, const ld_image *src, const ld_geometry *g,
                    const ld_resize_plan *p, ld_image *dst, ld_err *e)
{
    int rc = LD_OK;
    const int c = src->c;
    rc = ld__image_alloc_depth(dst, p->out_w, p->out_h, c, 16);
    LD_CHECK(e, rc == LD_OK, rc, "resize: cannot allocate a 16-bit %dx%dx%d image", p->out_w,
             p->out_h, c);
    const size_t dstride = (size_t)p->out_w * c; /* samples */
    uint16_t *d = (uint16_t *)(void *)dst->px;
    const uint16_t *s = (const uint16_t *)(const void *)src->px;
    if (p->identity) {
        memcpy(d, s, dstride * p->out_h * 2);
        return LD_OK;
    }
    if (p->scaled_w != p->out_w || p->scaled_h != p->out_h)
        for (size_t i = 0; i < dstride * p->out_h; i++)
            d[i] = (uint16_t)(g->pad_value * 257u);
    uint16_t *out = d + (size_t)p->off_y * dstride + (size_t)p->off_x * c;
    passes ps;
    LD_TRY(prepare(r, src, p, g->filter, &ps, e));
    const size_t acc_n = ps.h_first ? ps.tmp_stride : (size_t)p->scaled_w * c;
    rc = grow((void **)&r->tmp, &r->tmp_cap, ps.tmp_bytes * 2, 1);
    if (rc == LD_OK)
        rc = grow((void **)&r->acc64, &r->acc64_cap, acc_n > ps.tmp_stride ? acc_n : ps.tmp_stride,
                  sizeof(int64_t));
    LD_CHECK(e, rc == LD_OK, LD_ENOMEM, "resize: out of memory for a 16-bit scratch image");
    uint16_t *tmp = (uint16_t *)(void *)r->tmp;
    const size_t sstride = (size_t)src->w * c;
    const int ylo = ps.ay->lo, yrows = ps.ay->hi - ps.ay->lo, xlo = ps.ax->lo;
    if (ps.h_first) {
        hpass16(s + (size_t)ylo * sstride, sstride, yrows, c, ps.ax, 0, tmp, ps.tmp_stride);
        vpass16(tmp, ps.tmp_stride, ylo, ps.tmp_stride, ps.ay, out, dstride, r->acc64);
    } else {
        vpass16(s + (size_t)xlo * c, sstride, 0, ps.tmp_stride, ps.ay, tmp, ps.tmp_stride,
                r->acc64);
        hpass16(tmp, ps.tmp_stride, p->scaled_h, c, ps.ax, xlo, out, dstride);
    }
fail:
    return rc;
}

int ld__resize(ld_resizer *r, const ld_image *src, const ld_geometry *g, ld_image *dst, ld_err *e)
{
    int rc = LD_OK;
    ld_resize_plan p;
    LD_CHECK(e, src && src->px && src->w > 0 && src->h > 0 && src->c >= 1 && src->c <= 4, LD_EINVAL,
             "resize: invalid source image");
    LD_CHECK(e, src != dst, LD_EINVAL, "resize: source and destination must differ");
    LD_TRY(ld__resize_plan(g, src->w, src->h, &p, e));
    if (src->depth == 16) return resize16(r, src, g, &p, dst, e);
    const int c = src->c;
    rc = ld__image_alloc(dst, p.out_w, p.out_h, c);
    LD_CHECK(e, rc == LD_OK, rc, "resize: cannot allocate a %dx%dx%d image", p.out_w, p.out_h, c);
    if (p.identity) {
        memcpy(dst->px, src->px, (size_t)src->w * src->h * c);
        return LD_OK;
    }
    const size_t dstride = (size_t)p.out_w * c;
    if (p.scaled_w != p.out_w || p.scaled_h != p.out_h)
        memset(dst->px, g->pad_value, dstride * p.out_h);
    uint8_t *out = dst->px + (size_t)p.off_y * dstride + (size_t)p.off_x * c;

    passes ps;
    LD_TRY(prepare(r, src, &p, g->filter, &ps, e));
    const size_t sstride = (size_t)src->w * c;
    const int ylo = ps.ay->lo, yrows = ps.ay->hi - ps.ay->lo, xlo = ps.ax->lo;
    if (ps.h_first) {
        hpass(src->px + (size_t)ylo * sstride, sstride, yrows, c, ps.ax, 0,
              src->px + sstride * src->h, r->tmp, ps.tmp_stride);
        vpass(r->tmp, ps.tmp_stride, ylo, ps.tmp_stride, ps.ay, out, dstride, r->acc);
    } else {
        vpass(src->px + (size_t)xlo * c, sstride, 0, ps.tmp_stride, ps.ay, r->tmp, ps.tmp_stride,
              r->acc);
        hpass(r->tmp, ps.tmp_stride, p.scaled_h, c, ps.ax, xlo, r->tmp + ps.tmp_bytes, out,
              dstride);
    }
fail:
    return rc;
}

int ld__resize_planar(ld_resizer *r, const ld_image *src, const ld_geometry *g, const int ch[3],
                      ld_buf *out, int *out_w, int *out_h, ld_err *e)
{
    int rc = LD_OK;
    ld_resize_plan p;
    LD_CHECK(e, src && src->px && src->w > 0 && src->h > 0 && (src->c == 1 || src->c == 3),
             LD_EINVAL, "resize: invalid source image for planar output");
    LD_CHECK(e, src->depth != 16, LD_EINVAL, "resize: planar output takes 8-bit images");
    LD_TRY(ld__resize_plan(g, src->w, src->h, &p, e));
    const int c = src->c;
    const size_t plane = (size_t)p.out_w * p.out_h;
    LD_CHECK(e, ld__buf_reserve(out, plane * c) == LD_OK, LD_ENOMEM,
             "resize: cannot allocate a %dx%dx%d image", p.out_w, p.out_h, c);
    out->len = plane * c;
    *out_w = p.out_w;
    *out_h = p.out_h;
#ifdef LD_X86_DISPATCH
    if (c == 3 && !p.identity && __builtin_cpu_supports("avx2")) {
        passes ps;
        LD_TRY(prepare(r, src, &p, g->filter, &ps, e));
        if (!ps.h_first) { /* the horizontal pass is the last: it writes the planes */
            if (p.scaled_w != p.out_w || p.scaled_h != p.out_h)
                memset(out->p, g->pad_value, plane * 3);
            uint8_t *pl[3];
            for (int k = 0; k < 3; k++)
                pl[ch[k]] = out->p + plane * k + (size_t)p.off_y * p.out_w + p.off_x;
            const size_t sstride = (size_t)src->w * 3;
            vpass(src->px + (size_t)ps.ax->lo * 3, sstride, 0, ps.tmp_stride, ps.ay, r->tmp,
                  ps.tmp_stride, r->acc);
            hpass_planar(r->tmp, ps.tmp_stride, p.scaled_h, ps.ax, ps.ax->lo, r->tmp + ps.tmp_bytes,
                         pl, (size_t)p.out_w);
            return LD_OK;
        }
    }
#endif
    /* Otherwise: interleaved into the resizer's scratch image, then planes. */
    LD_TRY(ld__resize(r, src, g, &r->img, e));
    if (c == 1)
        memcpy(out->p, r->img.px, plane);
    else
        ld__deinterleave3(r->img.px, (size_t)p.out_w * 3, p.out_h, p.out_w, ch, 0, out->p);
fail:
    return rc;
}
