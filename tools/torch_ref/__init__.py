"""The float64 PyTorch reference that tools/torch_reference.py checks LAVA against (tests/README.md), one
concept a module: safetensors (reading a dump), models, objectives (losses and evaluation), training (Adam), sparse
(sparsemax and 1.5-entmax over masked rows, the marginal over their support)."""
import torch

torch.set_default_dtype(torch.float64)  # before any module of the package creates a tensor
