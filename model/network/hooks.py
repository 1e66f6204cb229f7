"""Named hook points and `run_with_cache`.

Every interesting tensor of the forward pass flows through a `HookPoint`, an identity module.
Its name is its path in the module tree (e.g. ``encoder.blocks.0.attn.hook_pattern``), so
cache keys, saved archives and UI labels all use one naming scheme.

`HookedModule.hooks` runs functions on hook points' tensors for the duration of a block (the edit
``model.run.interventions.HookFunction`` goes through it). The functions are a setting the point reads,
not PyTorch forward hooks, so what a cache records at a point is what flows on from it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager

import torch
from torch import nn
from torch.nn.modules.module import _global_forward_hooks, _global_forward_pre_hooks

from .kinds import get_kind, hook_name


def torch_hooks_on(module: nn.Module) -> bool:
    """Whether a PyTorch forward hook would run on ``module``: its own, or one registered for every module
    (``torch.nn.modules.module.register_module_forward_hook``), which a notebook may add."""
    return bool(module._forward_hooks or module._forward_pre_hooks or _global_forward_hooks
                or _global_forward_pre_hooks)


class HookPoint(nn.Module):
    """Identity module: a place where a tensor can be observed (or edited) by a hook."""

    def __init__(self) -> None:
        super().__init__()
        self.name: str = ""
        # Set by HookedModule.hooks only (HookFn, run in order before the tensor is recorded).
        self.fns: tuple[HookFn, ...] = ()
        # run_with_cache writes here directly: cheaper than PyTorch's hook machinery on ~100 points.
        self.sink: dict[str, torch.Tensor] | None = None

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        # nothing set here (most points, most passes): the tensor as it is, without the module call's
        # machinery (a decoding step passes 14 points a block)
        if not self.fns and self.sink is None and not torch_hooks_on(self):
            return x
        return super().__call__(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for fn in self.fns:
            out = fn(x, self)
            x = x if out is None else out
        if self.sink is not None:
            self.sink[self.name] = x.detach() if x.requires_grad else x
        return x

    def extra_repr(self) -> str:
        return self.name


#: What HookedModule.hooks runs at a point: fn(tensor, point) -> the tensor that flows on (None: unchanged).
HookFn = Callable[[torch.Tensor, HookPoint], torch.Tensor | None]


# Old imports keep working; the kinds registry is the one definition.
attention_hook_name = hook_name


class ActivationCache(Mapping[str, torch.Tensor]):
    """Hook name -> tensor recorded in one forward pass, with accessors for attention."""

    def __init__(self, tensors: dict[str, torch.Tensor], n_layers: dict[str, int]):
        self._tensors = tensors
        self.n_layers = n_layers  # attention kind -> number of layers (kinds.layer_counts)

    def __getitem__(self, name: str) -> torch.Tensor:
        try:
            return self._tensors[name]
        except KeyError:
            raise KeyError(f"no hook named {name!r} in the cache") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._tensors)

    def __len__(self) -> int:
        return len(self._tensors)

    def _stacked(self, kind: str, what: str) -> torch.Tensor:
        layers = [self[hook_name(kind, i, what)] for i in range(self.n_layers[get_kind(kind).name])]
        return torch.stack(layers, dim=1)  # [batch, layer, head, query_pos, key_pos]

    def pattern(self, kind: str, layer: int | None = None, head: int | None = None, batch: int = 0):
        """Post-softmax attention weights of one sentence.

        layer=None -> [layer, head, query_pos, key_pos]; layer given -> [head, query_pos, key_pos];
        head also given -> [query_pos, key_pos].
        """
        return self._select(kind, "pattern", layer, head, batch)

    def scores(self, kind: str, layer: int | None = None, head: int | None = None, batch: int = 0):
        """Scaled, masked (-inf), pre-softmax scores; same indexing as `pattern`."""
        return self._select(kind, "scores", layer, head, batch)

    def _select(self, kind: str, what: str, layer: int | None, head: int | None, batch: int):
        if layer is None:
            if head is not None:
                raise ValueError("give a layer when selecting a head")
            return self._stacked(kind, what)[batch]
        n = self.n_layers[get_kind(kind).name]
        if not 0 <= layer < n:
            raise IndexError(f"{kind} attention has layers 0..{n - 1}, not {layer}")
        t = self[hook_name(kind, layer, what)][batch]
        return t if head is None else t[head]

    def to_numpy(self) -> dict:
        """float32 numpy copies, for archives and the UI."""
        return {k: v.detach().to(torch.float32).cpu().numpy() for k, v in self._tensors.items()}


class HookedModule(nn.Module):
    """Base for models with hook points: names them and runs them with a cache."""

    def setup_hooks(self) -> None:
        """Name every HookPoint after its module path. Call at the end of __init__."""
        self._hook_lock = threading.RLock()
        self.hook_points: dict[str, HookPoint] = {}
        for name, module in self.named_modules():
            if isinstance(module, HookPoint):
                module.name = name
                self.hook_points[name] = module

    @property
    def lock(self) -> threading.RLock:
        """Held for every hooked run: one cached model may serve many app sessions."""
        return self._hook_lock

    def hook_names(self) -> list[str]:
        return list(self.hook_points)

    def active_hook_count(self) -> int:
        """Hooks and cache sinks still attached: 0 whenever no run is in progress."""
        return sum(
            len(hp.fns) + len(hp._forward_hooks) + len(hp._forward_pre_hooks) + (hp.sink is not None)
            for hp in self.hook_points.values()
        )

    @contextmanager
    def hooks(self, fwd_hooks: list[tuple[str, HookFn]]):
        """Run fn(tensor, hook_point) -> tensor | None on the named points' tensors for the block's
        duration (several on one point: in the order given); removed on exit, also after an exception."""
        with self.lock:
            unknown = [name for name, _ in fwd_hooks if name not in self.hook_points]
            if unknown:
                raise KeyError(f"no hook point named {unknown[0]!r}")
            saved = {name: self.hook_points[name].fns for name, _ in fwd_hooks}
            try:
                for name, fn in fwd_hooks:
                    self.hook_points[name].fns += (fn,)
                yield self
            finally:
                for name, fns in saved.items():
                    self.hook_points[name].fns = fns

    def run_with_cache(
        self, *args, names_filter: Callable[[str], bool] | None = None, **kwargs
    ) -> tuple[object, ActivationCache]:
        """Run forward(*args, **kwargs), returning (output, cache of every hooked tensor).

        Hooks are removed even if the forward pass raises; tensors are detached copies.
        """
        store: dict[str, torch.Tensor] = {}
        points = [hp for n, hp in self.hook_points.items() if names_filter is None or names_filter(n)]
        with self.lock:
            try:
                # Straight into __dict__: nn.Module.__setattr__ costs microseconds per call, which
                # adds up over ~100 hook points on a small model.
                for hp in points:
                    hp.__dict__["sink"] = store
                with torch.no_grad():
                    out = self(*args, **kwargs)
            finally:
                for hp in points:
                    hp.__dict__["sink"] = None
        return out, ActivationCache(store, self.attention_layer_counts())

    def attention_layer_counts(self) -> dict[str, int]:
        """Attention kind -> layers (see model.network.kinds.layer_counts)."""
        raise NotImplementedError
