/* tinycompile board support: the validation protocol on the console UART (real-board builds).
 *
 * After its start-up report, main() hands the console to tc_proto_loop(), which answers framed
 * binary requests from `tinycompile validate` for ever. Byte layout, commands and errors:
 * docs/validate_protocol.md. In short, every frame (both directions) is
 *   A5 5A | cmd | seq | len (u16 LE) | payload[len] | CRC-32 (LE) of cmd..payload
 * with zlib's CRC-32. A reply carries cmd | 0x80, the request's seq, and a status byte first.
 * The device hunts for the sync marker byte by byte, so garbage before a frame is skipped; a
 * frame with a bad CRC, an unknown command or a bad length gets an error reply.
 *
 * RAM: one receive buffer of TC_PROTO_MAX_PAYLOAD bytes (256) plus a few words; replies are
 * streamed (CRC computed on the fly), so there is no transmit buffer.
 */
#include <stdint.h>
#include <string.h>

#include "tc_board_io.h"
#include "tc_model.h"
#include "tc_timer.h"

#define TC_PROTO_VERSION 2u
#define TC_PROTO_MAX_PAYLOAD 256u

enum {
    CMD_HELLO = 0x01,
    CMD_SET_INPUT = 0x02,
    CMD_INVOKE = 0x03,
    CMD_GET_OUTPUT = 0x04,
    CMD_GET_LAYERS = 0x05,
    CMD_RESET_STATE = 0x06,
};

enum {
    ST_OK = 0,
    ST_BAD_CRC = 1,
    ST_UNKNOWN_CMD = 2,
    ST_BAD_LENGTH = 3,
    ST_BAD_ARG = 4,
    ST_UNSUPPORTED = 5,
};

/* The model's SHA-256, computed by the compiler from the model file (tc_model.h); a model
 * header written by hand may lack it: zeros then (no model file matches). */
#ifndef TC_MODEL_SHA256_BYTES
#define TC_MODEL_SHA256_BYTES 0
#endif
/* Likewise a hand-written model without state (and without tc_reset_state). */
#ifdef TC_STATE_BYTES
#define TC_PROTO_STATE_BYTES TC_STATE_BYTES
#else
#define TC_PROTO_STATE_BYTES 0
#endif
static const uint8_t tc_model_sha256[32] = {TC_MODEL_SHA256_BYTES};

/* The hello reply lists every input and output size in one frame (and the clock source's name,
 * at most TC_PROTO_SOURCE_MAX bytes). */
#define TC_PROTO_SOURCE_MAX 15u
typedef char tc_proto_io_fits[(18u + 32u + 4u * (TC_NUM_INPUTS + TC_NUM_OUTPUTS) + 1u +
                               sizeof(TC_BOARD_NAME) + 1u + TC_PROTO_SOURCE_MAX) <=
                                      TC_PROTO_MAX_PAYLOAD
                                  ? 1
                                  : -1];

static uint8_t g_rx[TC_PROTO_MAX_PAYLOAD];
static uint32_t g_tx_crc;

static uint32_t crc_update(uint32_t crc, const uint8_t *p, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int b = 0; b < 8; b++) {
            crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
        }
    }
    return crc;
}

__attribute__((noinline)) static void tx_bytes(const void *data, uint32_t n)
{
    const uint8_t *p = (const uint8_t *)data;
    g_tx_crc = crc_update(g_tx_crc, p, n);
    for (uint32_t i = 0; i < n; i++) {
        tc_console_putc((char)p[i]);
    }
}

static void tx_u8(uint32_t v)
{
    uint8_t b = (uint8_t)v;
    tx_bytes(&b, 1);
}

static void tx_u16(uint32_t v)
{
    uint8_t b[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    tx_bytes(b, 2);
}

static void tx_u32(uint32_t v)
{
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    tx_bytes(b, 4);
}

/* Start a reply of `len` payload bytes (status included) whose first byte is `status`. */
static void reply_begin(uint8_t cmd, uint8_t seq, uint32_t len, uint8_t status)
{
    tc_console_putc((char)0xA5);
    tc_console_putc((char)0x5A);
    g_tx_crc = 0xFFFFFFFFu;
    tx_u8(cmd | 0x80u);
    tx_u8(seq);
    tx_u16(len);
    tx_u8(status);
}

static void reply_end(void)
{
    uint32_t crc = ~g_tx_crc;
    uint8_t b[4] = {(uint8_t)crc, (uint8_t)(crc >> 8), (uint8_t)(crc >> 16), (uint8_t)(crc >> 24)};
    for (int i = 0; i < 4; i++) {
        tc_console_putc((char)b[i]);
    }
    tc_console_flush();
}

static void reply_status(uint8_t cmd, uint8_t seq, uint8_t status)
{
    reply_begin(cmd, seq, 1, status);
    reply_end();
}

static uint32_t rd_u16(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8);
}

static uint32_t rd_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}

static void do_hello(uint8_t seq, const uint32_t *layer_ticks)
{
    uint32_t name_len = sizeof(TC_BOARD_NAME) - 1u;
    const char *source = tc_board_clock_source(); /* what the clock runs from: the host gives
                                                     milliseconds only for a clock it knows */
    uint32_t source_len = 0;
    while (source[source_len] != '\0' && source_len < TC_PROTO_SOURCE_MAX) {
        source_len++;
    }
    uint32_t len = 1u + 17u + 32u + 4u * (TC_NUM_INPUTS + TC_NUM_OUTPUTS) + 1u + name_len + 1u +
                   source_len;
    reply_begin(CMD_HELLO, seq, len, ST_OK);
    tx_u8(TC_PROTO_VERSION);
    tx_u8((uint32_t)tc_timer_kind());
    tx_u8((layer_ticks ? 1u : 0u) | (TC_PROTO_STATE_BYTES > 0 ? 2u : 0u));
    tx_u16(TC_PROTO_MAX_PAYLOAD);
    tx_u32(tc_board_clock_hz()); /* the clock it really runs at, after fallbacks */
    tx_u8(TC_NUM_INPUTS);
    tx_u8(TC_NUM_OUTPUTS);
    tx_u16(TC_NUM_LAYERS);
    tx_u32(TC_PROTO_STATE_BYTES);
    tx_bytes(tc_model_sha256, 32);
    for (int i = 0; i < TC_NUM_INPUTS; i++) {
        tx_u32(tc_input_info[i].bytes);
    }
    for (int i = 0; i < TC_NUM_OUTPUTS; i++) {
        tx_u32(tc_output_info[i].bytes);
    }
    tx_u8(name_len);
    tx_bytes(TC_BOARD_NAME, name_len);
    tx_u8(source_len);
    tx_bytes(source, source_len);
    reply_end();
}

/* Is [offset, offset + count) inside a tensor of `bytes`? (No overflow: both fit 32 bits.) */
static int in_range(uint32_t offset, uint32_t count, uint32_t bytes)
{
    return offset <= bytes && count <= bytes - offset;
}

static void handle(uint8_t cmd, uint8_t seq, uint32_t len, uint32_t *layer_ticks,
                   uint32_t *layer_mark)
{
    const uint8_t *p = g_rx;
    switch (cmd) {
    case CMD_HELLO:
        if (len != 0) {
            break;
        }
        do_hello(seq, layer_ticks);
        return;
    case CMD_SET_INPUT: {
        if (len < 5) {
            break;
        }
        uint32_t idx = p[0], off = rd_u32(p + 1), n = len - 5u;
        if (idx >= TC_NUM_INPUTS || !in_range(off, n, tc_input_info[idx].bytes)) {
            reply_status(cmd, seq, ST_BAD_ARG);
            return;
        }
        memcpy((uint8_t *)tc_input((int)idx) + off, p + 5, n);
        reply_status(cmd, seq, ST_OK);
        return;
    }
    case CMD_INVOKE: {
        if (len != 0) {
            break;
        }
        uint32_t start = tc_timer_read();
        if (layer_mark) {
            *layer_mark = start;
        }
        int status = tc_invoke(); /* 0, or 1 + the layer that refused its input */
        uint32_t cycles = tc_timer_read() - start;
        reply_begin(cmd, seq, 9, ST_OK);
        tx_u32((uint32_t)status);
        tx_u32(cycles);
        reply_end();
        return;
    }
    case CMD_GET_OUTPUT: {
        if (len != 7) {
            break;
        }
        uint32_t idx = p[0], off = rd_u32(p + 1), n = rd_u16(p + 5);
        if (idx >= TC_NUM_OUTPUTS || n > TC_PROTO_MAX_PAYLOAD - 1u ||
            !in_range(off, n, tc_output_info[idx].bytes)) {
            reply_status(cmd, seq, ST_BAD_ARG);
            return;
        }
        reply_begin(cmd, seq, 1u + n, ST_OK);
        tx_bytes((const uint8_t *)tc_output((int)idx) + off, n);
        reply_end();
        return;
    }
    case CMD_GET_LAYERS: {
        if (len != 4) {
            break;
        }
        uint32_t first = rd_u16(p), n = rd_u16(p + 2);
        if (!layer_ticks) {
            reply_status(cmd, seq, ST_UNSUPPORTED);
            return;
        }
        if (n > (TC_PROTO_MAX_PAYLOAD - 1u) / 4u || !in_range(first, n, TC_NUM_LAYERS)) {
            reply_status(cmd, seq, ST_BAD_ARG);
            return;
        }
        reply_begin(cmd, seq, 1u + 4u * n, ST_OK);
        for (uint32_t i = 0; i < n; i++) {
            tx_u32(layer_ticks[first + i]);
        }
        reply_end();
        return;
    }
    case CMD_RESET_STATE:
        if (len != 0) {
            break;
        }
#ifdef TC_STATE_BYTES
        tc_reset_state();
#endif
        reply_status(cmd, seq, ST_OK);
        return;
    default:
        reply_status(cmd, seq, ST_UNKNOWN_CMD);
        return;
    }
    reply_status(cmd, seq, ST_BAD_LENGTH);
}

void tc_proto_loop(uint32_t *layer_ticks, uint32_t *layer_mark)
{
    for (;;) {
        /* Hunt for the sync marker A5 5A (an A5 A5 5A run still syncs). */
        uint8_t b = tc_console_getc();
        if (b != 0xA5u) {
            continue;
        }
        do {
            b = tc_console_getc();
        } while (b == 0xA5u);
        if (b != 0x5Au) {
            continue;
        }
        uint8_t head[4];
        for (int i = 0; i < 4; i++) {
            head[i] = tc_console_getc();
        }
        uint32_t len = rd_u16(head + 2);
        if (len > TC_PROTO_MAX_PAYLOAD) {
            reply_status(head[0], head[1], ST_BAD_LENGTH); /* and hunt for the next marker */
            continue;
        }
        for (uint32_t i = 0; i < len; i++) {
            g_rx[i] = tc_console_getc();
        }
        uint8_t tail[4];
        for (int i = 0; i < 4; i++) {
            tail[i] = tc_console_getc();
        }
        uint32_t crc = ~crc_update(crc_update(0xFFFFFFFFu, head, 4), g_rx, len);
        if (crc != rd_u32(tail)) {
            reply_status(head[0] & 0x7Fu, head[1], ST_BAD_CRC);
            continue;
        }
        handle(head[0], head[1], len, layer_ticks, layer_mark);
    }
}
