"""The encoder-decoder Transformer of "Attention Is All You Need", with hook points everywhere."""

from __future__ import annotations

import math

import torch
from torch import nn

from . import progress
from .config import ModelConfig
from .dropout import Dropout
from .hooks import HookedModule, HookPoint
from .kinds import layer_counts
from .layers import DecoderBlock, EncoderBlock, make_norm
from .positional import LearnedPositions, SinusoidalPositions
from .trace import record, record_sizes


class Embedder(nn.Module):
    """Token embedding * sqrt(d_model) + positional encoding, for one side (encoder or decoder)."""

    def __init__(self, cfg: ModelConfig, tokens: nn.Embedding, pos_len: str):
        super().__init__()
        self.tokens = [tokens]  # a list so the shared table is registered once, on the model
        own = math.sqrt(cfg.d_model) if cfg.embed_scale is None else cfg.embed_scale  # Gemma: its dtype's
        self.scale = own if cfg.scale_embeddings else 1.0
        self.positions: nn.Module | None = None
        if cfg.pos_encoding == "sinusoidal":
            self.positions = SinusoidalPositions(cfg.max_len, cfg.d_model, cfg.sinusoid_layout)
        elif cfg.pos_encoding == "learned":
            self.positions = LearnedPositions(cfg.max_len, cfg.d_model)
        # BERT-style options (cfg.token_types, cfg.embed_norm); None in this project's own models.
        self.token_types: nn.Embedding | None = None
        if cfg.token_types:
            self.token_types = nn.Embedding(cfg.token_types, cfg.d_model)
            self.hook_type_embed = HookPoint()  # [d_model], type 0's vector, added at every position
        self.norm: nn.Module | None = make_norm(cfg) if cfg.embed_norm else None
        self.dropout = Dropout(cfg.dropout)
        self.hook_embed = HookPoint()  # [batch, pos, d_model], token embeddings (scaled if cfg says so)
        if self.positions is not None:
            self.hook_pos_embed = HookPoint()  # [pos, d_model], the positional encoding added
        self.hook_resid_in = HookPoint()  # [batch, pos, d_model], what the first block receives
        self.pos, self.path = pos_len, ""
        # Set only by model/run/interventions.py: the positional encoding is zero (its hook still runs).
        self.zero_positions = False

    def forward(self, ids: torch.Tensor, offset: int = 0) -> torch.Tensor:
        """offset: position of ids[:, 0] (non-zero when decoding continues from a cache)."""
        p, L = self.path, self.pos
        ID, X, PE = ("B", L), ("B", L, "d_model"), (L, "d_model")  # symbolic shapes for the trace
        looked_up = self.tokens[0](ids)  # [batch, pos, d_model]
        # A table kept in half precision (e5's 250k rows: 192 MB instead of 384) computes in float32.
        looked_up = looked_up if looked_up.dtype == torch.float32 else looked_up.float()
        if self.scale != 1.0:
            x = self.hook_embed(looked_up * self.scale)  # [batch, pos, d_model]
            record(p, "embedding lookup * sqrt(d_model)", ids, x, ID, X, self.hook_embed)
        else:
            x = self.hook_embed(looked_up)  # [batch, pos, d_model]
            record(p, "embedding lookup (not scaled)", ids, x, ID, X, self.hook_embed)
        if self.positions is not None:
            pe = self.positions(offset + ids.shape[1])[offset:]  # [pos, d_model]
            if self.zero_positions:
                pe = torch.zeros_like(pe)  # [pos, d_model]
            pe = self.hook_pos_embed(pe)
            step = "set to 0 (edit)" if self.zero_positions else "rows 0..L-1"
            record(p, f"positional encoding {step}", ids, pe, ID, PE, self.hook_pos_embed)
        if self.token_types is None and self.norm is None:  # this project's own models
            if self.positions is None:
                return self.hook_resid_in(self.dropout(x))
            out = self.hook_resid_in(self.dropout(x + pe))  # [batch, pos, d_model], broadcast over batch
            step = "+ positional encoding (broadcast over batch)"
            record(p, step, [x, pe], out, [X, PE], X, self.hook_resid_in)
            return out
        # BERT-style: token + position + token type, then a norm, each step traced on its own.
        if self.positions is not None:
            summed = x + pe  # [batch, pos, d_model], broadcast over the batch
            record(p, "+ positional encoding (broadcast over batch)", [x, pe], summed, [X, PE], X)
            x = summed
        if self.token_types is not None:
            # One sentence per input: every position is segment 0.
            tt = self.hook_type_embed(self.token_types.weight[0])  # [d_model]
            record(p, "token-type embedding of segment 0", ids, tt, ID, ("d_model",), self.hook_type_embed)
            summed = x + tt  # [batch, pos, d_model], broadcast over batch and positions
            record(p, "+ token-type embedding (broadcast)", [x, tt], summed, [X, ("d_model",)], X)
            x = summed
        if self.norm is not None:
            normed = self.norm(x)  # [batch, pos, d_model]
            record(p, "embedding norm", x, normed, X, X)
            x = normed
        out = self.hook_resid_in(self.dropout(x))  # [batch, pos, d_model]
        record(p, "dropout (identity in eval) -> first block", x, out, X, X, self.hook_resid_in)
        return out


class Unembed(nn.Linear):
    """The output projection d_model -> vocab (no bias), with Gemma's final_logit_softcapping when
    ``softcap`` > 0: logits = tanh(logits / c) * c, so every reader of model.unembed (decoding, the
    lens, ablation) gets the model's own logits. ``bias``: one number added to each logit (Marian's and
    BART's final_logits_bias), also seen by every reader; ``scale``: the hidden state times it first (T5
    with a tied embedding: d_model^-0.5)."""

    def __init__(self, d_model: int, vocab: int, softcap: float = 0.0, bias: bool = False,
                 scale: float = 1.0):
        super().__init__(d_model, vocab, bias=bias)
        if bias:
            nn.init.zeros_(self.bias)
        self.softcap = float(softcap)
        self.scale = float(scale)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        logits = super().forward(x if self.scale == 1.0 else x * self.scale)
        if not self.softcap:
            return logits
        return torch.tanh(logits / self.softcap) * self.softcap


def _share_position_bias(attentions: list) -> None:
    """T5: every self-attention of a stack reads the relative position bias of the stack's first one."""
    if attentions and attentions[0].rel_bias is not None:
        for attn in attentions:
            attn.share_position_bias(attentions[0])


class Encoder(nn.Module):
    def __init__(self, cfg: ModelConfig, tokens: nn.Embedding):
        super().__init__()
        self.embed = Embedder(cfg, tokens, "L_src")
        self.blocks = nn.ModuleList(EncoderBlock(cfg, i) for i in range(cfg.n_enc_layers))
        _share_position_bias([b.attn for b in self.blocks])
        # Pre-LN leaves the residual stream un-normalised, so it needs one last norm.
        self.final_norm = make_norm(cfg) if cfg.norm_first else nn.Identity()
        self.hook_out = HookPoint()  # [batch, src_pos, d_model], the memory cross-attention reads

    def forward(self, src: torch.Tensor, src_pad: torch.Tensor | None) -> torch.Tensor:
        x = self.embed(src)
        for i, block in enumerate(self.blocks):
            x = block(x, src_pad)
            progress.step(i + 1, len(self.blocks))
        return self.hook_out(self.final_norm(x))


class Decoder(nn.Module):
    def __init__(self, cfg: ModelConfig, tokens: nn.Embedding):
        super().__init__()
        self.embed = Embedder(cfg, tokens, "L_tgt")
        self.blocks = nn.ModuleList(DecoderBlock(cfg, i) for i in range(cfg.n_dec_layers))
        _share_position_bias([b.self_attn for b in self.blocks])
        self.final_norm = make_norm(cfg) if cfg.norm_first else nn.Identity()
        self.hook_out = HookPoint()  # [batch, tgt_pos, d_model]
        # Set only by model/run/interventions.py, for edits that let a position depend on later ones (no
        # causal mask, softmax over queries, a head's mean over positions): cached keys and values of
        # earlier positions would be stale, so incremental decoding recomputes the whole prefix.
        self.recompute = False
        # Longrope (Phi-3): once a continued sequence passes cfg.rope_switch_len, every position is
        # rotated with the long factors, so the cache built with the short ones is dropped and the
        # whole sequence computed again (as transformers' Phi-3 does when generating). 0 = no switch.
        self.switch_len = cfg.rope_switch_len if cfg.longrope else 0

    def forward(
        self,
        tgt: torch.Tensor,
        memory: torch.Tensor,
        tgt_pad: torch.Tensor | None,
        src_pad: torch.Tensor | None,
        caches: list[dict] | None = None,
        offset: int = 0,
    ) -> torch.Tensor:
        """Incremental decoding: caches holds one dict per block (see MultiHeadAttention), tgt only
        the new positions, and offset the position of tgt[:, 0]."""
        if caches and self.recompute:
            # The first block's cache keeps the ids so far; decoding code prunes finished rows from
            # every cache entry along the batch axis, so the ids follow.
            prev = caches[0].get("ids")
            full = tgt if prev is None else torch.cat([prev, tgt], dim=1)  # [batch, offset + new_pos]
            caches[0]["ids"] = full
            return self.forward(full, memory, tgt_pad, src_pad)[:, -tgt.shape[1] :]
        if caches and self.switch_len and offset <= self.switch_len:
            prev = caches[0].get("ids") if offset else None
            if offset and prev is None:
                raise ValueError("a longrope cache must hold the ids so far (built by this decoder)")
            full = tgt if prev is None else torch.cat([prev, tgt], dim=1)  # [batch, offset + new_pos]
            if offset and full.shape[1] > self.switch_len:
                for cache in caches:  # keys rotated with the short factors: computed again with the long
                    cache.clear()
                return self.forward(full, memory, tgt_pad, src_pad, caches)[:, -tgt.shape[1] :]
            if full.shape[1] <= self.switch_len:  # the ids are needed until the switch only
                caches[0]["ids"] = full
        y = self.embed(tgt, offset)
        for i, block in enumerate(self.blocks):
            y = block(y, memory, tgt_pad, src_pad, None if caches is None else caches[i])
            progress.step(i + 1, len(self.blocks))
        return self.hook_out(self.final_norm(y))


class Transformer(HookedModule):
    """forward(src [batch, src_pos], tgt [batch, tgt_pos]) -> logits [batch, tgt_pos, vocab].

    Padding (cfg.pad_id) in src and tgt is masked out of every attention's keys; the decoder's
    self-attention is also causal.
    """

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        self.token_embed = nn.Embedding(cfg.vocab_size, cfg.d_model)
        nn.init.normal_(self.token_embed.weight, std=cfg.d_model**-0.5)
        # A decoder-only model (cfg.decoder_only, e.g. a converted GPT-2 or Llama) has no encoder;
        # forward(ids) runs the decoder alone.
        self.encoder: Encoder | None = None if cfg.decoder_only else Encoder(cfg, self.token_embed)
        # An encoder-only model (cfg.encoder_only, e.g. a converted BERT) has neither decoder nor
        # output projection; forward(src) returns the encoder output.
        # Separate vocabularies (cfg.target_vocab_size, Marian): the decoder reads its own table, and a
        # tied output projection is that table; None = the one table serves both sides.
        self.target_embed: nn.Embedding | None = None
        if cfg.target_vocab_size is not None:
            self.target_embed = nn.Embedding(cfg.target_vocab_size, cfg.d_model)
            nn.init.normal_(self.target_embed.weight, std=cfg.d_model**-0.5)
        self.decoder: Decoder | None = None if cfg.encoder_only else Decoder(cfg, self.target_table)
        self.unembed: nn.Linear | None = None
        if not cfg.encoder_only:
            self.unembed = Unembed(cfg.d_model, cfg.output_vocab_size, cfg.logit_softcap,
                                   bias=cfg.logits_bias, scale=cfg.output_scale)
            if cfg.tie_embeddings:
                self.unembed.weight = self.target_table.weight
            self.hook_logits = HookPoint()  # [batch, tgt_pos, vocab]
        # Ids the tokenizer can name, when the embedding has more rows (checkpoints pad their vocabulary:
        # Qwen2.5 151,936 rows for 151,665 tokens). Set by the Bundle; None = every row is a token.
        # The logits keep every row (parity with the original); named_logits is what picking reads.
        self.named_vocab: int | None = None
        self.setup_hooks()
        for name, module in self.named_modules():
            if hasattr(module, "path"):
                module.path = name

    @property
    def target_table(self) -> nn.Embedding:
        """The token table the decoder reads: its own under separate vocabularies, else the shared one."""
        return self.token_embed if self.target_embed is None else self.target_embed

    def attention_layer_counts(self) -> dict[str, int]:
        return layer_counts(self.cfg)

    def padding_mask(self, ids: torch.Tensor) -> torch.Tensor | None:
        """[batch, pos] True at padding, or None when there is none (saves the masking work)."""
        pad = ids == self.cfg.pad_id
        return pad if bool(pad.any()) else None

    def attention_padding(self, ids: torch.Tensor) -> torch.Tensor | None:
        """The key padding mask attention uses: padding_mask(ids), or None for a model trained with
        cfg.mask_padding=False (the padding fault), which lets every query weigh padding keys."""
        return self.padding_mask(ids) if self.cfg.mask_padding else None

    def _target_padding(self, tgt: torch.Tensor) -> torch.Tensor | None:
        """attention_padding of the decoder's input; None under cfg.mask_target_padding=False (Marian)."""
        return self.attention_padding(tgt) if self.cfg.mask_target_padding else None

    def encode(self, src: torch.Tensor) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        """(encoder output, source padding); (None, None) for a decoder-only model, whose decoder
        has nothing to attend to but its own tokens."""
        if self.encoder is None:
            return None, None
        src_pad = self.attention_padding(src)
        return self.encoder(src, src_pad), src_pad

    def decode(self, tgt: torch.Tensor, memory: torch.Tensor, src_pad: torch.Tensor | None,
               logits_from: int = 0, caches: list[dict] | None = None) -> torch.Tensor:
        y = self.decoder(tgt, memory, self._target_padding(tgt), src_pad, caches)
        sym_y, sym_logits = ("B", "L_tgt", "d_model"), ("B", "L_tgt", "V")
        if logits_from:
            kept = y[:, logits_from:]  # [batch, out_pos, d_model]
            record_sizes(L_out=kept.shape[1])
            record("unembed", f"keep positions {logits_from} on (the rows read)", y, kept, sym_y,
                   ("B", "L_out", "d_model"))
            y, sym_y, sym_logits = kept, ("B", "L_out", "d_model"), ("B", "L_out", "V")
        logits = self.hook_logits(self.unembed(y))  # [batch, tgt_pos - logits_from, vocab]
        record("unembed", "project to vocabulary", y, logits, sym_y, sym_logits, self.hook_logits)
        return logits

    def forward(self, src: torch.Tensor, tgt: torch.Tensor | None = None,
                logits_from: int = 0, caches: list[dict] | None = None) -> torch.Tensor:
        """logits [batch, tgt_pos, vocab]; for an encoder-only model (no tgt) the encoder output
        [batch, src_pos, d_model]; for a decoder-only model forward(ids [batch, pos]) gives logits
        [batch, pos, vocab]. ``logits_from``: only the logits of positions from there on (the rows
        an analysis reads), so a long prompt does not hold a vocabulary-wide row per token. ``caches``
        (a decoder-only model, one dict per decoder block, empty): the pass also leaves every block's keys
        and values there, so decoding continues from it (model/run/one_pass.py)."""
        c = self.cfg
        if c.decoder_only:
            return self._forward_decoder_only(src, tgt, logits_from, caches)
        if caches is not None:
            raise ValueError("only a decoder-only model's pass fills a key/value cache")
        if c.encoder_only and tgt is not None:
            raise ValueError("this model is encoder-only: forward(src) takes no target")
        if not c.encoder_only and tgt is None:
            raise ValueError("an encoder-decoder model needs tgt: forward(src, tgt)")
        for name, t in (("src", src), ("tgt", tgt)):
            if t is None:
                continue
            if t.dim() != 2:
                raise ValueError(f"{name} must be [batch, pos] token ids, got shape {tuple(t.shape)}")
            if t.shape[1] > c.max_len:
                raise ValueError(f"{name} has {t.shape[1]} positions; this model takes at most {c.max_len}")
        lengths = {"L_src": src.shape[1]} | ({} if tgt is None else {"L_tgt": tgt.shape[1]})
        self.record_sizes(src.shape[0], **lengths)
        memory, src_pad = self.encode(src)
        if tgt is None:
            return memory  # [batch, src_pos, d_model]
        return self.decode(tgt, memory, src_pad, logits_from)

    def _forward_decoder_only(self, ids: torch.Tensor, extra: torch.Tensor | None,
                              logits_from: int = 0, caches: list[dict] | None = None) -> torch.Tensor:
        c = self.cfg
        if extra is not None:
            raise ValueError("this model is decoder-only: forward(ids) takes one token tensor")
        if ids.dim() != 2:
            raise ValueError(f"ids must be [batch, pos] token ids, got shape {tuple(ids.shape)}")
        if ids.shape[1] > c.max_len:
            raise ValueError(f"ids has {ids.shape[1]} positions; this model takes at most {c.max_len}")
        self.record_sizes(ids.shape[0], L_tgt=ids.shape[1])
        return self.decode(ids, None, None, logits_from, caches)  # [batch, pos - logits_from, vocab]

    def record_sizes(self, batch: int, **lengths: int) -> None:
        """Name the shape trace's sizes of a pass over ``batch`` sequences: the model's own (d_model, heads,
        head width, d_ff, V: the logits' vocabulary) and the pass's ``lengths`` (L_src, L_tgt)."""
        c = self.cfg
        record_sizes(B=batch, d_model=c.d_model, h=c.n_heads, h_kv=c.kv_heads, d_head=c.d_head, d_ff=c.d_ff,
                     V=c.output_vocab_size, **lengths)

    def teacher_forced(self, src: torch.Tensor, tgt_in: torch.Tensor) -> torch.Tensor:
        """Logits [batch, tgt_pos, vocab] of a training pair: the decoder reads tgt_in after the encoder
        read src; a decoder-only model reads tgt_in alone (its src is empty)."""
        return self(tgt_in) if self.cfg.decoder_only else self(src, tgt_in)

    def named_logits(self, logits: torch.Tensor) -> torch.Tensor:
        """logits [..., vocab] cut to the ids the tokenizer names ([..., named_vocab]): what decoding
        (greedy, beam, sampling), top-k lists and the logit lens pick from, so no step ever chooses or
        shows a padding row of the embedding. Cutting the last axis is masking those logits to -inf:
        the softmax, argmax and top-k over the rest are the same, and every id keeps its index."""
        n = self.named_vocab
        return logits if n is None or n >= logits.shape[-1] else logits[..., :n]

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())
