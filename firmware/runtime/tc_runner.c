/* tinycompile runtime: the file-driven inference runner.
 *
 * Used by the host build and by emulator builds (stdio goes through semihosting there).
 * Reads tc_in.bin from the current directory: a little-endian uint32 sample count, then for each
 * sample every input tensor's bytes in order. Writes tc_out.bin: for each sample,
 *   [TC_DEBUG_LAYERS] every layer's output tensor bytes, in execution order,
 *   every graph output's bytes in order,
 *   [TC_DEBUG_LAYERS] the state region's TC_STATE_BYTES bytes after the call,
 *   [TC_PROFILE] a uint32 tick count per layer, then the uint32 ticks of the whole tc_invoke()
 *   less the time spent inside the layer hook (so layer dumps do not inflate it).
 * Samples run in order through the one model instance: state (variable tensors) carries over from
 * one sample to the next, as through one TFLM interpreter invoked without Reset().
 * Exit status: 0 on success, 3 when a file cannot be opened, 4 on a short read, 5 when a layer
 * refused its input (tc_invoke() returned nonzero, as TFLM's Invoke fails): the run stops there,
 * tc_out.bin holds the complete samples before it (and whatever that sample wrote), and
 * tc_refused_sample / tc_refused_layer say where (the entry point reports them as the line
 * "tc-refused: sample=S layer=L").
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tc_model.h"
#include "tc_timer.h"

#if defined(TC_DEBUG_LAYERS) || defined(TC_PROFILE)
static FILE *g_out;
#endif

uint32_t tc_refused_sample;
uint32_t tc_refused_layer;

#ifdef TC_PROFILE
static uint32_t g_ticks[TC_NUM_LAYERS > 0 ? TC_NUM_LAYERS : 1];
static uint32_t g_mark;
static uint32_t g_hook_ticks; /* time spent inside the hook, excluded from the total */
#endif

#if defined(TC_DEBUG_LAYERS) || defined(TC_PROFILE)
void tc_layer_hook(int layer, const void *data, uint32_t nbytes)
{
#ifdef TC_PROFILE
    uint32_t now = tc_timer_read();
    g_ticks[layer] = now - g_mark;
#else
    (void)layer;
#endif
#ifdef TC_DEBUG_LAYERS
    fwrite(data, 1, nbytes, g_out);
#else
    (void)data;
    (void)nbytes;
#endif
#ifdef TC_PROFILE
    g_mark = tc_timer_read();
    g_hook_ticks += g_mark - now;
#endif
}
#endif

static int read_u32(FILE *f, uint32_t *v)
{
    unsigned char b[4];
    if (fread(b, 1, 4, f) != 4) {
        return 0;
    }
    *v = (uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) | ((uint32_t)b[3] << 24);
    return 1;
}

#ifdef TC_PROFILE
static void write_u32(FILE *f, uint32_t v)
{
    unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 24)};
    fwrite(b, 1, 4, f);
}
#endif

int tc_run_files(void)
{
    FILE *in = fopen("tc_in.bin", "rb");
    FILE *out = fopen("tc_out.bin", "wb");
    uint32_t count;
    if (!in || !out) {
        return 3;
    }
    if (!read_u32(in, &count)) {
        return 4;
    }
#if defined(TC_DEBUG_LAYERS) || defined(TC_PROFILE)
    g_out = out;
#endif
    tc_timer_init();
    for (uint32_t s = 0; s < count; s++) {
        for (int i = 0; i < TC_NUM_INPUTS; i++) {
            if (fread(tc_input(i), 1, tc_input_info[i].bytes, in) != tc_input_info[i].bytes) {
                return 4;
            }
        }
#ifdef TC_PROFILE
        g_hook_ticks = 0;
        uint32_t start = tc_timer_read();
        g_mark = start;
#endif
        int refused = tc_invoke();
        if (refused != 0) {
            tc_refused_sample = s;
            tc_refused_layer = (uint32_t)(refused - 1);
            fclose(in);
            fclose(out);
            return 5;
        }
#ifdef TC_PROFILE
        uint32_t total = tc_timer_read() - start - g_hook_ticks;
#endif
        for (int i = 0; i < TC_NUM_OUTPUTS; i++) {
            fwrite(tc_output(i), 1, tc_output_info[i].bytes, out);
        }
#if defined(TC_DEBUG_LAYERS) && TC_STATE_BYTES > 0
        fwrite(tc_state_data(), 1, TC_STATE_BYTES, out);
#endif
#ifdef TC_PROFILE
        for (int l = 0; l < TC_NUM_LAYERS; l++) {
            write_u32(out, g_ticks[l]);
        }
        write_u32(out, total);
#endif
    }
    fclose(in);
    fclose(out);
    return 0;
}
