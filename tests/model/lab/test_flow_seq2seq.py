"""The information-flow graph of Pre-LN encoder–decoders (this project's translation model, a tiny mBART):
the decoder's graph with cross-attention edges into the source and the encoder's graph below them, equal
to a reference computed here straight from the definitions with full tensors (explicit per-head
contribution vectors α_htj f_h(x_j) of every layer, [query, key, head, d_model]); Post-LN translation models
(Marian, BART, our Post-LN variant) keep their one line."""

from __future__ import annotations

import pytest
import torch

from model.lab.flow import EPSILON, FlowNotApplicable, build_seq2seq_flow, flow_graph, flow_problem
from model.store.registry import load_model


def _decomposed(model, cache, path: str, n_keys: int):
    """[key, head, query, d_model]: α_hqk f_h(x_k) of one attention module, from its hooks."""
    attn = model.get_submodule(path)
    H, dh = attn.n_heads, attn.d_head
    v = cache[f"{path}.hook_v"][0].repeat_interleave(H // attn.n_kv_heads, dim=1)  # [key, head, d_head]
    pattern = cache[f"{path}.hook_pattern"][0]  # [head, query, key]
    w_o = attn.W_o.weight.detach().view(-1, H, dh)
    return torch.einsum("hqk,khe,dhe->khqd", pattern, v[:n_keys], w_o)


def _reference(model, src: list[int], ids: list[int], position: int, threshold: float) -> dict:
    """{(node, node): weight} of every edge above the threshold reached from the decoder's last state at
    ``position``. Nodes: ("I", l, p) the decoder state after layer l (-1: embeddings), ("A", l, p) after
    its self-attention, ("C", l, p) after its cross-attention, ("M", l, p) its MLP; ("EI", "EA", "EM")
    the same in the encoder, whose last state ("EI", n_enc - 1, j) cross-attention reads."""
    x, s = torch.tensor([ids[: position + 1]]), torch.tensor([src])
    with torch.no_grad():
        _, cache = model.run_with_cache(s, x)
    n_dec, n_enc = model.cfg.n_dec_layers, model.cfg.n_enc_layers

    def contributions(parts, whole):  # parts [n, ..., d], whole [..., d] -> [n, ...], summing to 1
        d = (whole.abs().sum(-1) - (whole - parts).abs().sum(-1)).clamp_min(EPSILON)
        return d / d.sum(0, keepdim=True)

    def cut(c_parts, c_res):
        c_parts, c_res = c_parts * (c_parts > threshold), c_res * (c_res > threshold)
        total = c_res + c_parts.reshape(-1, c_parts.shape[-1]).sum(0)
        return c_parts / total, c_res / total

    full: dict = {}

    def add(u, w, weight):
        full[(u, w)] = full.get((u, w), 0.0) + float(weight)

    def attention(parts, resid_in, whole, into, node_in, node_out, own):
        """parts [key, head, q, d]; own: the residual and the query's own key meet at one node."""
        K, H, Q = parts.shape[:3]
        c = contributions(torch.cat([parts.reshape(K * H, Q, -1), resid_in[None]]), whole)
        c_attn, c_res = cut(c[:-1].view(K, H, Q), c[-1])
        for q in range(Q):
            for k in range(K):
                add(node_in(k), (into, q), c_attn[k, :, q].sum())
            add(node_in(q) if own else node_out(q), (into, q), c_res[q])

    def mlp(mid, post, name_mid, name_m, name_out):
        c = contributions(torch.stack([post - mid, mid]), post)
        c_mlp, c_res = cut(c[:1], c[1])
        for q in range(post.shape[0]):
            add(name_mid(q), name_m(q), c_mlp[0, q])
            add(name_m(q), name_out(q), c_mlp[0, q])
            add(name_mid(q), name_out(q), c_res[q])

    L, S = x.shape[1], s.shape[1]
    for layer in range(n_dec):
        b = f"decoder.blocks.{layer}"
        pre, mid, mid2 = (cache[f"{b}.hook_resid_{w}"][0] for w in ("pre", "mid", "mid2"))
        post = cache[f"{b}.hook_resid_post"][0]
        attention(_decomposed(model, cache, f"{b}.self_attn", L), pre, mid, ("A", layer),
                  lambda k, layer=layer: ("I", layer - 1, k), None, own=True)
        attention(_decomposed(model, cache, f"{b}.cross_attn", S), mid, mid2, ("C", layer),
                  lambda k: ("EI", n_enc - 1, k), lambda q, layer=layer: ("A", layer, q), own=False)
        mlp(mid2, post, lambda q, layer=layer: ("C", layer, q), lambda q, layer=layer: ("M", layer, q),
            lambda q, layer=layer: ("I", layer, q))
    for layer in range(n_enc):
        b = f"encoder.blocks.{layer}"
        pre, mid, post = (cache[f"{b}.hook_resid_{w}"][0] for w in ("pre", "mid", "post"))
        attention(_decomposed(model, cache, f"{b}.attn", S), pre, mid, ("EA", layer),
                  lambda k, layer=layer: ("EI", layer - 1, k), None, own=True)
        mlp(mid, post, lambda q, layer=layer: ("EA", layer, q), lambda q, layer=layer: ("EM", layer, q),
            lambda q, layer=layer: ("EI", layer, q))
    # nodes are (name, layer, pos) tuples; the attention targets were (("A", layer), q): flatten them
    flat = {}
    for (u, w), weight in full.items():
        u = (u[0][0], u[0][1], u[1]) if isinstance(u[0], tuple) else u
        w = (w[0][0], w[0][1], w[1]) if isinstance(w[0], tuple) else w
        flat[(u, w)] = flat.get((u, w), 0.0) + weight
    into: dict = {}
    for (u, w), weight in flat.items():
        if weight > threshold:
            into.setdefault(w, []).append((u, weight))
    seen, todo, kept = set(), [("I", n_dec - 1, position)], {}
    while todo:
        node = todo.pop()
        if node in seen:
            continue
        seen.add(node)
        for u, weight in into.get(node, []):
            kept[(u, node)] = weight
            todo.append(u)
    return kept


def _ours(graph) -> dict:
    out: dict = {}

    def add(key, w):
        out[key] = out.get(key, 0.0) + w

    for i in range(len(graph.layer)):
        layer, kind, s, t = (int(a[i]) for a in (graph.layer, graph.kind, graph.source, graph.target))
        w, enc = float(graph.importance[i]), int(graph.stack[i]) == 1
        state, attn, m = ("EI", "EA", "EM") if enc else ("I", "A", "M")
        mid = "EA" if enc else "C"  # the state the MLP reads
        if kind in (0, 1):
            add(((state, layer - 1, s), (attn, layer, t)), w)
        elif kind == 2:
            add(((mid, layer, t), (m, layer, t)), w)
            add(((m, layer, t), (state, layer, t)), w)
        elif kind == 3:
            add(((mid, layer, t), (state, layer, t)), w)
        elif kind == 4:
            add((("EI", graph.n_enc_layers - 1, s), ("C", layer, t)), w)
        else:
            add((("A", layer, t), ("C", layer, t)), w)
    return out


def _compare(model, src, ids, position, threshold=0.04) -> tuple[float, int]:
    graph = build_seq2seq_flow(model, src, ids, [f"t{i}" for i in ids], [f"s{i}" for i in src], position,
                               threshold)
    want, got = _reference(model, src, ids, position, threshold), _ours(graph)
    assert set(got) == set(want), (sorted(set(got) - set(want))[:4], sorted(set(want) - set(got))[:4])
    worst = max(abs(got[k] - want[k]) for k in want)
    assert worst < 1e-4
    kinds = {int(k) for k in graph.kind}
    assert {4, 5} <= kinds and 1 in set(graph.stack.tolist())  # cross edges, and the encoder's graph
    return worst, len(want)


def test_the_graph_of_our_translation_model_equals_the_full_tensor_reference():
    bundle = load_model("default")
    model = bundle.model.eval()
    prepared = bundle.task.prepare("the cat sat on the mat", model.cfg.max_len, "en->zh")
    more = torch.randint(10, 200, (7,), generator=torch.Generator().manual_seed(1))
    ids = list(prepared.prefix) + more.tolist()
    for position, threshold in ((len(ids) - 1, 0.04), (4, 0.02)):
        worst, edges = _compare(model, prepared.source_ids, ids, position, threshold)
        print(f"default, position {position}: {edges} edges, worst {worst:.1e}")


def test_the_graph_of_a_tiny_pre_ln_mbart_equals_the_full_tensor_reference(tmp_path):
    pytest.importorskip("transformers")
    from model.store.user_folders import load_user_model
    from tests.model.store.seq2seq_folders import bart_folder

    folder, _, _ = bart_folder(tmp_path, "mbart")
    bundle = load_user_model(folder)
    assert flow_problem(bundle.cfg) is None and bundle.cfg.norm_first
    # A random tiny model's residual stream dwarfs what its sublayers add: larger output projections (and
    # values) so that every kind of edge passes the threshold
    with torch.no_grad():
        for name, p in bundle.model.named_parameters():
            if name.endswith(("W_o.weight", "W_out.weight")):
                p.mul_(30)
            elif name.endswith("W_v.weight"):
                p.mul_(10)
    prepared = bundle.task.prepare("the cat sat on the mat", bundle.cfg.max_len, None)
    ids = list(prepared.prefix) + [5, 9, 12, 7, 30]
    for position in (len(ids) - 1, 3):
        worst, edges = _compare(bundle.model.eval(), prepared.source_ids, ids, position, 0.04)
        print(f"mbart, position {position}: {edges} edges, worst {worst:.1e}")


def test_the_translation_page_entry_reads_the_greedy_translation_and_predicts_its_last_token():
    bundle = load_model("default")
    graph = flow_graph(bundle, "the cat sat on the mat", None, 0.04, "en->zh")
    assert graph.source_tokens and graph.n_enc_layers == bundle.cfg.n_enc_layers
    analysis_like = flow_graph(bundle, "the cat sat on the mat", 0, 0.04, "en->zh")
    assert analysis_like.position == 0 and len(analysis_like.tokens) == 1
    rows = graph.rows()
    assert {r["stack"] for r in rows} == {"decoder", "encoder"}
    cross = [r for r in rows if r["kind"] == "cross_attention"]
    assert cross and all(r["source_token"] == graph.source_tokens[r["source"]] for r in cross)


@pytest.mark.parametrize("name", ["variant-post-ln"])
def test_post_ln_translation_models_keep_their_one_line(name):
    bundle = load_model(name)
    assert flow_problem(bundle.cfg) == "post_ln"
    with pytest.raises(FlowNotApplicable):
        flow_graph(bundle, "the cat", None, 0.04)
