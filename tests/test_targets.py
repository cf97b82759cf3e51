"""The target records (`zant.targets`): every fact about a core in one place, the rest derived
from it (Zig flags, boards, limits, pass parameters)."""

from __future__ import annotations

import pytest

from zant import targets
from zant.backend import boards, build, limits
from zant.backend import targets as backend_targets
from zant.backend.firmware import GUARD_TARGETS
from zant.backend.timing import CORES
from zant.pipelines import target_parameters


def test_every_mcu_record_is_complete_and_its_board_has_its_core():
    for name, record in targets.RECORDS.items():
        assert record.name == name
        if not record.is_mcu:
            continue
        assert CORES[record.timing].name == name
        board = boards.BOARDS[record.default_board]
        assert board.target == name
        assert record.address_bits == 32 and limits.address_bits(name) == 32
        assert record.arch and record.cpu
        assert (record.fpu is None) == (record.float_registers == 0)
        assert not record.mve or record.dsp, "Helium comes with the DSP extension"


@pytest.mark.parametrize(
    "name, target, mcpu",
    [
        ("cortex-m0plus", "thumb-freestanding-eabi", "cortex_m0plus"),
        ("cortex-m3", "thumb-freestanding-eabi", "cortex_m3"),
        ("cortex-m4", "thumb-freestanding-eabihf", "cortex_m4+vfp4d16sp+dsp"),
        ("cortex-m7", "thumb-freestanding-eabihf", "cortex_m7+fp_armv8d16+dsp"),
        ("cortex-m33", "thumb-freestanding-eabihf", "cortex_m33+fp_armv8d16sp+dsp"),
        ("cortex-m55", "thumb-freestanding-eabihf", "cortex_m55+mve_fp+fp_armv8d16+dsp"),
        ("riscv32", "riscv32-freestanding-none", "generic_rv32+f+m+c"),
    ],
)
def test_zig_flags_name_every_optional_extension_of_the_record(name, target, mcpu):
    """The flags are the record's facts spelled for Zig: the FPU (and a hard-float ABI with it),
    Helium, the DSP extension (`+dsp` is redundant in Zig's Cortex-M4/M7/M55 models, which have
    it, and needed in its Cortex-M33 one; either way the CPU's feature set is the same as before
    it was derived) and the rest of the ISA."""
    assert targets.RECORDS[name].zig_flags == ("-target", target, "-mcpu", mcpu)


def test_derived_tables_read_the_records():
    assert build.TARGETS is backend_targets.TARGETS
    assert backend_targets.TARGETS == {n: r.zig_flags for n, r in targets.RECORDS.items()}
    assert targets.RECORDS["host"].zig_flags == ()
    assert boards.DEFAULT_BOARDS == {n: r.default_board for n, r in targets.RECORDS.items() if r.is_mcu}
    assert set(GUARD_TARGETS) == {"cortex-m3", "cortex-m4", "cortex-m7", "cortex-m33", "cortex-m55"}
    for name, record in targets.RECORDS.items():
        if record.is_mcu:
            p = target_parameters(name)
            assert p == record.parameters()
            assert (p.dsp, p.mve, p.float_registers, p.conv_channel_block, p.vector_lanes) == (
                record.dsp, record.mve, record.float_registers, record.conv_channel_block, 0
            )
            assert p.conv_word_taps == (record.dsp and not record.mve)
            assert boards.BOARDS[record.default_board].fpu == (record.float_registers > 0)


def test_the_host_needs_a_cpu_for_its_parameters():
    with pytest.raises(ValueError, match="CPU"):
        targets.RECORDS["host"].parameters()
    assert targets.RECORDS["host"].parameters(targets.CPUS["x86-64-sse"]).vector_lanes == 8
