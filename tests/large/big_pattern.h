/* The content of the large test datasets (tests/large/make_big_h5.py writes the same): sample i
 * of S bytes is its index as 8 little-endian bytes, then S - 8 bytes of a fixed periodic pattern
 * starting at offset (i * 7919) mod P; its label is (i * 31) mod 1000. Every sample is distinct
 * and every byte of it can be checked. */
#ifndef LD_BIG_PATTERN_H
#define LD_BIG_PATTERN_H
#include <stdint.h>

#define LD_BIG_PERIOD 1048573u /* P, a prime */

static inline uint8_t ld_big_base(uint64_t k) /* byte k of the pattern, 0 <= k < 2P */
{
    const uint64_t x = (k % LD_BIG_PERIOD) * 2654435761u;
    return (uint8_t)(x >> 13);
}

static inline uint64_t ld_big_offset(uint64_t i)
{
    return (i * 7919u) % LD_BIG_PERIOD;
}

static inline int32_t ld_big_label(uint64_t i)
{
    return (int32_t)((i * 31u) % 1000u);
}
#endif
