"""The target records (`zant.backend.targets`): every fact about a core in one place, the rest
derived from it."""

from __future__ import annotations

from zant.backend import boards, build, limits, targets
from zant.backend.firmware import GUARD_TARGETS
from zant.backend.timing import CORES
from zant.pipelines import target_parameters


def test_every_mcu_record_is_complete_and_its_board_has_its_core():
    for name, record in targets.RECORDS.items():
        assert record.name == name
        if not record.is_mcu:
            continue
        assert record.timing is CORES[name]
        board = boards.BOARDS[record.default_board]
        assert board.target == name
        assert record.address_bits == 32 and limits.address_bits(name) == 32


def test_derived_tables_read_the_records():
    assert build.TARGETS is targets.TARGETS
    assert targets.TARGETS == {n: r.zig_flags for n, r in targets.RECORDS.items()}
    assert boards.DEFAULT_BOARDS == {n: r.default_board for n, r in targets.RECORDS.items() if r.is_mcu}
    assert set(GUARD_TARGETS) == {"cortex-m3", "cortex-m4", "cortex-m7"}
    for name, record in targets.RECORDS.items():
        if record.is_mcu:
            p = target_parameters(name)
            assert (p.dsp, p.mve, p.float_registers, p.conv_channel_block) == (
                record.dsp, record.mve, record.float_registers, record.conv_channel_block
            )
            assert boards.BOARDS[record.default_board].fpu == (record.float_registers > 0)
