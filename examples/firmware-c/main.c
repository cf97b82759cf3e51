/* main.c: a minimal firmware around the digits model compiled by zant: one fixed 8x8 image in,
   the ten class probabilities out, printed over semihosting (QEMU's console) as the bits of each
   float, then the most likely class. A model compiled with --arena caller gets its scratch arena
   from here (digits_ARENA_CALLER, digits_ARENA_SIZE and digits_ARENA_ALIGN are in its header). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "digits.h"

static float image[digits_INPUT_0_SIZE];
static float probabilities[digits_OUTPUT_0_SIZE];

#if digits_ARENA_CALLER
static uint8_t arena[digits_ARENA_SIZE > 0 ? digits_ARENA_SIZE : 1] __attribute__((aligned(digits_ARENA_ALIGN)));
#endif

int main(void) {
    for (unsigned i = 0; i < digits_INPUT_0_SIZE; i++) {
        image[i] = (float)(i * 7u % 17u) / 16.0f; /* pixels in [0, 1], exact in float */
    }
    int32_t status = 0;
#if digits_ARENA_CALLER
    status = digits_set_arena(arena, sizeof arena);
    printf("arena: %u bytes of the firmware's\n", (unsigned)sizeof arena);
#endif
    if (status == 0) {
        status = digits_predict(image, probabilities);
    }
    if (status != 0) {
        printf("status %" PRId32 "\n", status); /* digits_STATUS_... in digits.h */
        return 1;
    }
    unsigned best = 0;
    for (unsigned i = 0; i < digits_OUTPUT_0_SIZE; i++) {
        uint32_t bits;
        memcpy(&bits, &probabilities[i], sizeof bits);
        printf("probabilities[%u] = 0x%08" PRIx32 "\n", i, bits);
        if (probabilities[i] > probabilities[best]) {
            best = i;
        }
    }
    printf("class %u\n", best);
    return 0;
}
