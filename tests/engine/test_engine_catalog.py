"""Catalogs: every id in the contract, derived counts against published totals, user additions."""
import pytest

from engine.catalog import load_catalog
from engine.errors import RidgeError
from engine.hfconfig import load_config, spec_from_config

MODEL_IDS = ["llama-2-7b", "llama-2-13b", "llama-3-8b", "llama-3-70b", "llama-3.1-8b", "llama-3.1-70b",
             "llama-3.1-405b", "mistral-7b", "mixtral-8x7b", "qwen2.5-7b", "qwen2.5-72b", "gemma-2-9b",
             "gemma-2-27b", "deepseek-v3", "gpt-oss-120b", "phi-3-mini"]
GPU_IDS = ["h100-sxm", "h100-pcie", "h200", "a100-40gb", "a100-80gb", "b200", "l4", "l40s", "mi300x",
           "tpu-v5e", "rtx-4090"]


def test_every_contract_id_is_in_the_catalogs(catalog):
    assert set(MODEL_IDS) <= set(catalog.models)
    assert set(GPU_IDS) <= set(catalog.gpus)
    kinds = {catalog.models[m].attention_kind for m in MODEL_IDS}
    assert kinds == {"mha", "gqa", "mla"}
    assert any(catalog.models[m].is_moe for m in MODEL_IDS)


@pytest.mark.parametrize("model_id", MODEL_IDS)
def test_derived_parameter_count_matches_the_published_total(catalog, model_id):
    m = catalog.models[model_id]
    assert m.source and m.published_params
    assert abs(m.params - m.published_params) / m.published_params < 0.01


def test_active_parameters_follow_the_stated_conventions(catalog):
    assert catalog.models["mixtral-8x7b"].active_params == 12_879_925_248  # '12.9B', embeddings counted
    gpt = catalog.models["gpt-oss-120b"]
    assert abs(gpt.active_params - gpt.vocab * gpt.hidden - 5.13e9) / 5.13e9 < 0.01  # card excludes the input embedding
    ds = catalog.models["deepseek-v3"]
    assert ds.params == 671_026_419_200
    assert abs(ds.active_params - ds.vocab * ds.hidden - 36.6e9) / 36.6e9 < 0.01


def test_traps_head_dim_and_mla(catalog):
    gemma = catalog.models["gemma-2-9b"]
    assert gemma.head_dim == 256 != gemma.hidden // gemma.heads
    assert catalog.models["deepseek-v3"].kv_values_per_token * 2 == 70_272  # 61 x (512 + 64) x 2 B


def test_hardware_uses_dense_peaks_and_gib(catalog):
    h100 = catalog.gpus["h100-sxm"]
    assert h100.peak_tflops["bf16"] == 989.5  # not the 1,979 sparse figure
    assert h100.memory_bytes == 80 * 2**30
    assert not catalog.gpus["a100-80gb"].native("fp8")
    assert catalog.gpus["l4"].peak_tflops["bf16"] == 121.0  # half the printed sparse 242


def test_user_catalog_adds_a_model_and_an_accelerator(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text('''
[models.tiny]
name = "Tiny"
layers = 2
hidden = 64
intermediate = 128
heads = 4
kv_heads = 2
head_dim = 16
vocab = 1000
context = 2048

[gpus.my-card]
name = "My card"
memory_gib = 12
bandwidth_tbps = 0.5
peak_tflops = { bf16 = 50.0 }
''')
    cat = load_catalog([path])
    assert cat.model("tiny").params > 0
    assert cat.gpu("my-card").memory_gib == 12
    assert "llama-3-70b" in cat.models


@pytest.mark.parametrize("body, fragment", [
    ("[models.x]\nname='x'\nlayers=1", "missing key"),
    ("[gpus.x]\nname='x'\nmemory_gib=-1\nbandwidth_tbps=1\npeak_tflops={bf16=1.0}", "memory_gib"),
    ("[gpus.x]\nname='x'\nmemory_gib=1\nbandwidth_tbps=1\npeak_tflops={bf16=1.0}\nwat=1", "unknown key 'wat'"),
    ("[oops]\n", "unknown section"),
    ("this is = = not toml", "not valid TOML"),
])
def test_bad_user_catalogs_name_the_problem(tmp_path, body, fragment):
    path = tmp_path / "bad.toml"
    path.write_text(body)
    with pytest.raises(RidgeError, match=fragment):
        load_catalog([path])


LLAMA_70B_CONFIG = {
    "model_type": "llama", "hidden_size": 8192, "intermediate_size": 28672, "num_attention_heads": 64,
    "num_hidden_layers": 80, "num_key_value_heads": 8, "vocab_size": 128256, "max_position_embeddings": 8192,
    "tie_word_embeddings": False,
}


def test_hf_configs_of_each_family_reproduce_the_catalog(catalog):
    assert spec_from_config(LLAMA_70B_CONFIG).params == catalog.models["llama-3-70b"].params
    qwen = {"model_type": "qwen2", "hidden_size": 3584, "intermediate_size": 18944, "num_attention_heads": 28,
            "num_hidden_layers": 28, "num_key_value_heads": 4, "vocab_size": 152064}
    assert spec_from_config(qwen).params == catalog.models["qwen2.5-7b"].params
    gemma = {"model_type": "gemma2", "hidden_size": 3584, "intermediate_size": 14336, "num_attention_heads": 16,
             "num_hidden_layers": 42, "num_key_value_heads": 8, "head_dim": 256, "vocab_size": 256000}
    assert spec_from_config(gemma).params == catalog.models["gemma-2-9b"].params
    mixtral = {"model_type": "mixtral", "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
               "num_hidden_layers": 32, "num_key_value_heads": 8, "vocab_size": 32000, "num_local_experts": 8,
               "num_experts_per_tok": 2}
    assert spec_from_config(mixtral).params == catalog.models["mixtral-8x7b"].params
    deepseek = {"model_type": "deepseek_v3", "hidden_size": 7168, "intermediate_size": 18432,
                "num_attention_heads": 128, "num_hidden_layers": 61, "num_key_value_heads": 128,
                "vocab_size": 129280, "n_routed_experts": 256, "num_experts_per_tok": 8, "n_shared_experts": 1,
                "moe_intermediate_size": 2048, "first_k_dense_replace": 3, "q_lora_rank": 1536,
                "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128}
    ds = spec_from_config(deepseek)
    assert ds.params == catalog.models["deepseek-v3"].params
    assert ds.kv_values_per_token == catalog.models["deepseek-v3"].kv_values_per_token


@pytest.mark.parametrize("config, fragment", [
    ({"hidden_size": 1}, "missing key 'model_type'"),
    ({"model_type": "mamba"}, "unsupported model_type 'mamba'"),
    ({"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4}, "missing key 'num_hidden_layers'"),
    ({**LLAMA_70B_CONFIG, "num_key_value_heads": "eight"}, "num_key_value_heads"),
])
def test_hf_config_errors_name_the_key(config, fragment):
    with pytest.raises(RidgeError, match=fragment):
        spec_from_config(config)


def test_config_file_that_is_not_json(tmp_path):
    path = tmp_path / "config.json"
    path.write_text("{not json")
    with pytest.raises(RidgeError, match="not valid JSON"):
        load_config(path)


def test_an_edited_builtin_catalog_is_checked_again_though_a_checked_copy_is_kept(tmp_path, monkeypatch):
    """A process that finds the built-in files unchanged builds the specs from the copy kept once
    they passed every check; an edit (here a broken one) is parsed and checked afresh."""
    import os
    import shutil

    from engine import catalog

    for name in catalog._BUILTIN_FILES:
        shutil.copy(os.path.join(catalog.DATA, name), tmp_path / name)
    monkeypatch.setattr(catalog, "DATA", str(tmp_path))
    monkeypatch.setattr(catalog, "_CACHE", str(tmp_path / ".parsed-cache.json"))
    monkeypatch.setattr(catalog, "_BUILTIN", None)
    first = catalog.builtin_catalog()
    assert (tmp_path / ".parsed-cache.json").exists()
    monkeypatch.setattr(catalog, "_BUILTIN", None)
    again = catalog.builtin_catalog()
    assert again.models == first.models and again.gpus == first.gpus and again.corrections == first.corrections
    models = tmp_path / "models.toml"
    models.write_text(models.read_text(encoding="utf-8").replace("layers = 32", "layers = -32", 1), encoding="utf-8")
    monkeypatch.setattr(catalog, "_BUILTIN", None)
    with pytest.raises(RidgeError, match="layers"):
        catalog.builtin_catalog()
    monkeypatch.setattr(catalog, "_BUILTIN", None)
    with pytest.raises(RidgeError, match="layers"):   # and again: only checked tables are kept
        catalog.builtin_catalog()
