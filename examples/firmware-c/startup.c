/* startup.c: the reset path of a bare-metal Cortex-M image: the vector table, the FPU switched
   on, .data copied from flash, .bss zeroed, newlib's semihosting console opened, then main and
   exit (which ends the QEMU run with main's status). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

extern uint32_t __data_start[], __data_end[], __data_load[], __bss_start[], __bss_end[], __stack_top[];
extern int main(void);
extern void initialise_monitor_handles(void); /* librdimon: stdin/stdout/stderr over semihosting */

void reset_handler(void);

static void fault_handler(void) {
    for (;;) {
    }
}

/* Initial stack pointer, reset, then NMI, HardFault, MemManage, BusFault and UsageFault. */
__attribute__((section(".vectors"), used)) static void (*const vectors[])(void) = {
    (void (*)(void))__stack_top, reset_handler, fault_handler, fault_handler,
    fault_handler, fault_handler, fault_handler,
};

void reset_handler(void) {
#if defined(__ARM_FP)
    /* CPACR: full access to coprocessors 10 and 11 (the FPU); float code faults without it. */
    *(volatile uint32_t *)0xE000ED88u |= 0xFu << 20;
    __asm volatile("dsb\n\tisb" ::: "memory");
#endif
    memcpy(__data_start, __data_load, (size_t)((char *)__data_end - (char *)__data_start));
    memset(__bss_start, 0, (size_t)((char *)__bss_end - (char *)__bss_start));
    initialise_monitor_handles();
    exit(main());
}
