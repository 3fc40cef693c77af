"""The size report's code breakdown (build/size.py ``code_by_origin``) on a map file written the
way GNU ld 2.40 writes one: input sections on one line or, with a long name, on two; fill;
archive members; linker stubs; symbol and assignment lines; other output sections ignored.
The real builds' breakdowns are checked in tests/test_emulator_models.py."""

from __future__ import annotations

from tinycompile.build.size import SizeReport, code_by_origin

MAP = """\
Memory Configuration

Name             Origin             Length             Attributes
FLASH            0x08000000         0x00100000         xr

Linker script and memory map

.isr_vector     0x08000000       0x40
 *(.isr_vector)
 .isr_vector    0x08000000       0x40 build/m7/obj/runtime/boards/common/tc_vectors.o

.text           0x08000040      0x400
 EXCLUDE_FILE(*tc_no_such_object.o) *(.text .text.*)
 .text.tc_invoke
                0x08000040       0x80 build/m7/obj/model/tc_model.o
                0x08000040                tc_invoke
 .text.tc_conv_s8
                0x080000c0      0x100 build/m7/obj/runtime/kernels/tc_conv2d.o
                0x080000c0                tc_conv_s8
 .text.tc_col16_gemm
                0x080001c0       0x60 build/m7/obj/runtime/kernels/tc_conv2d_dsp.o
 .text.tc_dw_s8
                0x08000220       0x40 build/m7/obj/runtime/kernels/tc_conv2d_dsp.o
 *fill*         0x08000260        0x2
 .text.tc_puts  0x08000262       0x36 build/m7/obj/runtime/boards/common/tc_console.o
                0x08000262                tc_puts
 .text          0x08000298       0xa4 /usr/lib/arm-none-eabi/lib/libc_nano.a(lib_a-memset.o)
                0x08000298                memset
 *(.glue_7)
 .glue_7        0x0800033c        0x0 linker stubs
                0x0800033c                        . = ALIGN (0x4)
 .text.tc_add_s8
                0x0800033c      0x104 build/m7/obj/runtime/kernels/tc_elementwise.o

.rodata         0x08000440       0x20
 .rodata.tc_tab
                0x08000440       0x20 build/m7/obj/runtime/kernels/tc_conv2d.o
"""


def test_code_by_origin_sums_each_input_section_of_text() -> None:
    parts = code_by_origin(MAP)
    assert parts == {
        "model": 0x80,
        "kernel:tc_conv2d": 0x100,  # its .rodata is not code
        "kernel:tc_conv2d_dsp": 0x60 + 0x40,
        "kernel:tc_elementwise": 0x104,
        "runtime": 0x36,  # the vectors are in .isr_vector, outside .text
        "libraries": 0xA4,
        "rest": 0x2,  # fill and (empty) linker stubs
    }
    assert sum(parts.values()) == 0x400  # the output section's size: nothing lost, nothing twice


def test_report_lists_kernels_largest_first() -> None:
    parts = {"kernel:tc_conv2d": 300, "kernel:tc_pool": 40, "kernel:tc_depthwise_dsp": 900}
    parts |= {"model": 60, "runtime": 500, "libraries": 100, "rest": 100}
    r = SizeReport("b", "board", 1 << 20, 4000, 1 << 16, 900, 0, 2000, 0, 0, 0, 0, 0, 0, 0)
    r = SizeReport(**{**r.as_dict(), "code_parts": parts})
    assert list(r.kernel_code) == ["tc_depthwise_dsp", "tc_conv2d", "tc_pool"]
    text = str(r)
    assert "    kernels         1240   depthwise_dsp 900, conv2d 300, pool 40" in text
    assert "    runtime          500" in text
    plain = SizeReport(**{**r.as_dict(), "code_parts": {}})
    assert "kernels" not in str(plain)  # no map file: no breakdown, nothing made up
