"""TP inference roofline, speed-up, sequence parallelism and training communication."""

import pytest

from gpucomm import GpucommError
from gpucomm.model.cost import collective_cost
from gpucomm.model.fabric import make_fabric
from gpucomm.model.tp import MODELS, head_params, layer_params, sp_layer_comm, tp_forward_comm, tp_speedup, tp_step
from gpucomm.model.training import model_params, step_comm


@pytest.mark.parametrize("key,billions", [("llama-3-8b", 8.0), ("llama-3-70b", 70.6), ("llama-3.1-405b", 405.9)])
def test_parameter_counts_match_the_model_names(key, billions):
    assert model_params(key) / 1e9 == pytest.approx(billions, rel=0.02)


def test_every_preset_cites_its_config():
    for m in MODELS.values():
        assert m.source.startswith("https://huggingface.co/") and m.source.endswith("config.json")


def test_decode_is_memory_bound_and_latency_shows_in_communication():
    s = tp_step("llama-3-70b", tp_size=8, fabric=make_fabric("nvlink4", gpu="h100_sxm5"), phase="decode", batch=1)
    assert s.memory_bound
    # 16 KiB messages: the all_reduce time is mostly latency and launch; the bytes run on one or two of NCCL's
    # channels at this size (topoGetAlgoInfo), so they are not negligible either
    assert s.all_reduce.latency_s + s.all_reduce.launch_s > 3 * s.all_reduce.transfer_s


def test_prefill_is_compute_bound():
    s = tp_step("llama-3-70b", tp_size=4, fabric=make_fabric("nvlink3", gpu="a100_sxm4_80gb"), phase="prefill", prompt_len=4096)
    assert not s.memory_bound
    assert 0 < s.comm_share < 0.5


def test_tp_on_pcie_without_p2p_does_not_pay_for_prefill_but_nvlink_does():
    prefill = dict(tp_size=4, phase="prefill", prompt_len=4096)
    nv = tp_speedup("llama-3-70b", fabric=make_fabric("nvlink3", gpu="a100_sxm4_80gb"), **prefill)
    pc = tp_speedup("llama-3-70b", fabric=make_fabric("pcie4", p2p=False, gpu="a100_sxm4_80gb"), **prefill)
    assert nv > 3 and pc < 1.1


def test_memory_fit():
    assert not tp_step("llama-3-70b", tp_size=4, fabric=make_fabric("pcie4", p2p=False, gpu="rtx_4090")).fits_memory
    assert tp_step("llama-3-70b", tp_size=4, fabric=make_fabric("nvlink4", gpu="h100_sxm5")).fits_memory


@pytest.mark.parametrize("kwargs,needle", [
    (dict(tp_size=3), "TP degree 3"), (dict(batch=0), "batch 0"), (dict(phase="train"), "phase"),
    (dict(gpu="a40"), "a40"), (dict(gpu="tpu"), "tpu"),
])
def test_tp_step_refuses_bad_input(kwargs, needle):
    args = dict(gpu="h100_sxm5", tp_size=4) | kwargs
    with pytest.raises(GpucommError, match=needle):
        tp_step("llama-3-70b", fabric=make_fabric("nvlink4", gpu=args.pop("gpu")), **args)


def test_sequence_parallel_moves_the_same_bytes_as_all_reduce():
    ag, rs = sp_layer_comm("llama-3-70b", tp_size=8, num_tokens=4096, fabric="nvlink3")
    ar = collective_cost("all_reduce", 4096 * 8192 * 2, num_ranks=8, fabric="nvlink3")
    assert ag.bus_bytes + rs.bus_bytes == pytest.approx(ar.bus_bytes)


def test_training_volumes_follow_zero_paper():
    dp = step_comm("llama-3-70b", "dp", num_gpus=8, fabric="nvlink4")
    fsdp = step_comm("llama-3-70b", "fsdp", num_gpus=8, fabric="nvlink4")
    assert dp.volume_bytes == pytest.approx(model_params("llama-3-70b") * 2 * 2 * 7 / 8)
    assert fsdp.volume_bytes == pytest.approx(1.5 * dp.volume_bytes)
    hidden = step_comm("llama-3-70b", "dp", num_gpus=8, fabric="nvlink4", compute_s=10.0, overlap=True)
    assert hidden.exposed_s == 0 and hidden.time_s == dp.time_s


def test_multi_node_dp_is_slower_than_single_node():
    one = step_comm("llama-3-8b", "dp", num_gpus=8, fabric="nvlink4")
    two = step_comm("llama-3-8b", "dp", num_gpus=16, fabric=make_fabric("nvlink4", num_nodes=2, network="ib_ndr"))
    assert two.time_s > one.time_s


@pytest.mark.parametrize("kwargs", [dict(strategy="zero9"), dict(num_gpus=1), dict(seq_len=0), dict(compute_s=-1.0)])
def test_training_refuses_bad_input(kwargs):
    args = dict(strategy="dp", num_gpus=8, fabric="nvlink4") | kwargs
    with pytest.raises(GpucommError):
        step_comm("llama-3-8b", args.pop("strategy"), **args)


def test_layer_params_70b():
    assert layer_params("llama-3-70b") == 8192 * (8192 + 2 * 1024) + 8192 * 8192 + 3 * 8192 * 28672


@pytest.mark.parametrize("gpu,link,needle", [("h100_sxm5", "nvlink3", "NVLink 4"), ("rtx_4090", "nvlink4", "no NVLink")])
def test_tp_step_refuses_a_link_the_gpu_does_not_have(gpu, link, needle):
    with pytest.raises(GpucommError, match=needle):
        tp_step("llama-3-8b", tp_size=2, fabric=make_fabric(link, gpu=gpu))


def test_a_network_for_one_node_is_refused():
    with pytest.raises(GpucommError, match="single node"):
        collective_cost("all_reduce", 2**20, num_ranks=8, fabric=make_fabric("nvlink4", network="ib_ndr"))


def test_training_tp_all_reduces_carry_one_micro_batch_each():
    from gpucomm.model.hardware.calibration import LL_BASE_LATENCY_S
    from gpucomm.model.tp import get_model, tp_all_reduce_bytes
    from gpucomm.model.training import step_comm

    layers, hidden = get_model("llama-3-8b").num_layers, get_model("llama-3-8b").hidden_size
    tp = step_comm("llama-3-8b", "tp", num_gpus=4, fabric="nvlink4", global_batch_tokens=64 * 8192, seq_len=8192)
    (coll, size, count), = tp.collectives
    assert (coll, size, count) == ("all_reduce", tp_all_reduce_bytes(8192, hidden, dtype="bf16"), 4 * layers * 64)
    # same bytes as one all_reduce per layer over all tokens, but 64x the calls: the latency term counts 64 times
    assert tp.volume_bytes == 4 * layers * tp_all_reduce_bytes(64 * 8192, hidden, dtype="bf16") * 2 * 3 / 4
    assert tp.time_s > 4 * layers * 64 * LL_BASE_LATENCY_S.value
    short = step_comm("llama-3-8b", "tp", num_gpus=4, fabric="nvlink4", global_batch_tokens=1024, seq_len=8192)
    assert short.collectives == (("all_reduce", tp_all_reduce_bytes(1024, hidden, dtype="bf16"), 4 * layers),)
    # 8191 tokens in 4096-token micro-batches: one full micro-batch and one of 4095 tokens, no token dropped
    odd = step_comm("llama-3-8b", "tp", num_gpus=4, fabric="nvlink4", global_batch_tokens=8191, seq_len=4096)
    assert [c[1:] for c in odd.collectives] == [(tp_all_reduce_bytes(4096, hidden, dtype="bf16"), 4 * layers),
                                                (tp_all_reduce_bytes(4095, hidden, dtype="bf16"), 4 * layers)]
    assert odd.volume_bytes == 4 * layers * tp_all_reduce_bytes(8191, hidden, dtype="bf16") * 2 * 3 / 4


def test_pipeline_across_nodes_pays_the_network_at_the_stage_boundary():
    inside = step_comm("llama-3-70b", "pp", num_gpus=8, fabric="nvlink4")
    across = step_comm("llama-3-70b", "pp", num_gpus=16, fabric=make_fabric("nvlink4", num_nodes=2, network="ib_ndr"))
    # one send to the next stage: inside the node it runs on a few of NCCL's channels (nccl_p2p), across nodes on
    # one NIC, still several times slower
    assert across.volume_bytes == inside.volume_bytes and across.time_s > 2 * inside.time_s
    fsdp = step_comm("llama-3-70b", "fsdp", num_gpus=16, fabric=make_fabric("nvlink4", num_nodes=2, network="ib_ndr"))
    assert fsdp.time_s > step_comm("llama-3-70b", "fsdp", num_gpus=8, fabric="nvlink4").time_s


def test_bridged_cards_use_their_bridge_not_the_sxm_link_of_the_same_generation():
    from gpucomm.model.hardware.gpus import bridge_link

    two = tp_step("llama-3-8b", tp_size=2, fabric=make_fabric("nvlink3", gpu="a40"), phase="prefill", prompt_len=2048)
    assert two.all_reduce.link == "a40_nvlink_bridge"
    direct = collective_cost("all_reduce", two.msg_bytes, num_ranks=2, fabric=bridge_link("a40"))
    assert two.all_reduce.time_s == pytest.approx(direct.time_s)
    with pytest.raises(GpucommError, match="joins GPUs two by two"):
        tp_step("llama-3-8b", tp_size=4, fabric=make_fabric("nvlink3", gpu="a40"))
    four = tp_step("llama-3-8b", tp_size=4, fabric=make_fabric("nvlink3", topology="pairs", gpu="a40"))
    assert four.all_reduce.busbw_bytes_per_s < direct.busbw_bytes_per_s  # the ring crosses PCIe between pairs
    with pytest.raises(GpucommError, match="no NVLink bridge"):
        bridge_link("h100_sxm5")


def test_decode_reads_the_output_head_once_per_pass():
    # Llama 3 8B's head is its own matrix ("tie_word_embeddings": false): vocab x hidden = 0.53 B weights next to the
    # 6.98 B of its 32 layers, 7 % of what a decode step reads
    assert head_params("llama-3-8b") == 128256 * 4096
    layers = 32 * layer_params("llama-3-8b")
    assert head_params("llama-3-8b") / (layers + head_params("llama-3-8b")) == pytest.approx(0.070, abs=0.001)
    h100 = tp_step("llama-3-8b", fabric=make_fabric("nvlink4", gpu="h100_sxm5"), tp_size=1, batch=1)
    rtx = tp_step("llama-3-8b", fabric=make_fabric("pcie4", gpu="rtx_4090"), tp_size=1, batch=1)
    # batch 1, FP16: memory-bound, so tokens/s = HBM bandwidth / bytes read (3.35 TB/s and 1.008 TB/s)
    assert h100.tokens_per_s_per_user == pytest.approx(221.2, abs=0.1)
    assert rtx.tokens_per_s_per_user == pytest.approx(66.6, abs=0.1)
    assert h100.head_s == pytest.approx(2 * head_params("llama-3-8b") / 3.35e12)
    # without the head the roofline said 238 and 72 tokens/s
    assert 1 / (h100.time_per_pass_s - h100.head_s) == pytest.approx(237.7, abs=0.1)
    assert 1 / (rtx.time_per_pass_s - rtx.head_s) == pytest.approx(71.5, abs=0.1)
    # the head is vocab-parallel: split over the TP group like the layers
    h8 = tp_step("llama-3-8b", fabric=make_fabric("nvlink4", gpu="h100_sxm5"), tp_size=8, batch=1)
    assert h8.head_s == pytest.approx(h100.head_s / 8)


def test_tp1_has_no_all_reduce_and_per_pass_is_layers_times_per_layer():
    one = tp_forward_comm("llama-3-8b", tp_size=1, num_tokens=128, fabric="nvlink4")
    assert (one.all_reduces_per_pass, one.per_all_reduce, one.comm_per_pass_s) == (0, None, 0.0)
    h100 = make_fabric("nvlink4", gpu="h100_sxm5")
    s1 = tp_step("llama-3-8b", fabric=h100, tp_size=1, phase="prefill", prompt_len=128)
    assert s1.all_reduce is None and s1.comm_per_layer_s == s1.comm_per_pass_s == s1.comm_share == 0.0
    assert s1.time_per_pass_s == pytest.approx(s1.compute_per_pass_s)
    s8 = tp_step("llama-3-8b", fabric=h100, tp_size=8, phase="prefill", prompt_len=128)
    assert s8.num_layers == 32
    assert s8.compute_per_pass_s == pytest.approx(32 * s8.compute_per_layer_s + s8.head_s)
    assert s8.comm_per_pass_s == pytest.approx(32 * s8.comm_per_layer_s)
    assert s8.time_per_pass_s == pytest.approx(s8.compute_per_pass_s + s8.comm_per_pass_s)
    comm = tp_forward_comm("llama-3-8b", tp_size=8, num_tokens=128, fabric=h100)
    assert s8.comm_per_pass_s == pytest.approx(comm.comm_per_pass_s)  # the same all_reduces, counted per pass
