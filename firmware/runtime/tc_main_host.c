/* tinycompile runtime: host entry point (file-driven runner, no timer). A refused input
 * (status 5) is reported on stderr as "tc-refused: sample=S layer=L". */
#include <stdint.h>
#include <stdio.h>

#include "tc_timer.h"

int tc_run_files(void);
extern uint32_t tc_refused_sample;
extern uint32_t tc_refused_layer;

void tc_timer_init(void) {}

uint32_t tc_timer_read(void)
{
    return 0;
}

int main(void)
{
    int rc = tc_run_files();
    if (rc == 5) {
        fprintf(stderr, "tc-refused: sample=%lu layer=%lu\n", (unsigned long)tc_refused_sample,
                (unsigned long)tc_refused_layer);
    }
    return rc;
}
