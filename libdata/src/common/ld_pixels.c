/* Pixel layout kernels shared by the converter and the reader. */
#include "common/ld_internal.h"

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__)) &&                             \
    !defined(LD_NO_X86_DISPATCH) /* -DLD_NO_X86_DISPATCH: the plain C loop only */
#include <tmmintrin.h>
#define LD_HAVE_SSSE3_KERNEL 1
#endif

#ifdef LD_HAVE_SSSE3_KERNEL
/* 16 pixels = 48 source bytes in three 16-byte loads. Output byte j of a plane with source
 * channel ch is source byte 3j + ch (3(15 - j) + ch when mirrored): it lies in load
 * (3j + ch) / 16, so each plane is the OR of three byte shuffles whose masks select that
 * load's bytes and zero the rest (mask byte 0x80). Returns the pixels done per row. */
__attribute__((target("ssse3"))) static int deinterleave3_ssse3(const uint8_t *src, size_t sy,
                                                                int oh, int ow, const int ch[3],
                                                                int mirror, uint8_t *dst)
{
    __m128i m[3][3];
    for (int p = 0; p < 3; p++) {
        for (int l = 0; l < 3; l++) {
            int8_t b[16];
            for (int j = 0; j < 16; j++) {
                const int sb = 3 * (mirror ? 15 - j : j) + ch[p];
                b[j] = sb / 16 == l ? (int8_t)(sb % 16) : INT8_MIN; /* 0x80: zero */
            }
            m[p][l] = _mm_loadu_si128((const __m128i *)b);
        }
    }
    const size_t plane = (size_t)oh * ow;
    const int done = ow / 16 * 16;
    for (int y = 0; y < oh; y++) {
        const uint8_t *r = src + (size_t)y * sy;
        uint8_t *o = dst + (size_t)y * ow;
        for (int k = 0; k < done; k += 16) {
            /* the block of source pixels that lands at outputs k..k+15 */
            const uint8_t *q = r + 3 * (size_t)(mirror ? ow - 16 - k : k);
            const __m128i a = _mm_loadu_si128((const __m128i *)q);
            const __m128i b = _mm_loadu_si128((const __m128i *)(q + 16));
            const __m128i c = _mm_loadu_si128((const __m128i *)(q + 32));
            for (int p = 0; p < 3; p++) {
                const __m128i v = _mm_or_si128(
                    _mm_or_si128(_mm_shuffle_epi8(a, m[p][0]), _mm_shuffle_epi8(b, m[p][1])),
                    _mm_shuffle_epi8(c, m[p][2]));
                _mm_storeu_si128((__m128i *)(o + p * plane + k), v);
            }
        }
    }
    return done;
}
#endif

void ld__deinterleave3(const uint8_t *src, size_t sy, int oh, int ow, const int ch[3], int mirror,
                       uint8_t *dst)
{
    int done = 0;
#ifdef LD_HAVE_SSSE3_KERNEL
    if (__builtin_cpu_supports("ssse3"))
        done = deinterleave3_ssse3(src, sy, oh, ow, ch, mirror, dst);
#endif
    const size_t plane = (size_t)oh * ow;
    for (int y = 0; y < oh; y++) {
        const uint8_t *restrict r = src + (size_t)y * sy;
        uint8_t *restrict o = dst + (size_t)y * ow;
        for (int k = done; k < ow; k++) {
            const uint8_t *px = r + 3 * (size_t)(mirror ? ow - 1 - k : k);
            o[k] = px[ch[0]];
            o[plane + k] = px[ch[1]];
            o[2 * plane + k] = px[ch[2]];
        }
    }
}
