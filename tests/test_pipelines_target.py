"""The host's vector width and register tiles, chosen from a description of its CPU
(`zant.backend.cpus`, `zant.targets.host_parameters`): each named description's parameters and
pipeline, the detection from Zig's or Linux's view of the CPU, the conservative fallback when
detection fails, and compiles with the parameters of CPUs other than this machine's."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import onnx
import pytest
from e2e import check_model
from onnx import TensorProto, helper, numpy_helper

from zant.backend.cpus import CpuDetectionWarning, detect_cpu, fallback_cpu, host_cpu, parse_builtin, parse_cpuinfo
from zant.dialects.zant import TargetAttr
from zant.pipelines import (
    CHECK_STAGES, EXPAND_STAGES, GRAPH_STAGES, LOOP_STAGES, PLAN_STAGES, PRINT_STAGES, REACH_STAGE, VECTOR_STAGES, pipeline_for,
    target_parameters,
)
from zant.targets import CPUS, RECORDS, host_parameters, vector_tile


@pytest.mark.parametrize(
    "name, lanes, tile, fma",
    [
        ("x86-64-avx2", 16, 6, True),  # 16 lanes = 2 ymm: 6 outputs are 12 of the 16 ymm
        ("x86-64-avx", 16, 6, False),
        ("x86-64-avx512", 16, 14, True),  # 1 zmm; 8 lanes by 28 pixels bound it to 14
        ("aarch64-neon", 16, 6, True),  # 4 q registers per vector: 24 of 32
        ("x86-64-sse", 8, 6, False),  # 16 lanes = 4 xmm would leave tiles of 2
        ("generic", 8, 6, False),
    ],
)
def test_each_cpu_gives_its_parameters_and_pipeline(name, lanes, tile, fma):
    cpu = CPUS[name]
    p = host_parameters(cpu)
    assert (p.vector_lanes, p.conv_tile, p.conv_channel_block, p.fma) == (lanes, tile, 8, fma)
    assert target_parameters("host", cpu) == p
    stages = pipeline_for("host", cpu=cpu).split(",")
    # The pipeline names the CPU; the passes read its parameters from the module's #zant.target.
    assert stages[0] == f"set-target{{target=host cpu={name}}}"
    assert {"onnx-to-uop", "split-index-sets", "vectorize", "expand-transcendentals"} <= set(stages)
    assert TargetAttr("host", name).parameters == p


PARAMETER_OPTIONS = re.compile(
    r"conv-lanes|conv-tile|conv-channel-block|conv-float-registers|conv-word-taps|width=|fma=|scalar="
)


@pytest.mark.parametrize("target", sorted(RECORDS))
def test_no_pipeline_spells_a_parameter_of_its_target(target):
    """The lane width (and every other parameter a target decides) appears in no pipeline of
    `zant.pipelines`, for any target or host CPU: each begins with `set-target` and the passes
    read the rest from the module; only `plan-arenas`' options are spelled."""
    cpus = CPUS.values() if target == "host" else [None]
    for cpu in cpus:
        pipeline = pipeline_for(target, cpu=cpu, strategy="greedy", memories=("sram:1024",))
        assert not PARAMETER_OPTIONS.search(pipeline), pipeline
        stages = pipeline.split(",")
        assert stages[0] == f"set-target{{target={target}" + (f" cpu={cpu.name}}}" if cpu else "}")
        options = [s for s in stages[1:] if "{" in s and s != REACH_STAGE]  # (its option is the check's, not the target's)
        assert options == ['plan-arenas{strategy=greedy}', 'place-memories{memories="sram:1024"}']
    assert not PARAMETER_OPTIONS.search(",".join((*GRAPH_STAGES, *CHECK_STAGES, *LOOP_STAGES, *PLAN_STAGES,
                                                  *PRINT_STAGES, *EXPAND_STAGES, *VECTOR_STAGES)))


@pytest.mark.parametrize("name", sorted(CPUS))
def test_tiles_are_the_most_that_fit_the_registers(name):
    """P accumulators of r registers, the loaded vector, a broadcast and a spare fit; P + 1 do
    not (for 16 lanes, in the 8-lane form of 2P pixels either)."""
    cpu = CPUS[name]
    p = host_parameters(cpu)

    def needed(lanes: int, outputs: int) -> int:
        r = cpu.registers_per_vector(lanes)
        return outputs * r + r + 2

    forms = [(p.vector_lanes, 1)] + ([(8, 2)] if p.vector_lanes == 16 else [])
    assert all(needed(lanes, p.conv_tile * k) <= cpu.vector_registers for lanes, k in forms)
    assert any(needed(lanes, (p.conv_tile + 1) * k) > cpu.vector_registers for lanes, k in forms)
    assert vector_tile(cpu, p.vector_lanes) == p.conv_tile


def test_microcontrollers_do_not_depend_on_the_host_cpu():
    for cpu in CPUS.values():
        assert pipeline_for("cortex-m4", cpu=cpu) == pipeline_for("cortex-m4")
        assert target_parameters("riscv32", cpu).vector_lanes == 0


def builtin(arch: str, model: str, features: list[str]) -> str:
    """The `cpu` part of `zig build-obj --show-builtin`'s output."""
    listed = "\n".join(f"        .{f}," for f in features)
    return (
        "pub const cpu: std.Target.Cpu = .{\n"
        f"    .arch = .{arch},\n"
        f"    .model = &std.Target.{arch}.cpu.{model},\n"
        f"    .features = std.Target.{arch}.featureSet(&.{{\n{listed}\n    }}),\n}};\n"
    )


@pytest.mark.parametrize(
    "arch, model, features, name",
    [
        ("x86_64", "znver3", ['@"64bit"', "avx", "avx2", "fma", "sse4_2"], "x86-64-avx2"),
        ("x86_64", "x86_64_v4", ['@"64bit"', "avx", "avx2", "avx512f", "fma"], "x86-64-avx512"),
        ("x86_64", "sandybridge", ["avx", "sse4_2"], "x86-64-avx"),
        ("x86_64", "x86_64", ["sse", "sse2"], "x86-64-sse"),
        ("aarch64", "generic", ["fp_armv8", "neon"], "aarch64-neon"),
        ("x86", "pentium4", ["sse", "sse2"], "x86-sse"),  # 32-bit: 8 registers
        ("riscv64", "generic_rv64", ["m", "a", "f", "d"], "generic"),
    ],
)
def test_zig_builtin_names_the_cpu(arch, model, features, name):
    cpu = parse_builtin(builtin(arch, model, features))
    assert (cpu.name, cpu.arch, cpu.source) == (name, arch, f"zig: {model}")


def test_cpuinfo_names_the_cpu():
    x86 = "processor\t: 0\nmodel name\t: AMD EPYC\nflags\t\t: fpu sse sse2 avx fma avx2 bmi2\n"
    assert parse_cpuinfo(x86, "x86_64").name == "x86-64-avx2"
    assert parse_cpuinfo(x86.replace("bmi2", "avx512f avx512bw"), "AMD64").name == "x86-64-avx512"
    arm = "processor\t: 0\nFeatures\t: fp asimd evtstrm aes crc32\nCPU implementer\t: 0x41\n"
    assert parse_cpuinfo(arm, "aarch64").name == "aarch64-neon"
    with pytest.raises(ValueError):
        parse_cpuinfo("processor\t: 0\n", "x86_64")


def failing_zig():
    raise FileNotFoundError(2, "No such file or directory", "zig")


def test_detection_without_zig_reads_cpuinfo(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text("flags\t\t: sse sse2 avx avx2 fma\n")
    cpu = detect_cpu(zig=failing_zig, cpuinfo=info, machine="x86_64")
    assert cpu.name == "x86-64-avx2" and cpu.source == "/proc/cpuinfo"


@pytest.mark.parametrize("machine, name", [("x86_64", "x86-64-sse"), ("arm64", "aarch64-neon"), ("s390x", "generic")])
def test_failed_detection_falls_back_and_warns(tmp_path, machine, name):
    def garbled():
        return parse_builtin("not a builtin")

    for zig in (failing_zig, garbled):
        with pytest.warns(CpuDetectionWarning, match="could not detect the host CPU"):
            cpu = detect_cpu(zig=zig, cpuinfo=tmp_path / "missing", machine=machine)
        assert cpu.name == name and cpu.source.startswith("fallback: Zig: ")
        assert "missing" in cpu.source
    assert pipeline_for("host", cpu=cpu)  # a fallback still gives a pipeline
    assert (fallback_cpu(machine, "why").name, fallback_cpu(machine, "why").source) == (name, "fallback: why")


def test_this_machine_is_described_by_zig():
    """Zant's Zig answers here, and the host's default pipeline is the one of its description."""
    cpu = host_cpu()
    assert cpu.source.startswith("zig: ") and cpu.name in CPUS
    assert pipeline_for("host") == pipeline_for("host", cpu=cpu)


def test_importing_the_driver_does_not_ask_for_the_cpu():
    """Only a host pipeline needs the CPU: a compile for a microcontroller never starts Zig for it."""
    code = (
        "import zant.driver, zant.tools.cli\n"
        "from zant.backend.cpus import host_cpu\n"
        "from zant.pipelines import MCU_PIPELINE\n"
        "assert host_cpu.cache_info().currsize == 0\n"
        "from zant.driver import DEFAULT_PIPELINE\n"
        "assert host_cpu.cache_info().currsize == 1 and 'vectorize' in DEFAULT_PIPELINE\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def conv_model() -> onnx.ModelProto:
    """Convs in every vector form: pixel lanes (rows of 20), channel lanes (strided; 24
    channels: 8-lane blocks), depthwise rows, and a MatMul of constant B (the column-lane form)."""
    rng = np.random.default_rng(7)

    def const(name, shape):
        return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)

    nodes = [
        helper.make_node("Conv", ["x", "w0", "b0"], ["y0"], pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["x", "w1"], ["y1"], strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["x", "w2"], ["y2"], group=8, pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["x", "w3"], ["y3"], strides=[2, 2]),
        helper.make_node("Flatten", ["y3"], ["f"]),
        helper.make_node("MatMul", ["f", "m"], ["y4"]),
    ]
    inits = [const("w0", (40, 8, 3, 3)), const("b0", (40,)), const("w1", (24, 8, 3, 3)), const("w2", (8, 1, 3, 3)),
             const("w3", (16, 8, 1, 1)), const("m", (16 * 4 * 10, 48))]
    graph = helper.make_graph(
        nodes, "convs", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 7, 20])],
        [helper.make_tensor_value_info(y, TensorProto.FLOAT, None) for y in ("y0", "y1", "y2", "y4")], inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    return onnx.shape_inference.infer_shapes(model, strict_mode=True)


@pytest.mark.parametrize("name", ["x86-64-sse", "x86-64-avx512"])
def test_other_cpus_pipelines_compute_the_same(name):
    """The code for another CPU's parameters builds and runs correctly here (only its speed is
    that CPU's): 8 lanes (SSE, and the fallback of a failed x86-64 detection) and tiles of 14
    (AVX-512)."""
    check_model(conv_model(), rtol=1e-4, atol=1e-4, pipeline=pipeline_for("host", cpu=CPUS[name]))


def test_zant_compile_target_host_builds(tmp_path):
    """`zant compile --target host` builds with this machine's parameters, detected without a
    warning (a failed detection would say so on stderr: `CpuDetectionWarning`)."""
    onnx.save(conv_model(), tmp_path / "m.onnx")
    done = subprocess.run(
        [sys.executable, "-m", "zant.tools.cli", "compile", str(tmp_path / "m.onnx"),
         "-o", str(tmp_path / "out"), "--target", "host"],
        capture_output=True, text=True,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "libmodel.so").exists() and "CpuDetectionWarning" not in done.stderr
