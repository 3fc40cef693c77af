/* tinycompile runtime: host entry point (file-driven runner, no timer). */
#include <stdint.h>

#include "tc_timer.h"

int tc_run_files(void);

void tc_timer_init(void) {}

uint32_t tc_timer_read(void)
{
    return 0;
}

int main(void)
{
    return tc_run_files();
}
